package doccheck_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"contentapi/shared/app"
	"contentapi/shared/local/doccheck"
)

func validator(t *testing.T) *doccheck.OpenAPIValidator {
	t.Helper()
	v, err := doccheck.NewOpenAPIValidator(app.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

const image = `{"data":{"id":1,"name":"Sunset","description":"d","resolution":"512x512","style":null,` +
	`"medium":"ink","filter":null,"negative_prompt":null,"favorite":false,"result":null,"url":null,"generation":null,` +
	`"created_at":"2026-11-21T16:48:30.000000Z","updated_at":"2026-11-21T16:48:30.000000Z"},"status":200}`

// TestOpenAPIValidatorCatchesDrift: the checks the contract tests rely on
// do fail on answers that part from the document.
func TestOpenAPIValidatorCatchesDrift(t *testing.T) {
	v := validator(t)
	ok := header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "ETag", `"1.1"`)
	tests := []struct {
		name, method, target string
		status               int
		header               http.Header
		body                 string
		wantErr              string // "" when the answer is right
	}{
		{"image", "GET", "/api/v1/images/1", 200, ok, image, ""},
		{"rate limit headers", "GET", "/api/v1/images/1", 200,
			header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "ETag", `"1.1"`,
				"X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "599", "X-RateLimit-Reset", "1795000000"), image, ""},
		{"CORS is transport", "GET", "/api/v1/images/1", 200,
			header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "ETag", `"1.1"`,
				"Access-Control-Allow-Origin", "*", "Vary", "Origin"), image, ""},
		{"HEAD", "HEAD", "/api/v1/images/1", 200, header("X-Request-Id", "r1", "ETag", `"1.1"`), "", ""},
		{"HEAD without ETag", "HEAD", "/api/v1/images/1", 200, header("X-Request-Id", "r1"), "", "ETag"},
		{"HEAD 404", "HEAD", "/api/v1/images/9", 404, header("X-Request-Id", "r1"), "", ""},
		{"HEAD 401", "HEAD", "/api/v1/images", 401, header("X-Request-Id", "r1", "WWW-Authenticate", "Bearer"), "", ""},
		{"HEAD 418", "HEAD", "/api/v1/images", 418, header("X-Request-Id", "r1"), "", ""},
		{"HEAD 304 of a list", "HEAD", "/api/v1/images", 304, header("X-Request-Id", "r1"), "", "not documented"},
		{"bounded list meta", "GET", "/api/v1/images", 200,
			header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "Link", `<http://h/x?page=1>; rel="first", <http://h/x?page=1>; rel="last"`),
			`{"data":[],"links":{"first":"http://h/x?page=1","last":"http://h/x?page=1","prev":null,"next":null},` +
				`"meta":{"current_page":1,"from":null,"last_page":1,"path":"http://h/x","per_page":10,"to":null,"total":0,"total_estimated":false,"partial":false},"status":200}`, ""},
		{"list without its bound flags", "GET", "/api/v1/images", 200,
			header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "Link", `<http://h/x?page=1>; rel="first", <http://h/x?page=1>; rel="last"`),
			`{"data":[],"links":{"first":"http://h/x?page=1","last":"http://h/x?page=1","prev":null,"next":null},` +
				`"meta":{"current_page":1,"from":null,"last_page":1,"path":"http://h/x","per_page":10,"to":null,"total":0},"status":200}`,
			"total_estimated"},
		{"planned field in an error", "POST", "/api/v1/images", 422, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1"),
			`{"message":{"generation":["The generation field is prohibited."]},"errors":{"generation":["The generation field is prohibited."]},"status":422}`, ""},
		{"preflight", "OPTIONS", "/api/v1/anything", 204, header(), "", ""},
		{"preflight of a listed path", "OPTIONS", "/api/v1/images/1", 204, header("X-Request-Id", "r1", "Allow", "GET, POST",
			"Access-Control-Allow-Methods", "GET, POST", "Access-Control-Allow-Headers", "Authorization", "Access-Control-Max-Age", "86400"), "", ""},
		{"preflight without its methods", "OPTIONS", "/api/v1/images/1", 204, header("X-Request-Id", "r1", "Allow", "GET, POST",
			"Access-Control-Allow-Headers", "Authorization", "Access-Control-Max-Age", "86400"), "", "Access-Control-Allow-Methods"},
		{"extra field", "GET", "/api/v1/images/1", 200, ok, strings.Replace(image, `"url":null`, `"url":null,"x":1`, 1), "additional properties"},
		{"missing field", "GET", "/api/v1/images/1", 200, ok, strings.Replace(image, `"url":null,`, ``, 1), "url"},
		{"bad enum", "GET", "/api/v1/images/1", 200, ok, strings.Replace(image, `"medium":"ink"`, `"medium":"oil"`, 1), "medium"},
		{"favorite as 1", "GET", "/api/v1/images/1", 200, ok, strings.Replace(image, `"favorite":false`, `"favorite":1`, 1), "favorite"},
		{"bad time", "GET", "/api/v1/images/1", 200, ok, strings.Replace(image, `16:48:30.000000Z","updated`, `16:48:30Z","updated`, 1), "created_at"},
		{"wrong envelope status", "GET", "/api/v1/images/1", 200, ok, strings.Replace(image, `"status":200`, `"status":201`, 1), "status"},
		{"missing ETag", "GET", "/api/v1/images/1", 200, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1"), image, "ETag"},
		{"missing X-Request-Id", "GET", "/api/v1/images/1", 200, header("Content-Type", doccheck.ContentType, "ETag", `"1.1"`), image, "X-Request-Id"},
		{"bad header value", "GET", "/api/v1/images/1", 200,
			header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "ETag", `"1.1"`, "X-RateLimit-Remaining", "many"), image, "X-RateLimit-Remaining"},
		{"undeclared header", "GET", "/api/v1/images/1", 200,
			header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "ETag", `"1.1"`, "X-Search-Partial", "true"), image, "X-Search-Partial"},
		{"charset missing", "GET", "/api/v1/images/1", 200,
			header("Content-Type", "application/json", "X-Request-Id", "r1", "ETag", `"1.1"`), image, "Content-Type"},
		{"undocumented status", "GET", "/api/v1/images/1", 418, ok, `{"message":"x","status":418}`, "not documented"},
		{"quota", "POST", "/api/v1/documents", 429, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "Retry-After", "3600"),
			`{"message":"The monthly limit of 500 documents is reached.","code":"quota_exceeded","status":429}`, ""},
		{"quota on a delete", "DELETE", "/api/v1/documents/1", 429, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "Retry-After", "3600"),
			`{"message":"The monthly limit of 500 documents is reached.","code":"quota_exceeded","status":429}`, "message"},
		{"304", "GET", "/api/v1/images/1", 304, header("X-Request-Id", "r1", "ETag", `"1.1"`), "", ""},
		{"304 without ETag", "GET", "/api/v1/images/1", 304, header("X-Request-Id", "r1"), "", "ETag"},
		{"304 with a body", "GET", "/api/v1/images/1", 304, ok, image, "no body"},
		{"404", "GET", "/api/v1/images/9", 404, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1"),
			`{"message":"Resource not found.","status":404}`, ""},
		{"404 reworded", "GET", "/api/v1/images/9", 404, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1"),
			`{"message":"Not found","status":404}`, "message"},
		{"401 without WWW-Authenticate", "GET", "/api/v1/images", 401, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1"),
			`{"message":"Unauthenticated.","status":401}`, "WWW-Authenticate"},
		{"422", "POST", "/api/v1/images", 422, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1"),
			`{"message":{"style":["The selected style is invalid."]},"errors":{"style":["The selected style is invalid."]},"status":422}`, ""},
		{"422 flat", "POST", "/api/v1/images", 422, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1"),
			`{"message":"The given data was invalid.","errors":{"style":["bad"]},"status":422}`, "message"},
		{"unknown path 404", "GET", "/api/v1/nothing", 404, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1"),
			`{"message":"Resource not found.","status":404}`, ""},
		{"unknown path 200", "GET", "/api/v1/nothing", 200, ok, image, "not in the document"},
		{"405", "DELETE", "/api/v1/images", 405,
			header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "Allow", "GET, HEAD, OPTIONS, POST"),
			`{"message":"Method not allowed.","status":405}`, ""},
		{"405 without Allow", "DELETE", "/api/v1/images", 405, header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1"),
			`{"message":"Method not allowed.","status":405}`, "Allow"},
		{"list", "GET", "/api/v1/documents?template_id=2&page=3", 200,
			header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "X-Search-Partial", "true",
				"Link", `<http://h/api/v1/documents?template_id=2&page=1>; rel="first", <http://h/api/v1/documents?template_id=2&page=2>; rel="prev", <http://h/api/v1/documents?template_id=2&page=1>; rel="last"`),
			`{"data":[],"links":{"first":"http://h/api/v1/documents?template_id=2&page=1","last":"http://h/api/v1/documents?template_id=2&page=1",` +
				`"prev":"http://h/api/v1/documents?template_id=2&page=2","next":null},` +
				`"meta":{"current_page":3,"from":null,"last_page":1,"path":"http://h/api/v1/documents","per_page":10,"to":null,"total":0,"total_estimated":false,"partial":false},"status":200}`, ""},
		{"list without meta", "GET", "/api/v1/documents", 200,
			header("Content-Type", doccheck.ContentType, "X-Request-Id", "r1", "Link", `<http://h/x?page=1>; rel="first", <http://h/x?page=1>; rel="last"`),
			`{"data":[],"links":{"first":"http://h/x?page=1","last":"http://h/x?page=1","prev":null,"next":null},"status":200}`, "meta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.ValidateResponse(tt.method, tt.target, tt.status, tt.header, []byte(tt.body))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("want an error about %q, got none", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("want an error about %q, got %v", tt.wantErr, err)
			}
		})
	}
}

