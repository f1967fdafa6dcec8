package integration_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Invalid UTF-8 inside a JSON string is refused as a form's is (422 naming
// the field), not stored as U+FFFD, and nothing is created.
func TestJSONInvalidUTF8Is422(t *testing.T) {
	s := newStack(t)
	for _, body := range []string{
		"{\"name\":\"caf\xe9\",\"prompt\":\"p\"}",
		"{\"prompt\":\"p\",\"name\":\"a\xff\\\"b\"}",
	} {
		r := s.do(request{method: "POST", path: "/api/v1/documents", key: s.writeKey, contentType: "application/json", body: body})
		errs, _ := r.Body["errors"].(map[string]any)
		if r.Status != 422 || errs["name"] == nil || len(errs) != 1 {
			t.Errorf("POST %q: %d %s, want 422 naming name", body, r.Status, r.Raw)
		}
	}
	if r := s.get("/api/v1/documents"); r.meta()["total"] != float64(0) {
		t.Fatalf("a refused create was stored: %v", r.meta())
	}
}

// A lone surrogate escape in a JSON string is refused as invalid UTF-8 is
// (422 naming the field), not stored as U+FFFD and answered 201; a
// surrogate pair is a character like any other. Nothing refused is stored.
func TestJSONLoneSurrogateIs422(t *testing.T) {
	s := newStack(t)
	for _, body := range []string{
		`{"name":"\ud800","prompt":"p"}`,
		`{"prompt":"p","name":"tail \udfff"}`,
		`{"prompt":"p","name":"x\ude00\ud83d"}`,
	} {
		r := s.json("POST", "/api/v1/documents", body)
		errs, _ := r.Body["errors"].(map[string]any)
		if r.Status != 422 || errs["name"] == nil || len(errs) != 1 {
			t.Errorf("POST %s: %d %s, want 422 naming name", body, r.Status, r.Raw)
		}
	}
	if r := s.get("/api/v1/documents"); r.meta()["total"] != float64(0) {
		t.Fatalf("a refused create was stored: %v", r.meta())
	}
	r := s.json("POST", "/api/v1/documents", `{"name":"smile \ud83d\ude00","prompt":"p"}`)
	expect(t, r, 201)
	if r.data()["name"] != "smile \U0001F600" {
		t.Errorf("a surrogate pair stored as %q", r.data()["name"])
	}
}

// An Idempotency-Key is the whole header: one with a comma, or the header
// given twice (which API Gateway joins with a comma), is 400 and creates
// nothing, where its first part used to be taken as the key.
func TestIdempotencyKeyWithCommaOrRepeatedIs400(t *testing.T) {
	s := newStack(t)
	for _, keys := range [][]string{{"order-77,part-1"}, {"order-77", "part-2"}} {
		req, err := http.NewRequest("POST", s.url+"/api/v1/documents", strings.NewReader("name=n&prompt=p"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.writeKey)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, k := range keys {
			req.Header.Add("Idempotency-Key", k)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), "Idempotency-Key") {
			t.Errorf("Idempotency-Key %q: %d %s, want 400", keys, resp.StatusCode, body)
		}
	}
	if r := s.get("/api/v1/documents"); r.meta()["total"] != float64(0) {
		t.Fatalf("a refused create was stored: %v", r.meta())
	}
}
