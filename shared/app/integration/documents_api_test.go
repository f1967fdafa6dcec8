package integration_test

import (
	"fmt"
	"strings"
	"testing"

	"contentapi/shared/documents"
)

func createDocument(t testing.TB, s *stack, name string, extra ...string) map[string]any {
	t.Helper()
	r := s.form("POST", "/api/v1/documents", append([]string{"name", name, "prompt", "Write about " + name}, extra...)...)
	expect(t, r, 201)
	return r.data()
}

func TestDocumentCreateShape(t *testing.T) {
	s := newStack(t)
	r := s.form("POST", "/api/v1/documents", "name", " Launch ", "prompt", "Announce it")
	expect(t, r, 201)
	d := r.data()
	want := map[string]any{"id": 1.0, "name": "Launch", "prompt": "Announce it", "creativity": 0.5, "template_id": 1.0,
		"result": nil, "words": 0.0, "favorite": false}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s = %#v, want %#v", k, d[k], v)
		}
	}
	if tpl := d["template"].(map[string]any); tpl["id"] != 1.0 || tpl["name"] != "Freestyle" {
		t.Errorf("template %v", tpl)
	}
	if !timestamp.MatchString(d["created_at"].(string)) || !strings.HasSuffix(r.Header.Get("Location"), "/api/v1/documents/1") {
		t.Errorf("created_at %v Location %q", d["created_at"], r.Header.Get("Location"))
	}
	r = s.json("POST", "/api/v1/documents", `{"name":"Ad","prompt":"p","creativity":1.0,"template_id":48}`)
	expect(t, r, 201)
	if d := r.data(); d["creativity"] != 1.0 || d["template"].(map[string]any)["name"] != "Google advertisement" {
		t.Errorf("json create: %v", d)
	}
}

func TestDocumentTemplatesAndCreativity(t *testing.T) {
	s := newStack(t)
	for id := 1; id <= 52; id++ {
		d := createDocument(t, s, fmt.Sprintf("t%d", id), "template_id", fmt.Sprint(id))
		tpl := d["template"].(map[string]any)
		if tpl["id"] != float64(id) || tpl["name"] != documents.Templates[id] {
			t.Fatalf("template %d: %v", id, tpl)
		}
	}
	for _, bad := range []string{"0", "53", "x", "1.5"} {
		expect422(t, s.form("POST", "/api/v1/documents", "name", "n", "prompt", "p", "template_id", bad), "template_id")
	}
	for spelling, want := range map[string]float64{"0": 0, ".25": 0.25, "0.50": 0.5, "0.75": 0.75, "1.0": 1} {
		if d := createDocument(t, s, "c", "creativity", spelling); d["creativity"] != want {
			t.Errorf("creativity %s stored as %v", spelling, d["creativity"])
		}
	}
	for _, bad := range []string{"0.3", "2", "high"} {
		expect422(t, s.form("POST", "/api/v1/documents", "name", "n", "prompt", "p", "creativity", bad), "creativity")
	}
	expect422(t, s.form("POST", "/api/v1/documents", "name", "n"), "prompt")
	expect422(t, s.form("POST", "/api/v1/documents", "name", "n", "prompt", strings.Repeat("p", 2049)), "prompt")
	expect422(t, s.form("POST", "/api/v1/documents", "name", "n", "prompt", "p", "result", "r"), "result")
	// Each template's list holds exactly its document.
	for _, id := range []int{1, 2, 33, 52} {
		r := s.get(fmt.Sprintf("/api/v1/documents?template_id=%d", id))
		want := int64(1)
		if id == 1 {
			want = 6 // t1 and the five creativity documents, all Freestyle
		}
		if num(r.meta()["total"]) != want {
			t.Errorf("template %d total %v, want %d", id, r.meta()["total"], want)
		}
	}
}

