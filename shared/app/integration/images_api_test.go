package integration_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

var timestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$`)

func createImage(t testing.TB, s *stack, name string, extra ...string) map[string]any {
	t.Helper()
	r := s.form("POST", "/api/v1/images", append([]string{"name", name, "description", "A picture", "resolution", "512x512"}, extra...)...)
	expect(t, r, 201)
	return r.data()
}

func TestImageCreateShape(t *testing.T) {
	s := newStack(t)
	r := s.form("POST", "/api/v1/images", "name", "  Sunset  ", "description", "Red sky", "resolution", "1024x1024", "style", "anime", "medium", "ink", "filter", "sepia")
	expect(t, r, 201)
	d := r.data()
	want := map[string]any{"id": 1.0, "name": "Sunset", "description": "Red sky", "resolution": "1024x1024",
		"style": "anime", "medium": "ink", "filter": "sepia", "negative_prompt": nil, "favorite": false, "result": nil, "url": nil,
		"generation": nil}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s = %#v, want %#v", k, d[k], v)
		}
	}
	if len(d) != len(want)+2 {
		t.Errorf("fields: %v", d)
	}
	for _, k := range []string{"created_at", "updated_at"} {
		if s, _ := d[k].(string); !timestamp.MatchString(s) {
			t.Errorf("%s = %v", k, d[k])
		}
	}
	if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, "/api/v1/images/1") || !strings.HasPrefix(loc, "http") {
		t.Errorf("Location %q", loc)
	}
	// JSON and multipart bodies are the same create.
	r = s.json("POST", "/api/v1/images", `{"name":"Json","description":"d","resolution":"256x256","style":null}`)
	expect(t, r, 201)
	if r.data()["id"] != 2.0 || r.data()["style"] != nil {
		t.Errorf("json create: %v", r.data())
	}
	body := "--XX\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nMulti\r\n--XX\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\nd\r\n--XX\r\nContent-Disposition: form-data; name=\"resolution\"\r\n\r\n512x512\r\n--XX--\r\n"
	r = s.do(request{method: "POST", path: "/api/v1/images", key: s.writeKey, contentType: "multipart/form-data; boundary=XX", body: body})
	expect(t, r, 201)
	if r.data()["name"] != "Multi" || r.data()["id"] != 3.0 {
		t.Errorf("multipart create: %v", r.data())
	}
}

func TestImageValidationChangesNothing(t *testing.T) {
	s := newStack(t)
	createImage(t, s, "Keep")
	cases := []struct {
		field  string
		fields []string
	}{
		{"style", []string{"name", "x", "description", "d", "resolution", "512x512", "style", "oil"}},
		{"medium", []string{"name", "x", "description", "d", "resolution", "512x512", "medium", "oil"}},
		{"filter", []string{"name", "x", "description", "d", "resolution", "512x512", "filter", "blur"}},
		{"resolution", []string{"name", "x", "description", "d", "resolution", "2048x2048"}},
		{"name", []string{"name", strings.Repeat("a", 129), "description", "d", "resolution", "512x512"}},
		{"name", []string{"description", "d", "resolution", "512x512"}},
		{"favorite", []string{"name", "x", "description", "d", "resolution", "512x512", "favorite", "1"}},
		{"colour", []string{"name", "x", "description", "d", "resolution", "512x512", "colour", "red"}},
	}
	for _, c := range cases {
		expect422(t, s.form("POST", "/api/v1/images", c.fields...), c.field)
	}
	expect(t, s.form("POST", "/api/v1/images", "name", strings.Repeat("日", 128), "description", "d", "resolution", "512x512"), 201)
	for _, c := range []struct {
		field  string
		fields []string
	}{
		{"description", []string{"description", "new"}},
		{"style", []string{"style", "anime"}},
		{"favorite", []string{"favorite", "maybe"}},
		{"name", []string{"name", strings.Repeat("b", 129)}},
		{"name", nil},
	} {
		expect422(t, s.form("PUT", "/api/v1/images/1", c.fields...), c.field)
	}
	d := s.get("/api/v1/images/1").data()
	if d["name"] != "Keep" || d["favorite"] != false || d["updated_at"] != d["created_at"] {
		t.Fatalf("a refused write changed the record: %v", d)
	}
	if m := s.get("/api/v1/images").meta(); num(m["total"]) != 2 {
		t.Fatalf("refused creates were counted: %v", m)
	}
}

func TestImageReadUpdateDelete(t *testing.T) {
	s := newStack(t)
	created := createImage(t, s, "Original", "style", "retro")
	r := s.get("/api/v1/images/1")
	expect(t, r, 200)
	if fmt.Sprint(r.data()) != fmt.Sprint(created) {
		t.Errorf("read differs from create:\n%v\n%v", r.data(), created)
	}
	for _, spelling := range []struct {
		value string
		want  bool
	}{{"1", true}, {"0", false}, {"true", true}, {"false", false}} {
		r = s.form("PUT", "/api/v1/images/1", "favorite", spelling.value)
		expect(t, r, 200)
		if r.data()["favorite"] != spelling.want || r.data()["name"] != "Original" {
			t.Errorf("favorite=%s: %v", spelling.value, r.data())
		}
	}
	r = s.json("PATCH", "/api/v1/images/1", `{"name":"Renamed","favorite":true}`)
	expect(t, r, 200)
	if r.data()["name"] != "Renamed" || r.data()["favorite"] != true || r.data()["style"] != "retro" {
		t.Errorf("patch: %v", r.data())
	}
	for _, id := range []string{"2", "0", "-1", "01", "+1", "1.0", "abc", "99999999999999999999"} {
		expect(t, s.get("/api/v1/images/"+id), 404)
		expect(t, s.form("PUT", "/api/v1/images/"+id, "name", "x"), 404)
		expect(t, s.do(request{method: "DELETE", path: "/api/v1/images/" + id, key: s.writeKey}), 404)
	}
	r = s.do(request{method: "DELETE", path: "/api/v1/images/1", key: s.writeKey})
	expect(t, r, 200)
	if fmt.Sprint(r.Body) != fmt.Sprint(map[string]any{"id": 1.0, "object": "image", "deleted": true, "status": 200.0}) {
		t.Errorf("delete body %v", r.Body)
	}
	expect(t, s.get("/api/v1/images/1"), 404)
	expect(t, s.do(request{method: "DELETE", path: "/api/v1/images/1", key: s.writeKey}), 404)
	if r := s.get("/api/v1/images/1"); r.Body["message"] != "Resource not found." {
		t.Errorf("404 body %v", r.Body)
	}
}

func TestImageAuthAndIsolation(t *testing.T) {
	s := newStack(t)
	createImage(t, s, "Mine")
	for _, rq := range []request{
		{method: "GET", path: "/api/v1/images"},
		{method: "GET", path: "/api/v1/images/1"},
		{method: "POST", path: "/api/v1/images"},
		{method: "PUT", path: "/api/v1/images/1"},
		{method: "DELETE", path: "/api/v1/images/1"},
		{method: "GET", path: "/api/v1/images", key: "ck_not-a-real-key"},
	} {
		r := s.do(rq)
		expect(t, r, 401)
		if r.Raw != `{"message":"Unauthenticated.","status":401}`+"\n" || r.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("%s %s: %q %v", rq.method, rq.path, r.Raw, r.Header)
		}
	}
	expect(t, s.do(request{method: "GET", path: "/api/v1/images/1", key: s.readKey}), 200)
	expect(t, s.do(request{method: "GET", path: "/api/v1/images", key: s.readKey}), 200)
	for _, method := range []string{"POST", "PUT", "DELETE"} {
		path := "/api/v1/images/1"
		if method == "POST" {
			path = "/api/v1/images"
		}
		expect(t, s.do(request{method: method, path: path, key: s.readKey, contentType: "application/x-www-form-urlencoded", body: "name=x&description=d&resolution=512x512"}), 403)
	}
	// Another account sees nothing of acme's.
	other := func(method, body string) response {
		return s.do(request{method: method, path: "/api/v1/images/1", key: s.otherKey, contentType: "application/x-www-form-urlencoded", body: body})
	}
	expect(t, other("GET", ""), 404)
	expect(t, other("PUT", "name=stolen"), 404)
	expect(t, other("DELETE", ""), 404)
	r := s.do(request{method: "GET", path: "/api/v1/images", key: s.otherKey})
	if num(r.meta()["total"]) != 0 || len(r.list()) != 0 {
		t.Errorf("globex lists acme's images: %v", r.Body)
	}
	if s.get("/api/v1/images/1").data()["name"] != "Mine" {
		t.Error("acme's image changed")
	}
	// globex's own ids start at 1 too.
	r = s.do(request{method: "POST", path: "/api/v1/images", key: s.otherKey, contentType: "application/x-www-form-urlencoded", body: "name=Theirs&description=d&resolution=256x256"})
	expect(t, r, 201)
	if r.data()["id"] != 1.0 {
		t.Errorf("globex id %v", r.data()["id"])
	}
}

func TestImageConcurrentCreates(t *testing.T) {
	s := newStack(t)
	const n = 48
	var wg sync.WaitGroup
	ids := make(chan float64, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.form("POST", "/api/v1/images", "name", fmt.Sprintf("n%d", i), "description", "d", "resolution", "256x256")
			if r.Status != 201 {
				t.Errorf("create %d: %d %s", i, r.Status, r.Raw)
				return
			}
			ids <- r.data()["id"].(float64)
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[float64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %v twice", id)
		}
		seen[id] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct ids", len(seen))
	}
	if total := num(s.get("/api/v1/images").meta()["total"]); total != n {
		t.Fatalf("total %d, want %d", total, n)
	}
}

func TestImageList(t *testing.T) {
	s := newStack(t)
	r := s.get("/api/v1/images")
	expect(t, r, 200)
	m := r.meta()
	if len(r.list()) != 0 || num(m["total"]) != 0 || num(m["last_page"]) != 1 || m["from"] != nil || m["to"] != nil || num(m["current_page"]) != 1 {
		t.Fatalf("empty account: %s", r.Raw)
	}
	styles := []string{"anime", "retro", ""}
	for i := 1; i <= 27; i++ {
		extra := []string{"resolution", []string{"256x256", "512x512", "1024x1024"}[i%3]}
		if st := styles[i%3]; st != "" {
			extra = append(extra, "style", st)
		}
		name := fmt.Sprintf("Image %02d", i)
		if i == 5 {
			name = "Mon CAFÉ"
		}
		r := s.form("POST", "/api/v1/images", append([]string{"name", name, "description", "d"}, extra...)...)
		expect(t, r, 201)
		if i%4 == 0 {
			expect(t, s.form("PUT", fmt.Sprintf("/api/v1/images/%d", i), "favorite", "1"), 200)
		}
	}
	r = s.get("/api/v1/images?per_page=25&page=2&unknown=1")
	expect(t, r, 200)
	m = r.meta()
	if num(m["total"]) != 27 || num(m["last_page"]) != 2 || num(m["from"]) != 26 || num(m["to"]) != 27 || num(m["per_page"]) != 25 || len(r.list()) != 2 {
		t.Fatalf("last page meta: %v", m)
	}
	first := r.list()[0].(map[string]any)
	if first["id"] != 2.0 {
		t.Errorf("default order is newest first: %v", first["id"])
	}
	links := r.Body["links"].(map[string]any)
	base := s.url + "/api/v1/images"
	if links["first"] != base+"?per_page=25&page=1&unknown=1" || links["prev"] != base+"?per_page=25&page=1&unknown=1" ||
		links["next"] != nil || links["last"] != base+"?per_page=25&page=2&unknown=1" || m["path"] != base {
		t.Errorf("links %v path %v", links, m["path"])
	}
	if lh := r.Header.Get("Link"); !strings.Contains(lh, `rel="first"`) || !strings.Contains(lh, `rel="prev"`) || strings.Contains(lh, `rel="next"`) {
		t.Errorf("Link header %q", lh)
	}
	r = s.get("/api/v1/images?page=9")
	if len(r.list()) != 0 || num(r.meta()["total"]) != 27 || r.meta()["from"] != nil || num(r.meta()["current_page"]) != 9 {
		t.Errorf("past the end: %v", r.meta())
	}
	check := func(query string, total int64, firstID float64) {
		t.Helper()
		r := s.get("/api/v1/images?" + query)
		expect(t, r, 200)
		if num(r.meta()["total"]) != total {
			t.Fatalf("%s: total %v, want %d", query, r.meta()["total"], total)
		}
		if total > 0 && r.list()[0].(map[string]any)["id"] != firstID {
			t.Fatalf("%s: first id %v, want %v", query, r.list()[0].(map[string]any)["id"], firstID)
		}
	}
	check("style=anime", 9, 27)
	check("style=anime&resolution=256x256", 9, 27)
	check("style=anime&resolution=512x512", 0, 0)
	check("style=retro&resolution=512x512", 9, 25)
	check("favorite=1", 6, 24)
	check("favorite=true&style=anime", 2, 24)
	check("favorite=0&sort=asc", 21, 1)
	check("search=cafe", 1, 5)
	check("search=caf%C3%A9&search_by=name", 1, 5)
	check("search=IMAGE%202", 8, 27)
	check("sort_by=name&sort=asc", 27, 1)
	check("sort_by=name&sort=desc&per_page=10", 27, 5)
	check("style=retro&sort_by=name&sort=asc", 9, 1)
	for query, field := range map[string]string{
		"per_page=7": "per_page", "sort=up": "sort", "favorite=maybe": "favorite", "style=oil": "style",
		"sort_by=created_at": "sort_by", "page=0": "page", "medium=oil_paint": "medium", "filter=blur": "filter",
		"resolution=1x1": "resolution",
	} {
		expect422(t, s.get("/api/v1/images?"+query), field)
	}
}

func TestImageListReadsItsWrites(t *testing.T) {
	s := newStack(t)
	for i := range 12 {
		createImage(t, s, fmt.Sprintf("n%d", i))
		r := s.get("/api/v1/images")
		if got := r.list()[0].(map[string]any); got["id"] != float64(i+1) || num(r.meta()["total"]) != int64(i+1) {
			t.Fatalf("after create %d the list shows %v total %v", i+1, got["id"], r.meta()["total"])
		}
	}
	expect(t, s.form("PUT", "/api/v1/images/12", "name", "changed", "favorite", "1"), 200)
	r := s.get("/api/v1/images?sort_by=id")
	if got := r.list()[0].(map[string]any); got["name"] != "changed" || got["favorite"] != true {
		t.Fatalf("update not visible: %v", got)
	}
	if r := s.get("/api/v1/images?favorite=1"); num(r.meta()["total"]) != 1 {
		t.Fatalf("favorite filter after update: %v", r.meta())
	}
	expect(t, s.do(request{method: "DELETE", path: "/api/v1/images/12", key: s.writeKey}), 200)
	r = s.get("/api/v1/images")
	if slices.ContainsFunc(r.list(), func(v any) bool { return v.(map[string]any)["id"] == 12.0 }) {
		t.Fatal("the deleted record is listed")
	}
	// The total comes down once the tally has the delete from the stream.
	s.tally.Drain()
	r = s.get("/api/v1/images")
	if got := r.list()[0].(map[string]any); got["id"] != 11.0 || num(r.meta()["total"]) != 11 {
		t.Fatalf("delete not visible: %v %v", got["id"], r.meta()["total"])
	}
}
