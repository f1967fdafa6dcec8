package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"contentapi/shared/app"
	"contentapi/shared/hookapi"
	"contentapi/shared/httpapi"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/stack"
)

// Caller calls the documents and images handlers with Key.
type Caller struct {
	Documents, Images http.Handler
	Key               string
}

// NewCaller is a client of a's handlers with key.
func NewCaller(a *app.App, key string) (*Caller, error) {
	c := &Caller{Key: key}
	var err error
	if c.Documents, err = a.Handler("documents"); err != nil {
		return nil, err
	}
	c.Images, err = a.Handler("images")
	return c, err
}

// WithKey is the same handlers called with another key.
func (c *Caller) WithKey(key string) *Caller {
	return &Caller{Documents: c.Documents, Images: c.Images, Key: key}
}

// Answer is what a handler answered.
type Answer struct {
	Status int
	Header http.Header
	// Raw is the body, decoded when it came gzip-encoded; Wire is its
	// length as sent.
	Raw  string
	Wire int
	// Data and Total are the body's data and meta.total, when it has them.
	Data  json.RawMessage
	Total int64
}

// Do sends a request for path, with form for a write and header's
// headers, to the handler whose routes hold it. It takes gzip, as
// browsers and most HTTP clients do, unless header says otherwise.
func (c *Caller) Do(method, path string, form url.Values, header map[string]string) Answer {
	h := c.Documents
	// The first resource's function serves the usage and the webhooks too.
	if strings.HasPrefix(path, "/api/v1/images") || strings.HasPrefix(path, app.UsagePath) || hookapi.Serves(path) {
		h = c.Images
	}
	// An id shaped as API Gateway's, which the answer and the function's
	// lines carry as they would in AWS.
	ctx := httpapi.WithGatewayRequestID(context.Background(), lambdalocal.NewRequestID())
	r := stack.APIRequest(ctx, method, "https://api.example.com"+path, c.Key, form)
	r.Header.Set("Accept-Encoding", "gzip")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	raw := w.Body.Bytes()
	a := Answer{Status: w.Code, Header: w.Header(), Wire: len(raw)}
	if w.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err == nil {
			raw, err = io.ReadAll(zr)
		}
		if err != nil {
			raw = []byte("bench: the gzip-encoded answer does not decode: " + err.Error())
		}
	}
	a.Raw = string(raw)
	var body struct {
		Data json.RawMessage
		Meta struct{ Total int64 }
	}
	_ = json.Unmarshal(raw, &body)
	a.Data, a.Total = body.Data, body.Meta.Total
	return a
}

// Count is how many records a list answered with.
func (a Answer) Count() int {
	var list []json.RawMessage
	_ = json.Unmarshal(a.Data, &list)
	return len(list)
}

// ID is the id of the record answered with.
func (a Answer) ID() int64 {
	var record struct{ ID int64 }
	_ = json.Unmarshal(a.Data, &record)
	return record.ID
}
