package s3local

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// tagging adds S3's object tagging, which gofakes3 lacks (it would take
// PUT ?tagging for an object upload and DELETE ?tagging for a delete): the
// tag set sent with an upload (X-Amz-Tagging), and GET, PUT and DELETE of
// ?tagging, kept in memory beside the objects. Enough for the service's
// lifecycle tag and for tests that read it with the SDK's
// GetObjectTagging.
type tagging struct {
	next http.Handler
	mu   sync.Mutex
	tags map[string]url.Values // by path: /bucket/key
}

type tagSet struct {
	XMLName xml.Name `xml:"Tagging"`
	Tags    []tag    `xml:"TagSet>Tag"`
}

type tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

func (t *tagging) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	object := strings.Count(strings.Trim(path, "/"), "/") >= 1
	if _, ok := r.URL.Query()["tagging"]; ok && object {
		t.serveTagging(w, r, path)
		return
	}
	if object {
		switch r.Method {
		case http.MethodPut:
			rec := &statusWriter{ResponseWriter: w}
			t.next.ServeHTTP(rec, r)
			if rec.status < 300 {
				tags, _ := url.ParseQuery(r.Header.Get("X-Amz-Tagging"))
				t.set(path, tags)
			}
			return
		case http.MethodDelete:
			t.set(path, nil)
		}
	}
	t.next.ServeHTTP(w, r)
}

func (t *tagging) serveTagging(w http.ResponseWriter, r *http.Request, path string) {
	switch r.Method {
	case http.MethodGet:
		t.mu.Lock()
		var out tagSet
		for k, vs := range t.tags[path] {
			for _, v := range vs {
				out.Tags = append(out.Tags, tag{Key: k, Value: v})
			}
		}
		t.mu.Unlock()
		w.Header().Set("Content-Type", "application/xml")
		_ = xml.NewEncoder(w).Encode(out)
	case http.MethodPut:
		var in tagSet
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err := xml.Unmarshal(body, &in); err != nil {
			http.Error(w, "MalformedXML", http.StatusBadRequest)
			return
		}
		tags := url.Values{}
		for _, tg := range in.Tags {
			tags.Add(tg.Key, tg.Value)
		}
		t.set(path, tags)
	case http.MethodDelete:
		t.set(path, nil)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (t *tagging) set(path string, tags url.Values) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(tags) == 0 {
		delete(t.tags, path)
		return
	}
	t.tags[path] = tags
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}
