package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"contentapi"
	"contentapi/shared/httpapi"
)

// TestOpenAPIDocumentIsTheYAML: the JSON served is openapi.yaml, value for
// value, with its keys in the order written.
func TestOpenAPIDocumentIsTheYAML(t *testing.T) {
	doc := OpenAPIDocument()
	var fromJSON any
	if err := json.Unmarshal(doc, &fromJSON); err != nil {
		t.Fatalf("Document is not JSON: %v", err)
	}
	var fromYAML any
	if err := yaml.Unmarshal(contentapi.OpenAPIYAML, &fromYAML); err != nil {
		t.Fatal(err)
	}
	// Through encoding/json, so that numbers compare as JSON numbers.
	b, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatalf("openapi.yaml holds something JSON cannot: %v", err)
	}
	var want any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON, want) {
		t.Fatal("OpenAPIDocument() differs from openapi.yaml: run make generate")
	}
	if !bytes.HasPrefix(doc, []byte(`{"openapi":"3.1.`)) {
		t.Errorf("OpenAPIDocument() does not start with the openapi version: %.40s", doc)
	}
	if &OpenAPIDocument()[0] != &doc[0] {
		t.Error("OpenAPIDocument() converts again on every call")
	}
}

func TestOpenAPIToJSON(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"order kept", "b: 1\na: 2\nc: {z: true, y: null}", `{"b":1,"a":2,"c":{"z":true,"y":null}}`},
		{"scalars", "- 0.25\n- 1e3\n- 007\n- '1'\n- yes\n- ~\n- 2026-11-21\n- 999999999999",
			`[0.25,1000,7,"1","yes",null,"2026-11-21",999999999999]`},
		{"text unescaped for HTML", `s: "<a href=\"x\">&</a> é \u0001"`, `{"s":"<a href=\"x\">&</a> é \u0001"}`},
		{"aliases expanded", "a: &x {k: [1, 2]}\nb: *x", `{"a":{"k":[1,2]},"b":{"k":[1,2]}}`},
		{"block text", "d: |\n  line 1\n  line 2\n", `{"d":"line 1\nline 2\n"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := yamlToJSON([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "a: 1\n: 2\n1: x", "? [a]\n: 1", "a: &x {k: 1}\nb: {<<: *x}", "a: [1", "x: .inf"} {
		if got, err := yamlToJSON([]byte(bad)); err == nil {
			t.Errorf("yamlToJSON(%q) = %s, want an error", bad, got)
		}
	}
}

func TestOpenAPIRoute(t *testing.T) {
	serve := func(method string, header ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, OpenAPIPath, nil)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		OpenAPIRoute().Handler.ServeHTTP(w, r)
		return w
	}
	w := serve(http.MethodGet)
	if w.Code != 200 || w.Header().Get("Content-Type") != httpapi.ContentType || !bytes.Equal(w.Body.Bytes(), OpenAPIDocument()) {
		t.Fatalf("GET: %d %v %.80s", w.Code, w.Header(), w.Body.String())
	}
	etag := w.Header().Get("ETag")
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
		t.Errorf("ETag %q", etag)
	}
	if cc := w.Header().Get("Cache-Control"); !strings.Contains(cc, "max-age=") {
		t.Errorf("Cache-Control %q", cc)
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		w := serve(http.MethodGet, "If-None-Match", inm)
		if w.Code != http.StatusNotModified || w.Body.Len() != 0 || w.Header().Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d %v %q", inm, w.Code, w.Header(), w.Body.String())
		}
	}
	if w := serve(http.MethodGet, "If-None-Match", `"other"`); w.Code != 200 {
		t.Errorf("a stale If-None-Match got %d", w.Code)
	}
}

func TestOpenAPIPublic(t *testing.T) {
	for _, tt := range []struct {
		method, target string
		public         bool
	}{
		{"GET", OpenAPIPath, true},
		{"HEAD", OpenAPIPath, true},
		{"GET", OpenAPIPath + "?x=1", true},
		{"POST", OpenAPIPath, false},
		{"DELETE", OpenAPIPath, false},
		{"GET", "/api/v1/images", false},
		{"GET", OpenAPIPath + "/x", false},
	} {
		if got := openAPIPublic(httptest.NewRequest(tt.method, tt.target, nil)); got != tt.public {
			t.Errorf("openAPIPublic(%s %s) = %v", tt.method, tt.target, got)
		}
	}
}
