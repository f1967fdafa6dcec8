// Package contentapi holds what belongs to the project as a whole rather
// than to one of its packages: the public contract as an OpenAPI document.
package contentapi

import _ "embed"

// OpenAPIYAML is openapi.yaml, the binding description of the public API.
// shared/app serves it as JSON (openapi.go).
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
