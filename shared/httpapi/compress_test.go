package httpapi

import (
	"bytes"
	stdgzip "compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"gzip":                   true,
		"GZIP":                   true,
		"x-gzip":                 true,
		"gzip, deflate, br":      true,
		"br;q=1.0, gzip;q=0.8":   true,
		"gzip; q=0.001":          true,
		"*":                      true,
		"br, *;q=0.1":            true,
		"":                       false,
		"identity":               false,
		"deflate, br":            false,
		"gzip;q=0":               false,
		"gzip; q=0.000":          false,
		"gzip;q=nonsense":        false,
		"*;q=0":                  false,
		"gzip;q=0, *":            false, // refused by name, whatever * says
		"br, gzip;level=9;q=0.5": true,
	} {
		if got := AcceptsGzip(header); got != want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

func TestIdentityTag(t *testing.T) {
	for tag, want := range map[string]string{
		`"7.3-gzip"`: `"7.3"`,
		`"7.3"`:      `"7.3"`,
		`W/"7.3"`:    `W/"7.3"`,
		`-gzip"`:     `-gzip"`,
		`"-gzip"`:    `""`,
		`*`:          `*`,
	} {
		if got := IdentityTag(tag); got != want {
			t.Errorf("IdentityTag(%s) = %s, want %s", tag, got, want)
		}
		if want != tag {
			if back := gzipTag(want); back != tag {
				t.Errorf("gzipTag(%s) = %s, want %s", want, back, tag)
			}
		}
	}
	if got := gzipTag(`W/"7.3"`); got != `W/"7.3"` {
		t.Errorf("a weak tag may name every coding, yet became %s", got)
	}
}

// jsonOf is a JSON answer of about n bytes of text that compresses well.
func jsonOf(n int) []byte {
	return []byte(`{"data":"` + strings.Repeat("crème brûlée for the café ", n/27+1)[:n] + `"}`)
}

// serve runs handler behind compress for a GET with the given request
// headers.
func serve(handler http.HandlerFunc, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/things", nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	compress(handler).ServeHTTP(w, r)
	return w
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := stdgzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("bad gzip: %v", err)
	}
	return plain
}

// A JSON answer of 1 KB or more goes gzip-encoded to a client that takes
// gzip, decoded by the standard library to the very bytes written; its
// strong tag becomes the encoded answer's.
func TestCompressesLargeAnswers(t *testing.T) {
	body := jsonOf(MinCompressBytes)
	handler := func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Etag"] = []string{`"7.3"`}
		w.Header().Set("Content-Type", ContentType)
		w.WriteHeader(http.StatusCreated)
		// In two writes: what is held is all of it.
		w.Write(body[:100])
		w.Write(body[100:])
	}
	w := serve(handler, map[string]string{"Accept-Encoding": "gzip, deflate, br"})
	if w.Code != http.StatusCreated || w.Header().Get("Content-Encoding") != "gzip" || w.Header().Get("Vary") != "Accept-Encoding" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	if got := gunzip(t, w.Body.Bytes()); !bytes.Equal(got, body) {
		t.Fatalf("decoded %q", got)
	}
	if w.Body.Len() >= len(body)/3 {
		t.Errorf("%d bytes for %d", w.Body.Len(), len(body))
	}
	if tag := w.Header().Get("ETag"); tag != `"7.3-gzip"` {
		t.Errorf("ETag %s", tag)
	}

	// The same answer to a client that takes no gzip, or one byte short
	// of the threshold: as it is, and Vary all the same.
	for name, tc := range map[string]struct {
		body   []byte
		accept string
	}{
		"no gzip":     {body, "br;q=1, gzip;q=0"},
		"small":       {body[:MinCompressBytes-1], "gzip"},
		"no encoding": {body, ""},
	} {
		w := serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Etag"] = []string{`"7.3"`}
			w.Header().Set("Content-Type", ContentType)
			w.Write(tc.body)
		}, map[string]string{"Accept-Encoding": tc.accept})
		if w.Code != http.StatusOK || w.Header().Get("Content-Encoding") != "" || w.Header().Get("Vary") != "Accept-Encoding" ||
			w.Header().Get("ETag") != `"7.3"` || !bytes.Equal(w.Body.Bytes(), tc.body) {
			t.Errorf("%s: %d %v %.40q", name, w.Code, w.Header(), w.Body.Bytes())
		}
	}
}

// What would not shrink, or is no text, goes as it is: an answer whose
// gzip in base64 (as Lambda returns it) is not smaller than itself, an
// image, a body already encoded.
func TestLeavesWhatDoesNotShrink(t *testing.T) {
	random := make([]byte, 4096)
	rand.Read(random)
	noise := []byte(`{"data":"` + base64.StdEncoding.EncodeToString(random) + `"}`)
	for name, tc := range map[string]struct {
		body     []byte
		ctype    string
		encoding string
	}{
		"incompressible": {noise, ContentType, ""},
		"image":          {jsonOf(4096), "image/png", ""},
		"encoded":        {jsonOf(4096), ContentType, "br"},
	} {
		w := serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.ctype)
			if tc.encoding != "" {
				w.Header().Set("Content-Encoding", tc.encoding)
			}
			w.Write(tc.body)
		}, map[string]string{"Accept-Encoding": "gzip"})
		if w.Header().Get("Content-Encoding") != tc.encoding || !bytes.Equal(w.Body.Bytes(), tc.body) {
			t.Errorf("%s: %v, %d bytes for %d", name, w.Header(), w.Body.Len(), len(tc.body))
		}
	}
}

// A 304 answers a client holding the gzip-encoded answer's tag with that
// tag, the one its cache keeps the answer under; one holding the plain
// tag gets the plain tag.
func TestNotModifiedKeepsTheClientsTag(t *testing.T) {
	handler := func(w http.ResponseWriter, r *http.Request) {
		if IfNoneMatch(r, `"7.3"`) {
			w.Header()["Etag"] = []string{`"7.3"`}
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.WriteHeader(http.StatusOK)
	}
	for held, want := range map[string]string{
		`"7.3-gzip"`:             `"7.3-gzip"`,
		`"7.2-gzip", "7.3-gzip"`: `"7.3-gzip"`,
		`W/"7.3-gzip"`:           `"7.3-gzip"`,
		`"7.3"`:                  `"7.3"`,
	} {
		w := serve(handler, map[string]string{"Accept-Encoding": "gzip", "If-None-Match": held})
		if w.Code != http.StatusNotModified || w.Header().Get("ETag") != want || w.Header().Get("Vary") != "Accept-Encoding" || w.Body.Len() != 0 {
			t.Errorf("If-None-Match %s: %d %v", held, w.Code, w.Header())
		}
	}
	w := serve(handler, map[string]string{"Accept-Encoding": "gzip", "If-None-Match": `"7.2-gzip"`})
	if w.Code != http.StatusOK {
		t.Errorf("an old version's gzip tag: %d", w.Code)
	}
}

// Through the whole middleware, the access line still has the status, and
// an error answer (small) goes as it is.
func TestWrapCompresses(t *testing.T) {
	var logs bytes.Buffer
	h := testHandler(&logs)
	r := httptest.NewRequest(http.MethodGet, "/api/v1/things", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized || w.Header().Get("Content-Encoding") != "" || w.Header().Get("Vary") != "Accept-Encoding" ||
		!strings.Contains(w.Body.String(), `"status":401`) || !strings.Contains(logs.String(), `"status":401`) {
		t.Fatalf("%d %v %s\n%s", w.Code, w.Header(), w.Body, logs.String())
	}
}
