// Package s3local is an S3 server for the local stack and tests, in
// process, on 127.0.0.1 (gofakes3, in memory). It serves path-style URLs,
// so the presigned GET URLs the service hands out open in curl and a
// browser; like S3 it refuses them once they expire.
package s3local

import (
	"encoding/xml"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Options configure a server.
type Options struct {
	// Addr to listen on; default 127.0.0.1:0 (a free port).
	Addr string
	// Bucket is created at start.
	Bucket string
}

// Server is a running local S3.
type Server struct {
	url, bucket string
	srv         *http.Server
}

// Start serves until Close.
func Start(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	backend := s3mem.New()
	if opts.Bucket != "" {
		if err := backend.CreateBucket(opts.Bucket); err != nil {
			return nil, fmt.Errorf("s3local: bucket %s: %w", opts.Bucket, err)
		}
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("s3local: %w", err)
	}
	s := &Server{url: "http://" + ln.Addr().String(), bucket: opts.Bucket}
	s.srv = &http.Server{Handler: expiring(gofakes3.New(backend).Server()), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL is the endpoint for an S3 client (with path-style addressing).
func (s *Server) URL() string { return s.url }

// Bucket is the bucket created at start.
func (s *Server) Bucket() string { return s.bucket }

// Close stops the server; what it held is gone.
func (s *Server) Close() error { return s.srv.Close() }

// expiring refuses a presigned request past its expiry, as S3 does (the
// server checks no signatures, but a link that works forever here and
// fails after an hour in AWS would hide bugs).
func expiring(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if date, expires := q.Get("X-Amz-Date"), q.Get("X-Amz-Expires"); date != "" && expires != "" {
			signed, err := time.Parse("20060102T150405Z", date)
			secs, err2 := strconv.Atoi(expires)
			if err != nil || err2 != nil || time.Now().After(signed.Add(time.Duration(secs)*time.Second)) {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusForbidden)
				xml.NewEncoder(w).Encode(struct {
					XMLName xml.Name `xml:"Error"`
					Code    string
					Message string
				}{Code: "AccessDenied", Message: "Request has expired"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
