package integration_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"contentapi/shared/app"
	"contentapi/shared/documents"
	"contentapi/shared/httpapi"
	"contentapi/shared/records"
	"contentapi/shared/store"
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
	// The same list of another account, which has records enough for
	// that page: the cursor was given to acme, and is 422 for globex.
	for range 12 {
		expect(t, s.do(request{method: "POST", path: "/api/v1/documents", key: s.otherKey,
			contentType: "application/x-www-form-urlencoded", body: "name=Other&prompt=p"}), 201)
	}
	r := s.do(request{method: "GET", path: u.RequestURI(), key: s.otherKey})
	expect422(t, r, "cursor")
}

// A cursor is signed under a key derived from the deployment's secret:
// one whose fields were edited, whose signature was touched, or that was
// signed under another key (the local stack's public one) is 422 naming
// cursor, never a DynamoDB error.
func TestTamperedCursorIs422(t *testing.T) {
	cursors, err := records.NewCursors([]byte(strings.Repeat("s", 32)))
	if err != nil {
		t.Fatal(err)
	}
	s := newStackWith(t, func(c *app.Config) { c.MaxAnswerBytes = 60_000; c.Cursors = cursors })
	big := strings.Repeat("Long text ", 2048)
	for range 4 {
		created := s.form("POST", "/api/v1/documents", "name", "Big", "prompt", "p")
		id := int(created.data()["id"].(float64))
		if r := s.form("PUT", "/api/v1/documents/"+strconv.Itoa(id), "result", big); r.Status != 200 {
			t.Fatalf("PUT result: %d %s", r.Status, r.Raw)
		}
	}
	const query = "/api/v1/documents?page=1&per_page=10&cursor="
	next, _ := s.get("/api/v1/documents?per_page=10").Body["links"].(map[string]any)["next"].(string)
	u, err := url.Parse(next)
	if err != nil || u.Query().Get("cursor") == "" {
		t.Fatalf("links.next of a partial page: %q", next)
	}
	cursor := u.Query().Get("cursor")
	if r := s.get(query + cursor); r.Status != 200 {
		t.Fatalf("the cursor as given: %d %s", r.Status, r.Raw)
	}
	payload, sig, _ := strings.Cut(cursor, ".")
	fields := map[string]any{}
	if b, err := base64.RawURLEncoding.DecodeString(payload); err != nil || json.Unmarshal(b, &fields) != nil {
		t.Fatalf("the cursor's payload %q: %v", payload, err)
	}
	var tampered []string
	for _, edit := range []struct {
		field string
		value any
	}{{"k", "garbage"}, {"k", "-5"}, {"k", ""}, {"i", 1 << 40}, {"n", 0}, {"r", 1e9}} {
		edited := maps.Clone(fields)
		edited[edit.field] = edit.value
		b, _ := json.Marshal(edited)
		tampered = append(tampered, base64.RawURLEncoding.EncodeToString(b)+"."+sig)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(sig)
	for bit := range 8 * len(raw) {
		flipped := slices.Clone(raw)
		flipped[bit/8] ^= 1 << (bit % 8)
		tampered = append(tampered, payload+"."+base64.RawURLEncoding.EncodeToString(flipped))
	}
	q := documentsQuery(t, "page=1&per_page=10")
	tampered = append(tampered, payload, payload+".", records.Cursors{}.For("acme").Encode(q, records.Cursor{Key: "garbage", Matches: 1, Read: 1}))
	for _, c := range tampered {
		r := s.get(query + url.QueryEscape(c))
		errs, _ := r.Body["errors"].(map[string]any)
		if r.Status != 422 || errs["cursor"] == nil {
			t.Errorf("cursor %s: %d %s, want 422 naming cursor", c, r.Status, r.Raw)
		}
	}
}

// Under the local stack's public signing key anyone can sign a cursor; one
// whose start key does not fit the index is still 422, not DynamoDB's
// validation error as a 500.
func TestForgedCursorUnderPublicKeyIs422(t *testing.T) {
	s := newStackWith(t, func(c *app.Config) {})
	s.form("POST", "/api/v1/documents", "name", "Doc", "prompt", "p")
	q := documentsQuery(t, "page=1&per_page=10")
	for _, c := range []records.Cursor{{Key: "garbage", Matches: 1, Read: 1}, {Key: "-5", ID: 3}, {Key: "99999999999999999999999"}} {
		r := s.get("/api/v1/documents?page=1&per_page=10&cursor=" + url.QueryEscape(records.Cursors{}.For("acme").Encode(q, c)))
		errs, _ := r.Body["errors"].(map[string]any)
		if r.Status != 422 || errs["cursor"] == nil {
			t.Errorf("cursor %+v: %d %s, want 422 naming cursor", c, r.Status, r.Raw)
		}
	}
}

// A page of records full of the character that escapes longest in the
// response event is cut short where the event, not the body, would pass
// Lambda's 6 MB: the body of 100 such documents is 4.5 MB, its event twice
// that, which the gateway refuses as API Gateway does. Following next
// walks the whole list, every answer served.
func TestListEventUnderLambdaLimit(t *testing.T) {
	s := newStack(t)
	// `"` is two bytes in the body and four in the event: the most of any
	// character per character a field may hold, but control characters,
	// which fields refuse (U+2028 is seven, but from three bytes, and the
	// body's 5 MB binds it first).
	const worst = `"`
	const total = 100
	vs := make([]records.Values, total)
	for i := range vs {
		// Each field at its longest (documents.Resource).
		vs[i] = records.Values{"name": strings.Repeat(worst, 128), "prompt": strings.Repeat(worst, 2048), "creativity": 0.5,
			"template_id": int64(1), "words": int64(0), "result": strings.Repeat(worst, 20480)}
	}
	if _, err := store.New(s.env.Client, s.env.Tables["DocumentsTable"], documents.Resource).Import(context.Background(), "acme", vs); err != nil {
		t.Fatal(err)
	}
	seen, answers, partial := map[float64]bool{}, 0, false
	for path := "/api/v1/documents?per_page=100"; path != ""; answers++ {
		r := s.get(path)
		if r.Status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Raw[:min(len(r.Raw), 200)])
		}
		for _, d := range r.list() {
			seen[d.(map[string]any)["id"].(float64)] = true
		}
		partial = partial || r.meta()["partial"] == true
		next, _ := r.Body["links"].(map[string]any)["next"].(string)
		u, _ := url.Parse(next)
		path = u.RequestURI()
		if next == "" {
			path = ""
		}
	}
	if len(seen) != total || !partial || answers < 2 {
		t.Fatalf("%d answers (partial: %v) showed %d of %d records", answers, partial, len(seen), total)
	}
}

// documentsQuery is the documents list of query, as the service reads it.
func documentsQuery(t *testing.T, query string) records.ListQuery {
	t.Helper()
	params, err := httpapi.ParseQueryString(query)
	if err != nil {
		t.Fatal(err)
	}
	q, err := documents.Resource.ParseList(params, records.Cursors{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}
