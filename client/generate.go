package client

// The client is generated from openapi.yaml: `make generate` runs the line
// below, with the generator at a pinned version, and TestClientIsGenerated
// fails when client.gen.go no longer matches the document.
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml -o client.gen.go ../openapi.yaml
