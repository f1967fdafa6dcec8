// Package openapi serves the public contract, openapi.yaml at the project
// root, as JSON at GET /api/v1/openapi.json.
//
// The YAML is embedded in the binary and turned into JSON on first use
// rather than at init, so a cold start that never serves the document does
// not pay for it. Checking responses against the document is the business
// of the openapitest package, kept apart so that its validator library never
// reaches the Lambda binaries.
package openapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"gopkg.in/yaml.v3"

	"contentapi"
	"contentapi/shared/httpapi"
)

// Path is where the service serves the document.
const Path = "/api/v1/openapi.json"

// cacheControl lets clients and proxies keep the document a while: it only
// changes with a deployment.
const cacheControl = "public, max-age=300"

type converted struct {
	json []byte
	etag string
	err  error
}

var load = sync.OnceValue(func() converted {
	doc, err := toJSON(contentapi.OpenAPIYAML)
	if err != nil {
		return converted{err: fmt.Errorf("openapi.yaml: %w", err)}
	}
	sum := sha256.Sum256(doc)
	return converted{json: doc, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
})

// Document returns the OpenAPI document as JSON. The embedded YAML is
// checked by this package's tests, so failing to convert it is a defect of
// the build, and Document panics on it.
func Document() []byte {
	c := load()
	if c.err != nil {
		panic(c.err)
	}
	return c.json
}

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
		c := load()
		if c.err != nil {
			httpapi.WriteError(w, r, c.err)
			return
		}
		h := w.Header()
		h.Set("ETag", c.etag)
		h.Set("Cache-Control", cacheControl)
		if httpapi.IfNoneMatch(r, c.etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", httpapi.ContentType)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(c.json)
	}
}

// toJSON converts a YAML document to compact JSON, keeping the order of
// mapping keys (encoding/json would sort a map's) so the JSON reads like the
// YAML: openapi and info first, paths in the order they were written.
// Aliases are expanded; keys must be strings, as JSON's are.
func toJSON(src []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, err
	}
	if root.Kind == 0 {
		return nil, errors.New("empty document")
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &root, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// maxDepth bounds alias expansion: an alias cycle would never end.
const maxDepth = 100

func writeJSON(buf *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("line %d: nested deeper than %d levels", n.Line, maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		return writeJSON(buf, n.Content[0], depth+1)
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias, depth+1)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return fmt.Errorf("line %d: a mapping key must be a string (merge keys are not supported)", k.Line)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k.Value)
			buf.WriteByte(':')
			if err := writeJSON(buf, v, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, v := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, v, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	default:
		return fmt.Errorf("line %d: unexpected YAML node kind %d", n.Line, n.Kind)
	}
	return nil
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!binary":
		// A timestamp stays the text it was written as.
		writeString(buf, n.Value)
		return nil
	case "!!null":
		buf.WriteString("null")
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	buf.Write(b)
	return nil
}

// writeString writes s as a JSON string, leaving <, > and & as they are
// (encoding/json's default escapes them for HTML, which JSON does not need).
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}
