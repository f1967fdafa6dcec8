package app_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"contentapi/shared/app"
)

// A page of large documents is cut short at the answer's bound, with a next
// link that answers the rest of the page; a cursor used elsewhere is 422.
func TestListAnswerBoundedInBytes(t *testing.T) {
	const bound = 200_000
	s := newStackWith(t, func(c *app.Config) { c.MaxAnswerBytes = bound })
	big := strings.Repeat("Long text ", 2048) // 20,480 characters
	for range 12 {
		created := s.form("POST", "/api/v1/documents", "name", "Big", "prompt", "p")
		id := int(created.data()["id"].(float64))
		if r := s.form("PUT", "/api/v1/documents/"+strconv.Itoa(id), "result", big); r.Status != 200 {
			t.Fatalf("PUT result: %d %s", r.Status, r.Raw)
		}
	}
	first := s.get("/api/v1/documents?per_page=25")
	if len(first.Raw) > bound {
		t.Fatalf("the answer is %d bytes, over %d", len(first.Raw), bound)
	}
	meta := first.meta()
	n := len(first.list())
	if meta["partial"] != true || n == 0 || n >= 12 || meta["total"] != float64(12) || meta["total_estimated"] != false {
		t.Fatalf("a page past the bound: %d records, meta %v", n, meta)
	}
	links := first.Body["links"].(map[string]any)
	next, _ := links["next"].(string)
	u, err := url.Parse(next)
	if err != nil || u.Query().Get("page") != "1" || u.Query().Get("cursor") == "" {
		t.Fatalf("links.next of a partial page: %q", next)
	}
	for _, name := range []string{"first", "last"} {
		if strings.Contains(links[name].(string), "cursor=") {
			t.Errorf("links.%s carries a cursor: %s", name, links[name])
		}
	}
	rest := s.get(u.RequestURI())
	if rest.Status != 200 {
		t.Fatalf("GET %s: %d %s", u.RequestURI(), rest.Status, rest.Raw)
	}
	seen := map[float64]int{}
	for _, r := range append(first.list(), rest.list()...) {
		seen[r.(map[string]any)["id"].(float64)]++
	}
	if len(seen) != 12 || rest.meta()["partial"] != false || rest.meta()["from"] != float64(n+1) {
		t.Fatalf("the page and its rest hold %d distinct records (want 12); rest meta %v", len(seen), rest.meta())
	}
	for id, times := range seen {
		if times != 1 {
			t.Errorf("record %v shown %d times", id, times)
		}
	}
	cursor := u.Query().Get("cursor")
	for _, path := range []string{
		"/api/v1/documents?per_page=10&cursor=" + cursor, // another query
		"/api/v1/documents?per_page=25&page=2&cursor=" + cursor,
		"/api/v1/documents?per_page=25&cursor=not-a-cursor",
		"/api/v1/images?per_page=25&cursor=" + cursor,
	} {
		r := s.get(path)
		errs, _ := r.Body["errors"].(map[string]any)
		if r.Status != 422 || errs["cursor"] == nil {
			t.Errorf("GET %s: %d %s, want 422 naming cursor", path, r.Status, r.Raw)
		}
	}
}
