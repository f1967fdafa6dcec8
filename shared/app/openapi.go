// GET /api/v1/openapi.json: the public contract, openapi.yaml at the
// project root, served as JSON by the first resource's function. It was
// package openapi, too small to stand alone.
//
// The document is embedded as openapi.json, converted from the YAML by
// this package's tests (make generate runs go test ./shared/app -run
// TestOpenAPIJSONIsTheYAML -update), which fail while the two differ: a
// function then neither links a YAML parser (0.2 MB of a bootstrap) nor
// converts at start. Checking responses against the document is the
// business of a package of the local stack (doccheck), kept apart so
// that its validator library never reaches the Lambda binaries.

package app

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"sync"

	"contentapi/shared/httpapi"
)

// openAPIJSON is openapi.yaml as compact JSON, its keys in the order written.
//
//go:embed openapi.json
var openAPIJSON []byte

// OpenAPIPath is where the service serves the document.
const OpenAPIPath = "/api/v1/openapi.json"

// openAPICacheControl lets clients and proxies keep the document a while:
// it only changes with a deployment.
const openAPICacheControl = "public, max-age=300"

// openAPIETag names this version of the document, for conditional requests.
var openAPIETag = sync.OnceValue(func() string {
	sum := sha256.Sum256(openAPIJSON)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
})

// OpenAPIDocument returns the OpenAPI document as JSON.
func OpenAPIDocument() []byte { return openAPIJSON }

// openAPIPublic reports the requests the service answers without an API
// key: reading the document (GET or HEAD on OpenAPIPath), which then costs
// no rate-limit budget either. Any other method there still needs a key,
// so nothing a request without one does goes further than a read.
func openAPIPublic(r *http.Request) bool {
	return r.URL.Path == OpenAPIPath && (r.Method == http.MethodGet || r.Method == http.MethodHead)
}

// OpenAPIRoute serves the document. It needs no API key: the application
// marks the route public (openAPIPublic). A client holding the current
// version (If-None-Match with its ETag) gets 304.
func OpenAPIRoute() httpapi.Route {
	return httpapi.Route{Method: http.MethodGet, Pattern: OpenAPIPath, Handler: func(w http.ResponseWriter, r *http.Request) {
		tag := openAPIETag()
		h := w.Header()
		h.Set("ETag", tag)
		h.Set("Cache-Control", openAPICacheControl)
		if httpapi.IfNoneMatch(r, tag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", httpapi.ContentType)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(openAPIJSON)
	}}
}
