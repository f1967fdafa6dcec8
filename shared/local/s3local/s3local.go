// Package s3local is an S3 server for the local stack and tests, in
// process, on 127.0.0.1 (gofakes3, in memory). It serves path-style URLs,
// so the presigned GET URLs the service hands out open in curl and a
// browser. Like S3 it checks every request's SigV4 signature, refuses a
// presigned URL once it expires (auth.go), and answers no CORS; it serves
// pictures as image/png, not to be sniffed. It keeps object tags, which
// gofakes3 does not (tagging.go).
package s3local

import (
	"context"
	"encoding/xml"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"contentapi/shared/awsenv"
)

// Options configure a server.
type Options struct {
	// Addr to listen on; default 127.0.0.1:0 (a free port).
	Addr string
	// Bucket is created at start.
	Bucket string
	// Credentials are what requests must be signed with; default the
	// environment's, as the functions sign with (awsenv.Credentials).
	Credentials aws.CredentialsProvider
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
	objects := &tagging{next: gofakes3.New(backend).Server(), tags: map[string]url.Values{}}
	creds := opts.Credentials
	if creds == nil {
		creds = aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
			// Read at each request: the local stack sets the environment
			// after starting the server.
			p, err := awsenv.Credentials(true)
			if err != nil {
				return aws.Credentials{}, err
			}
			return p.Retrieve(ctx)
		})
	}
	s.srv = &http.Server{Handler: noCORS(authenticating(creds, time.Now, objects)), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL is the endpoint for an S3 client (with path-style addressing).
func (s *Server) URL() string { return s.url }

// Bucket is the bucket created at start.
func (s *Server) Bucket() string { return s.bucket }

// Close stops the server; what it held is gone.
func (s *Server) Close() error { return s.srv.Close() }

// s3Error answers as S3 does: an XML Error with a code and a message.
func s3Error(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_ = xml.NewEncoder(w).Encode(struct {
		XMLName xml.Name `xml:"Error"`
		Code    string
		Message string
	}{Code: code, Message: message})
}

// noCORS takes out the CORS gofakes3 always answers with (any origin may
// GET, PUT and DELETE): a bucket without a CORS configuration has none, so
// no web page can script it.
func noCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			s3Error(w, http.StatusForbidden, "CORSResponse", "CORS is not enabled for this bucket.")
			return
		}
		next.ServeHTTP(headerFilter{w}, r)
	})
}

// headerFilter is a writer whose answers carry no CORS header, and serve
// objects (the pictures, PNG, the only thing the bucket holds) as
// image/png that a browser must not sniff into anything else.
type headerFilter struct{ http.ResponseWriter }

func (f headerFilter) WriteHeader(status int) {
	h := f.Header()
	for name := range h {
		if strings.HasPrefix(name, "Access-Control-") {
			delete(h, name)
		}
	}
	if h.Get("ETag") != "" && h.Get("Content-Type") != "application/xml" {
		// An object's answer (a listing or an error is XML).
		h.Set("Content-Type", "image/png")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	f.ResponseWriter.WriteHeader(status)
}

func (f headerFilter) Write(b []byte) (int, error) {
	if f.Header().Get("X-Content-Type-Options") == "" {
		f.WriteHeader(http.StatusOK)
	}
	return f.ResponseWriter.Write(b)
}
