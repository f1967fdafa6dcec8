package s3local_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"contentapi/shared/local/s3local"
)

func TestStartCreatesTheBucket(t *testing.T) {
	srv, err := s3local.Start(s3local.Options{Bucket: "pictures"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %s is not on 127.0.0.1", srv.URL())
	}
	resp, err := http.Get(srv.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<Name>pictures</Name>") {
		t.Fatalf("bucket list = %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(srv.URL() + "/pictures/missing.png")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET of a missing object = %d", resp.StatusCode)
	}
}
