// Package openapi serves the public contract, openapi.yaml at the project
// root, as JSON at GET /api/v1/openapi.json.
//
// The document is embedded as openapi.json, converted from the YAML by
// this package's tests (go test ./shared/openapi -update), which fail
// while the two differ: a function then neither links a YAML parser (0.2
// MB of a bootstrap) nor converts at start. Checking responses against the
// document is the business of the openapitest package, kept apart so that
// its validator library never reaches the Lambda binaries.
package openapi

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"sync"

	"contentapi/shared/httpapi"
)

// document is openapi.yaml as compact JSON, its keys in the order written.
//
//go:embed openapi.json
var document []byte

// Path is where the service serves the document.
const Path = "/api/v1/openapi.json"

// cacheControl lets clients and proxies keep the document a while: it only
// changes with a deployment.
const cacheControl = "public, max-age=300"

// etag names this version of the document, for conditional requests.
var etag = sync.OnceValue(func() string {
	sum := sha256.Sum256(document)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
})

// Document returns the OpenAPI document as JSON.
func Document() []byte { return document }

// Public reports the requests the service answers without an API key:
// reading the document (GET or HEAD on Path), which then costs no
// rate-limit budget either. Any other method there still needs a key, so
// nothing a request without one does goes further than a read.
func Public(r *http.Request) bool {
	return r.URL.Path == Path && (r.Method == http.MethodGet || r.Method == http.MethodHead)
}

// Handler serves the document. It needs no API key: the application marks
// the route public. A client holding the current version (If-None-Match
// with its ETag) gets 304.
func Handler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tag := etag()
		h := w.Header()
		h.Set("ETag", tag)
		h.Set("Cache-Control", cacheControl)
		if httpapi.IfNoneMatch(r, tag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", httpapi.ContentType)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(document)
	}
}