func TestOpenAPIValidatorRequests(t *testing.T) {
	v := validator(t)
	auth := func(kv ...string) http.Header {
		return header(append([]string{"Authorization", "Bearer ck_x"}, kv...)...)
	}
	form := "application/x-www-form-urlencoded"
	tests := []struct {
		name, method, target string
		header               http.Header
		body                 string
		wantErr              bool
	}{
		{"form create", "POST", "/api/v1/images", auth("Content-Type", form), "name=Sun&description=d&resolution=512x512&style=anime", false},
		{"json create", "POST", "/api/v1/documents", auth("Content-Type", "application/json"), `{"name":"D","prompt":"p","creativity":0.25,"template_id":9}`, false},
		{"form favorite", "PATCH", "/api/v1/images/3", auth("Content-Type", form, "If-Match", `"3.1"`), "favorite=0", false},
		{"list", "GET", "/api/v1/images?per_page=25&page=2&favorite=true&sort_by=name&sort=asc", auth(), "", false},
		{"document", "GET", "/api/v1/openapi.json", header(), "", false},
		{"no key", "GET", "/api/v1/images", header(), "", true},
		{"bad enum", "POST", "/api/v1/images", auth("Content-Type", form), "name=Sun&description=d&resolution=2048x2048", true},
		{"bad per_page", "GET", "/api/v1/images?per_page=7", auth(), "", true},
		{"bad template", "GET", "/api/v1/documents?template_id=53", auth(), "", true},
		{"long name", "POST", "/api/v1/images", auth("Content-Type", "application/json"), `{"name":"` + strings.Repeat("é", 129) + `","description":"d","resolution":"256x256"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.ValidateRequest(tt.method, tt.target, tt.header, []byte(tt.body))
			if (err != nil) != tt.wantErr {
				t.Fatalf("wantErr %v, got %v", tt.wantErr, err)
			}
		})
	}
}

func TestOpenAPIValidatorOperations(t *testing.T) {
	v := validator(t)
	ops := v.Operations()
	if !slices.IsSorted(ops) || !slices.Contains(ops, "DELETE /api/v1/documents/{id}") || !slices.Contains(ops, "GET /api/v1/openapi.json") {
		t.Fatalf("operations: %v", ops)
	}
	want := []string{} // every operation is served now
	if planned := v.PlannedOperations(); !slices.Equal(planned, want) {
		t.Errorf("planned operations: %v, want %v", planned, want)
	}
	for target, want := range map[string]string{
		"GET /api/v1/images/12?x=1":        "GET /api/v1/images/{id}",
		"HEAD /api/v1/images/12":           "HEAD /api/v1/images/{id}",
		"GET /api/v1/openapi.json":         "GET /api/v1/openapi.json",
		"OPTIONS /api/v1/usage":            "OPTIONS /api/v1/usage",
		"POST /api/v1/images/1/regenerate": "POST /api/v1/images/{id}/regenerate",
	} {
		method, target, _ := strings.Cut(target, " ")
		if got, err := v.Operation(method, target); err != nil || got != want {
			t.Errorf("Operation(%s %s) = %q, %v; want %q", method, target, got, err, want)
		}
	}
	if _, err := v.Operation("GET", "/api/v1/nothing"); err == nil {
		t.Error("an unknown path has an operation")
	}
}

// TestOpenAPIValidatorDocument: the document passes, and the check is not
// a formality: a wrong type, an example that breaks its schema and a
// response without a description each fail it.
func TestOpenAPIValidatorDocument(t *testing.T) {
	if err := validator(t).ValidateDocument(); err != nil {
		t.Fatal(err)
	}
	doc := string(app.OpenAPIDocument())
	for name, edit := range map[string][2]string{
		"wrong type":     {`"favorite":{"type":"boolean"}`, `"favorite":{"type":"bool"}`},
		"bad example":    {`"style":"digital_art"`, `"style":"oil"`},
		"no description": {`"description":"The image and its picture are gone (or, for a repeated ` + "`Idempotency-Key`" + `, the first delete's answer replayed).",`, ``},
		"not 3.1":        {`"openapi":"3.1.0"`, `"openapi":"3.0.3"`},
		"broken ref":     {`"#/components/schemas/ImageList"`, `"#/components/schemas/ImageLis"`},
		"bad default":    {`"enum":[10,25,50,100],"x-go-type":"int","default":10`, `"enum":[10,25,50,100],"x-go-type":"int","default":7`},
		"bad pattern":    {`"pattern":"^[A-Za-z0-9_-]*$"`, `"pattern":"^[A-Za-z0-9_-]{0,1001}$"`},
	} {
		if !strings.Contains(doc, edit[0]) {
			t.Fatalf("%s: the document no longer holds %s", name, edit[0])
		}
		v, err := doccheck.NewOpenAPIValidator([]byte(strings.Replace(doc, edit[0], edit[1], 1)))
		if err == nil {
			err = v.ValidateDocument()
		}
		if err == nil {
			t.Errorf("%s: the document still passes", name)
		}
	}
}
