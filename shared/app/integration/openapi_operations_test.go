package integration_test

import (
	"bytes"
	"contentapi/shared/app"
	"encoding/json"
	"fmt"
	"maps"
	"mime/multipart"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEveryOperationTakesWhatTheDocumentAllows: over every operation of
// the document, the requests its own schemas and examples make (every
// example body in every media type; each query parameter at each value its
// schema lists, at its bounds and at its example; each header at its
// example) are requests the document allows, and the service takes them:
// no 400, 413, 415 or 422, nothing of 5xx. A client generated from the
// document therefore sends nothing the service refuses as malformed.
// Every answer is valid against the document too. The agreement test
// (TestOpenAPIRequestsAgree) goes through each value class of the
// resources' fields; this goes through every operation.
func TestEveryOperationTakesWhatTheDocumentAllows(t *testing.T) {
	g := newGenStack(t, genOptions{configure: func(cfg *app.Config) { withWebhooks(t)(cfg) }})
	s := g.stack
	d := loadJSONDocument(t)
	v := contractValidator(t)
	key := s.writeKey

	// A record of each resource for the operations on one, and one more
	// for each DELETE, which comes last.
	ids := map[string]string{}
	for _, r := range []struct{ name, body string }{
		{"images", "name=Fixture&description=A+picture&resolution=256x256"},
		{"documents", "name=Fixture&prompt=Write+about+tea"},
		{"voices", "name=Fixture&guide=Short+sentences."},
	} {
		for _, purpose := range []string{"", "delete"} {
			resp := s.do(request{method: "POST", path: "/api/v1/" + r.name, key: key, contentType: formType, body: r.body})
			expect(t, resp, 201)
			ids[r.name+purpose] = fmt.Sprint(resp.data()["id"])
		}
	}
	for _, purpose := range []string{"", "delete"} {
		resp := s.do(request{method: "POST", path: "/api/v1/webhooks", key: key, contentType: formType, body: "url=https%3A%2F%2Fhooks.example.com%2Fops"})
		expect(t, resp, 201)
		ids["webhooks"+purpose] = fmt.Sprint(resp.data()["id"])
	}
	// A delivery in the endpoint's log, for the operations on one (pending:
	// this stack sends nothing).
	hookLog := "/api/v1/webhooks/" + ids["webhooks"]
	expect(t, s.do(request{method: "POST", path: hookLog + "/test", key: key}), 202)
	logged := s.do(request{method: "GET", path: hookLog + "/deliveries", key: key})
	expect(t, logged, 200)
	delivery, _ := logged.list()[0].(map[string]any)

	type operation struct {
		method, path string
		op           map[string]any
		params       []map[string]any
	}
	var ops []operation
	paths := d.at("paths")
	for path, item := range paths {
		item, _ := item.(map[string]any)
		shared, _ := item["parameters"].([]any)
		for _, method := range []string{"get", "head", "post", "put", "patch", "delete"} {
			op, ok := item[method].(map[string]any)
			if !ok || op["x-planned"] == true {
				continue
			}
			own, _ := op["parameters"].([]any)
			var params []map[string]any
			for _, p := range append(slices.Clone(shared), own...) {
				params = append(params, d.resolve(p))
			}
			ops = append(ops, operation{strings.ToUpper(method), path, op, params})
		}
	}
	// Deletes last, so that the other operations find their records.
	slices.SortStableFunc(ops, func(a, b operation) int {
		if del := (a.method == "DELETE") != (b.method == "DELETE"); del {
			if a.method == "DELETE" {
				return 1
			}
			return -1
		}
		return strings.Compare(a.method+" "+a.path, b.method+" "+b.path)
	})

	sent, idem := 0, 0
	send := func(name string, rq request) {
		t.Helper()
		// An Idempotency-Key of its own per request: the same key with
		// another request is refused for what the service saw before.
		if _, ok := rq.header["Idempotency-Key"]; ok {
			idem++
			rq.header["Idempotency-Key"] = fmt.Sprintf("ops-%d", idem)
		}
		if err := v.ValidateRequest(rq.method, rq.path, requestHeader(rq), []byte(rq.body)); err != nil {
			t.Errorf("%s: the document refuses what it says itself: %v", name, err)
			return
		}
		r := s.do(rq)
		sent++
		switch {
		case r.Status >= 500, slices.Contains([]int{400, 413, 415, 422}, r.Status):
			t.Errorf("%s: the document allows it, the service answers %d: %.300s", name, r.Status, r.Raw)
		case r.Status == 404:
			t.Errorf("%s: 404; the test's fixtures should give every path a record: %.200s", name, r.Raw)
		}
		if err := v.ValidateResponse(rq.method, rq.path, r.Status, r.Header, []byte(r.Raw)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	for _, o := range ops {
		path := o.path
		if strings.Contains(path, "{id}") {
			resource := strings.Split(strings.TrimPrefix(path, "/api/v1/"), "/")[0]
			purpose := ""
			if o.method == "DELETE" {
				purpose = "delete"
			}
			id, ok := ids[resource+purpose]
			if !ok {
				t.Errorf("%s %s: no fixture for %s", o.method, path, resource)
				continue
			}
			path = strings.Replace(path, "{id}", id, 1)
			path = strings.Replace(path, "{delivery_id}", fmt.Sprint(delivery["id"]), 1)
		}
		base := request{method: o.method, path: path, key: key, header: map[string]string{}}
		// The headers at their examples, but the conditional ones, whose
		// answer depends on the record's state (304, 412).
		var query []map[string]any
		for _, p := range o.params {
			switch p["in"] {
			case "header":
				if name, _ := p["name"].(string); name != "If-Match" && name != "If-None-Match" {
					if ex, ok := p["example"]; ok {
						base.header[name] = fmt.Sprint(ex)
					}
				}
			case "query":
				// A cursor is the service's to make (links.next), never
				// a client's: one it did not make is 422 for what it
				// says, which its shape cannot.
				if p["name"] != "cursor" {
					query = append(query, p)
				}
			}
		}
		name := o.method + " " + o.path
		bodies := requestBodies(t, d, o.op)
		if len(bodies) == 0 {
			send(name, base)
		}
		for _, b := range bodies {
			rq := base
			rq.header = maps.Clone(base.header)
			rq.contentType, rq.body = b.contentType, b.body
			send(name+" "+b.name, rq)
		}
		for _, p := range query {
			pname, _ := p["name"].(string)
			for _, value := range schemaValues(d, p) {
				rq := base
				rq.header = maps.Clone(base.header)
				rq.path = path + "?" + url.Values{pname: {value}}.Encode()
				send(fmt.Sprintf("%s ?%s=%s", name, pname, value), rq)
			}
		}
	}
	if sent < 100 {
		t.Errorf("only %d requests sent: the table lost its operations", sent)
	}
	t.Logf("%d operations, %d requests", len(ops), sent)
}

// schemaValues are the values of a parameter a client may send, as text:
// each listed value, both flags, an integer's bounds, and the example.
func schemaValues(d *jsonDocument, param map[string]any) []string {
	schema := d.resolve(param["schema"])
	var out []string
	add := func(v any) {
		if v == nil {
			return
		}
		if f, ok := v.(float64); ok {
			v = strconv.FormatFloat(f, 'f', -1, 64)
		}
		if s := fmt.Sprint(v); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if enum, ok := schema["enum"].([]any); ok {
		for _, e := range enum {
			add(e)
		}
	}
	switch schema["type"] {
	case "boolean":
		add(true)
		add(false)
	case "integer", "number":
		add(schema["minimum"])
		add(schema["maximum"])
	}
	add(param["example"])
	if examples, ok := schema["examples"].([]any); ok {
		for _, e := range examples {
			add(e)
		}
	}
	return out
}

type exampleBody struct{ name, contentType, body string }

// requestBodies are an operation's examples, each in each of its media
// types, encoded as a client sends them.
func requestBodies(t *testing.T, d *jsonDocument, op map[string]any) []exampleBody {
	t.Helper()
	rb := d.resolve(op["requestBody"])
	content, _ := rb["content"].(map[string]any)
	var out []exampleBody
	for mediaType, m := range content {
		m, _ := m.(map[string]any)
		examples, _ := m["examples"].(map[string]any)
		for exName, ex := range examples {
			value, _ := d.resolve(ex)["value"].(map[string]any)
			if value == nil {
				t.Errorf("%s example %s is not an object", mediaType, exName)
				continue
			}
			b := exampleBody{name: mediaType + " " + exName}
			switch mediaType {
			case "application/json":
				raw, _ := json.Marshal(value)
				b.contentType, b.body = mediaType, string(raw)
			case formType:
				form := url.Values{}
				for k, v := range value {
					form.Set(k, formText(v))
				}
				b.contentType, b.body = formType, form.Encode()
			case "multipart/form-data":
				var buf bytes.Buffer
				w := multipart.NewWriter(&buf)
				for k, v := range value {
					_ = w.WriteField(k, formText(v))
				}
				_ = w.Close()
				b.contentType, b.body = w.FormDataContentType(), buf.String()
			default:
				t.Errorf("a request body of %s, which this test cannot encode", mediaType)
				continue
			}
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b exampleBody) int { return strings.Compare(a.name, b.name) })
	return out
}

// formText is a value as a form writes it.
func formText(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = formText(e)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}
