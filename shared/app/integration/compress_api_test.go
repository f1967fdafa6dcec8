package integration_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// rawGet is a GET through the local gateway with the write key and the
// given headers, its body as sent: Go's client decodes gzip on its own
// only when it asked for it itself.
func (s *stack) rawGet(path string, header map[string]string) (*http.Response, []byte) {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.writeKey)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return res, body
}

// An answer of 1 KB or more goes gzip-encoded to a client that takes gzip,
// through the function's response (base64, as API Gateway takes binary)
// and the gateway; it decodes to the answer a client without gzip gets.
// Its ETag is the encoded answer's own, and serves If-None-Match and
// If-Match like the plain one.
func TestAnswersGoCompressed(t *testing.T) {
	s := newStack(t)
	expect(t, s.form("POST", "/api/v1/documents", "name", "Long", "prompt", "Write it long"), 201)
	text := strings.Repeat("The café opens at eight with fresh croissants. ", 60)
	expect(t, s.form("PUT", "/api/v1/documents/1", "result", text), 200)

	plain, plainBody := s.rawGet("/api/v1/documents/1", map[string]string{"Accept-Encoding": "identity"})
	zipped, zippedBody := s.rawGet("/api/v1/documents/1", map[string]string{"Accept-Encoding": "gzip, deflate, br"})
	for _, r := range []*http.Response{plain, zipped} {
		if r.StatusCode != 200 || r.Header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("status %d, Vary %q", r.StatusCode, r.Header.Get("Vary"))
		}
	}
	if plain.Header.Get("Content-Encoding") != "" || zipped.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q and %q", plain.Header.Get("Content-Encoding"), zipped.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zippedBody))
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(decoded, plainBody) || !strings.Contains(string(decoded), "fresh croissants") {
		t.Fatalf("decoded %v: %.100q, plain %.100q", err, decoded, plainBody)
	}
	if len(zippedBody)*3 > len(plainBody) {
		t.Errorf("%d bytes gzip-encoded for %d", len(zippedBody), len(plainBody))
	}
	// The function's own answer, as API Gateway takes it: binary, so
	// base64-encoded.
	fns, err := s.app.APIEntries()
	if err != nil {
		t.Fatal(err)
	}
	get := benchEvent(s.writeKey, "/api/v1/documents/1", "", "GET /api/v1/documents/{id}")
	get.Headers["accept-encoding"] = "gzip, deflate, br"
	ev, err := fns["DocumentsFunction"](context.Background(), get)
	if err != nil || !ev.IsBase64Encoded || ev.Headers["Content-Encoding"] != "gzip" {
		t.Fatalf("%v: base64 %v, headers %v", err, ev.IsBase64Encoded, ev.Headers)
	}
	raw, err := base64.StdEncoding.DecodeString(ev.Body)
	if err != nil {
		t.Fatal(err)
	}
	if zr, err := gzip.NewReader(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	} else if b, err := io.ReadAll(zr); err != nil || !json.Valid(b) || !bytes.Contains(b, []byte("fresh croissants")) {
		t.Fatalf("%v: %.100q", err, b)
	}

	tag, zippedTag := plain.Header.Get("ETag"), zipped.Header.Get("ETag")
	if tag != `"1.2"` || zippedTag != `"1.2-gzip"` {
		t.Fatalf("ETags %s and %s", tag, zippedTag)
	}

	// A small answer goes as it is, Vary all the same.
	small, _ := s.rawGet("/api/v1/usage", map[string]string{"Accept-Encoding": "gzip"})
	if small.StatusCode != 200 || small.Header.Get("Content-Encoding") != "" || small.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("usage: %d %v", small.StatusCode, small.Header)
	}

	// If-None-Match: the gzip tag is the current version, and the 304 to
	// a gzip client keeps it.
	for held, want := range map[string]string{zippedTag: zippedTag, tag: tag} {
		r, body := s.rawGet("/api/v1/documents/1", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": held})
		if r.StatusCode != http.StatusNotModified || r.Header.Get("ETag") != want || len(body) != 0 {
			t.Errorf("If-None-Match %s: %d, ETag %s", held, r.StatusCode, r.Header.Get("ETag"))
		}
	}

	// If-Match: the gzip tag names version 2; once it is gone, 412.
	update := func(ifMatch string) response {
		return s.do(request{method: "PATCH", path: "/api/v1/documents/1", key: s.writeKey, contentType: "application/json",
			body: `{"favorite": true}`, header: map[string]string{"If-Match": ifMatch}})
	}
	expect(t, update(zippedTag), 200)
	expect(t, update(zippedTag), 412)
}

// A list is compressed too: the answer make bench prices on the wire.
func TestListGoesCompressed(t *testing.T) {
	s := newStack(t)
	for range 5 {
		expect(t, s.form("POST", "/api/v1/documents", "name", "A document with a name", "prompt", strings.Repeat("Say it again. ", 30)), 201)
	}
	r, body := s.rawGet("/api/v1/documents", map[string]string{"Accept-Encoding": "gzip"})
	if r.StatusCode != 200 || r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("%d %v", r.StatusCode, r.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if decoded, err := io.ReadAll(zr); err != nil || !strings.Contains(string(decoded), `"total":5`) {
		t.Fatalf("%v: %.200s", err, decoded)
	}
}
