package lambdalocal

import (
	"reflect"
	"strings"
	"testing"

	"contentapi/shared/local/sam"
)

func routes(keys ...string) []sam.Route {
	var rs []sam.Route
	for _, k := range keys {
		r := sam.Route{Function: "F", Event: k, Method: "ANY", Path: sam.DefaultRoute}
		if k != sam.DefaultRoute {
			r.Method, r.Path, _ = strings.Cut(k, " ")
		}
		rs = append(rs, r)
	}
	return rs
}

func TestRouterPrecedence(t *testing.T) {
	// The example set of AWS's "Routing API requests" section, and more.
	r := NewRouter(routes(
		"GET /pets/dog/1",
		"GET /pets/dog/{id}",
		"GET /pets/{proxy+}",
		"ANY /{proxy+}",
		"ANY /pets/{id}",
		"POST /pets",
		"GET /a/{x}/c",
		"GET /a/b/{y}",
		sam.DefaultRoute,
	))
	tests := []struct {
		method, path string
		key          string
		params       map[string]string
	}{
		{"GET", "/pets/dog/1", "GET /pets/dog/1", nil},
		{"GET", "/pets/dog/2", "GET /pets/dog/{id}", map[string]string{"id": "2"}},
		{"GET", "/pets/cat/1", "GET /pets/{proxy+}", map[string]string{"proxy": "cat/1"}},
		{"POST", "/pets/cat/1", "ANY /{proxy+}", map[string]string{"proxy": "pets/cat/1"}},
		// The method outranks the greedy variable...
		{"GET", "/pets/cat", "GET /pets/{proxy+}", map[string]string{"proxy": "cat"}},
		// ...and among ANY routes, no greedy variable outranks one.
		{"POST", "/pets/cat", "ANY /pets/{id}", map[string]string{"id": "cat"}},
		{"POST", "/pets", "POST /pets", nil},
		{"DELETE", "/pets", "ANY /{proxy+}", map[string]string{"proxy": "pets"}},
		// A literal segment further left wins.
		{"GET", "/a/b/c", "GET /a/b/{y}", map[string]string{"y": "c"}},
		// Variables take the decoded segment; %2F does not split one.
		{"GET", "/pets/dog/a%20b", "GET /pets/dog/{id}", map[string]string{"id": "a b"}},
		{"GET", "/pets/dog/a%2Fb", "GET /pets/dog/{id}", map[string]string{"id": "a/b"}},
		// A variable never matches an empty segment.
		{"GET", "/pets/dog/", "GET /pets/{proxy+}", map[string]string{"proxy": "dog/"}},
		{"GET", "/", sam.DefaultRoute, nil},
		// Paths are case-sensitive.
		{"PUT", "/Pets", "ANY /{proxy+}", map[string]string{"proxy": "Pets"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			m, ok := r.Match(tt.method, tt.path)
			if !ok {
				t.Fatal("no match")
			}
			if m.Route.Key() != tt.key || !reflect.DeepEqual(m.PathParams, tt.params) {
				t.Errorf("Match = %s %v, want %s %v", m.Route.Key(), m.PathParams, tt.key, tt.params)
			}
		})
	}
}

func TestRouterWithoutDefault(t *testing.T) {
	r := NewRouter(routes("GET /items/{id}"))
	for _, c := range [][2]string{{"GET", "/items"}, {"POST", "/items/1"}, {"GET", "/items/1/x"}, {"GET", "/items/"}} {
		if m, ok := r.Match(c[0], c[1]); ok {
			t.Errorf("%s %s matched %s; API Gateway would answer its own 404", c[0], c[1], m.Route.Key())
		}
	}
}

func TestRouterOnProjectRoutes(t *testing.T) {
	r := NewRouter(projectTemplate(t).Routes())
	tests := []struct {
		method, path, event string
		params              map[string]string
	}{
		{"GET", "/api/v1/images", "ListImages", nil},
		{"POST", "/api/v1/images", "CreateImage", nil},
		{"GET", "/api/v1/images/7", "GetImage", map[string]string{"id": "7"}},
		{"PUT", "/api/v1/images/7", "UpdateImage", map[string]string{"id": "7"}},
		{"PATCH", "/api/v1/images/7", "PatchImage", map[string]string{"id": "7"}},
		{"DELETE", "/api/v1/images/abc", "DeleteImage", map[string]string{"id": "abc"}},
		{"POST", "/api/v1/images/7", "ImageAnyMethod", map[string]string{"id": "7"}},
		{"DELETE", "/api/v1/images", "ImagesAnyMethod", nil},
		{"OPTIONS", "/api/v1/documents", "DocumentsAnyMethod", nil},
		{"GET", "/api/v1/documents/3", "GetDocument", map[string]string{"id": "3"}},
		{"POST", "/api/v1/documents/3", "DocumentAnyMethod", map[string]string{"id": "3"}},
		{"GET", "/api/v1/openapi.json", "OpenApiDocument", nil},
		{"GET", "/api/v1/images/7/extra", "DefaultRoute", nil},
		{"GET", "/", "DefaultRoute", nil},
		{"GET", "/api/v1/Images", "DefaultRoute", nil},
	}
	for _, tt := range tests {
		m, ok := r.Match(tt.method, tt.path)
		if !ok || m.Route.Event != tt.event || !reflect.DeepEqual(m.PathParams, tt.params) {
			t.Errorf("%s %s -> %s %v (ok=%v), want %s %v", tt.method, tt.path, m.Route.Event, m.PathParams, ok, tt.event, tt.params)
		}
	}
}

// projectTemplate is the project's own template.yaml.
func projectTemplate(t *testing.T) *sam.Template {
	t.Helper()
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}