func TestDocumentUpdateResult(t *testing.T) {
	s := newStack(t)
	createDocument(t, s, "Essay")
	before := s.get("/api/v1/documents/1").data()
	r := s.form("PUT", "/api/v1/documents/1", "result", "  The quick brown\nfox  ")
	expect(t, r, 200)
	d := r.data()
	if d["result"] != "The quick brown\nfox" || d["words"] != 4.0 || d["name"] != "Essay" || d["prompt"] != before["prompt"] {
		t.Fatalf("result update: %v", d)
	}
	if d["updated_at"] == before["updated_at"] && d["updated_at"] == d["created_at"] {
		t.Logf("updated_at unchanged within the same microsecond: %v", d["updated_at"])
	}
	expect(t, s.form("PUT", "/api/v1/documents/1", "result", strings.Repeat("ü", 20480)), 200)
	expect422(t, s.form("PUT", "/api/v1/documents/1", "result", strings.Repeat("a", 20481)), "result")
	expect422(t, s.form("PUT", "/api/v1/documents/1", "prompt", "new"), "prompt")
	expect422(t, s.form("PUT", "/api/v1/documents/1", "template_id", "2"), "template_id")
	if got := s.get("/api/v1/documents/1").data()["words"]; got != 1.0 {
		t.Fatalf("words after a refused update: %v", got)
	}
	r = s.form("PUT", "/api/v1/documents/1", "favorite", "true", "name", "Renamed")
	if d := r.data(); d["favorite"] != true || d["name"] != "Renamed" || d["words"] != 1.0 {
		t.Fatalf("partial update: %v", d)
	}
	r = s.do(request{method: "DELETE", path: "/api/v1/documents/1", key: s.writeKey})
	expect(t, r, 200)
	if r.Body["object"] != "document" || r.Body["deleted"] != true {
		t.Errorf("delete body %v", r.Body)
	}
}

func TestDocumentList(t *testing.T) {
	s := newStack(t)
	createDocument(t, s, "Freestyle one")
	createDocument(t, s, "Café notes", "template_id", "4")
	createDocument(t, s, "Freestyle two")
	createDocument(t, s, "Article two", "template_id", "4")
	expect(t, s.form("PUT", "/api/v1/documents/3", "result", "Un CAFÉ crème, s'il vous plaît"), 200)
	expect(t, s.form("PUT", "/api/v1/documents/4", "favorite", "1"), 200)

	r := s.get("/api/v1/documents")
	if num(r.meta()["total"]) != 2 || len(r.list()) != 2 || r.list()[0].(map[string]any)["id"] != 3.0 {
		t.Fatalf("default lists Freestyle only: %s", r.Raw)
	}
	r = s.get("/api/v1/documents?template_id=4&sort_by=name&sort=asc")
	if num(r.meta()["total"]) != 2 || r.list()[0].(map[string]any)["name"] != "Article two" {
		t.Fatalf("template 4 by name: %s", r.Raw)
	}
	check := func(query string, total int64, ids ...float64) {
		t.Helper()
		r := s.get("/api/v1/documents?" + query)
		expect(t, r, 200)
		if num(r.meta()["total"]) != total || len(r.list()) != len(ids) {
			t.Fatalf("%s: %s", query, r.Raw)
		}
		for i, id := range ids {
			if r.list()[i].(map[string]any)["id"] != id {
				t.Fatalf("%s: item %d is %v, want %v", query, i, r.list()[i].(map[string]any)["id"], id)
			}
		}
	}
	check("search=cafe&search_by=result", 1, 3)
	check("search=CAFE%CC%81+CR&search_by=result", 1, 3)
	check("search=cafe", 0)
	check("search=CAFE&template_id=4", 1, 2)
	check("search=two&search_by=name&template_id=4", 1, 4)
	check("favorite=1&template_id=4", 1, 4)
	check("favorite=0", 2, 3, 1)
	check("search=notes&search_by=result&template_id=4", 0)
	for query, field := range map[string]string{"template_id=0": "template_id", "search_by=prompt": "search_by", "per_page=5": "per_page", "favorite=2": "favorite"} {
		expect422(t, s.get("/api/v1/documents?"+query), field)
	}
	// Isolation and read-only keys, as for images.
	r = s.do(request{method: "GET", path: "/api/v1/documents?template_id=4", key: s.otherKey})
	if num(r.meta()["total"]) != 0 {
		t.Fatalf("globex sees acme's documents: %v", r.meta())
	}
	expect(t, s.do(request{method: "GET", path: "/api/v1/documents/2", key: s.otherKey}), 404)
	expect(t, s.do(request{method: "GET", path: "/api/v1/documents/2", key: s.readKey}), 200)
	expect(t, s.do(request{method: "DELETE", path: "/api/v1/documents/2", key: s.readKey}), 403)
	expect(t, s.do(request{method: "POST", path: "/api/v1/documents", key: s.readKey, contentType: "application/json", body: `{"name":"n","prompt":"p"}`}), 403)
	// Deleting a non-Freestyle document takes its own template's total
	// down, once the tally has it.
	expect(t, s.do(request{method: "DELETE", path: "/api/v1/documents/2", key: s.writeKey}), 200)
	s.tally.Drain()
	check("template_id=4", 1, 4)
	check("", 2, 3, 1)
}
