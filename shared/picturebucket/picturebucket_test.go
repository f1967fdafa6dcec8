package picturebucket_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"contentapi/shared/generation"
	"contentapi/shared/local/s3local"
	"contentapi/shared/picturebucket"
)

// The real SDK client against the in-process S3 server.
func setup(t *testing.T) (*picturebucket.Store, *s3.Client, *s3local.Server) {
	t.Helper()
	srv, err := s3local.Start(s3local.Options{Bucket: "pictures"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	store, err := picturebucket.New(picturebucket.Config{Bucket: srv.Bucket(), Region: "us-east-1", Endpoint: srv.URL(), PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	raw := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL()), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	return store, raw, srv
}

func get(t *testing.T, u string) (int, string, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

func count(t *testing.T, raw *s3.Client) int {
	t.Helper()
	out, err := raw.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String("pictures")})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Contents)
}

// tags reads an object's tags with the SDK, as key=value pairs.
func tags(t *testing.T, raw *s3.Client, name string) string {
	t.Helper()
	out, err := raw.GetObjectTagging(context.Background(), &s3.GetObjectTaggingInput{Bucket: aws.String("pictures"), Key: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for _, tg := range out.TagSet {
		pairs = append(pairs, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
	}
	return strings.Join(pairs, "&")
}

func TestPutURLDelete(t *testing.T) {
	store, raw, _ := setup(t)
	ctx := context.Background()
	name := generation.PictureName("acme", "images", 7, "a1")
	first, second := []byte("\x89PNG first"), []byte("\x89PNG second delivery")

	if err := store.Put(ctx, name, first); err != nil {
		t.Fatal(err)
	}
	// A duplicate delivery of the attempt rewrites the same object.
	if err := store.Put(ctx, name, second); err != nil {
		t.Fatal(err)
	}
	if n := count(t, raw); n != 1 {
		t.Fatalf("%d objects after two deliveries of one attempt", n)
	}

	// Stored unclaimed, so that the lifecycle rule would expire it; Keep
	// claims it for a record.
	if got := tags(t, raw, name); got != "generation=unclaimed" {
		t.Fatalf("tags after Put: %q", got)
	}
	if err := store.Keep(ctx, name); err != nil {
		t.Fatal(err)
	}
	if got := tags(t, raw, name); got != "" {
		t.Fatalf("tags after Keep: %q", got)
	}

	u, err := store.URL(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := url.Parse(u)
	if parsed.Query().Get("X-Amz-Expires") != "3600" || parsed.Query().Get("X-Amz-Signature") == "" {
		t.Fatalf("URL %s is not presigned for an hour", u)
	}
	// A plain GET, as curl or a browser does it.
	status, ctype, body := get(t, u)
	if status != http.StatusOK || ctype != "image/png" || !bytes.Equal(body, second) {
		t.Fatalf("GET = %d %q %q", status, ctype, body)
	}

	if err := store.Delete(ctx, name); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := get(t, u); status != http.StatusNotFound {
		t.Fatalf("GET after delete = %d", status)
	}
	if err := store.Delete(ctx, name); err != nil {
		t.Fatalf("deleting a deleted picture: %v", err)
	}
	if n := count(t, raw); n != 0 {
		t.Fatalf("%d objects after delete", n)
	}
}

func TestExpiredURLIsRefused(t *testing.T) {
	store, _, _ := setup(t)
	ctx := context.Background()
	name := generation.PictureName("acme", "images", 7, "a1")
	if err := store.Put(ctx, name, []byte("png")); err != nil {
		t.Fatal(err)
	}
	u, _ := store.URL(ctx, name)
	parsed, _ := url.Parse(u)
	q := parsed.Query()
	q.Set("X-Amz-Date", time.Now().UTC().Add(-picturebucket.URLExpiry-time.Minute).Format("20060102T150405Z"))
	parsed.RawQuery = q.Encode()
	if status, _, _ := get(t, parsed.String()); status != http.StatusForbidden {
		t.Fatalf("GET of an expired URL = %d", status)
	}
}

func TestNamesNotMadeByNameAreRefused(t *testing.T) {
	store, raw, _ := setup(t)
	ctx := context.Background()
	for _, bad := range []string{"../secret", "x.png", ""} {
		if err := store.Put(ctx, bad, []byte("x")); !errors.Is(err, picturebucket.ErrName) {
			t.Errorf("Put(%q) = %v", bad, err)
		}
		if err := store.Delete(ctx, bad); !errors.Is(err, picturebucket.ErrName) {
			t.Errorf("Delete(%q) = %v", bad, err)
		}
		if err := store.Keep(ctx, bad); !errors.Is(err, picturebucket.ErrName) {
			t.Errorf("Keep(%q) = %v", bad, err)
		}
		if _, err := store.URL(ctx, bad); !errors.Is(err, picturebucket.ErrName) {
			t.Errorf("URL(%q) = %v", bad, err)
		}
	}
	if n := count(t, raw); n != 0 {
		t.Fatalf("%d objects written", n)
	}
	if _, err := picturebucket.New(picturebucket.Config{Region: "us-east-1"}); err == nil {
		t.Fatal("a store without a bucket")
	}
}

// S3's throttling and 5xx answers are tried again, as the SDK's client
// would; a refusal is not.
func TestRetriesWhatMayPass(t *testing.T) {
	_, raw, srv := setup(t)
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	var calls, failures atomic.Int32
	failures.Store(2)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if failures.Add(-1) >= 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	store, err := picturebucket.New(picturebucket.Config{Bucket: "pictures", Region: "us-east-1", Endpoint: front.URL, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	name := generation.PictureName("acme", "images", 9, "a1")
	if err := store.Put(context.Background(), name, []byte("png")); err != nil {
		t.Fatalf("Put through two SlowDowns: %v", err)
	}
	if calls.Load() != 3 || count(t, raw) != 1 {
		t.Fatalf("%d calls, %d objects", calls.Load(), count(t, raw))
	}

	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
	}))
	defer denied.Close()
	store, _ = picturebucket.New(picturebucket.Config{Bucket: "pictures", Region: "us-east-1", Endpoint: denied.URL, PathStyle: true})
	calls.Store(0)
	var s3err smithy.APIError
	if err := store.Put(context.Background(), name, []byte("png")); !errors.As(err, &s3err) || s3err.ErrorCode() != "AccessDenied" || s3err.ErrorMessage() != "Access Denied" || calls.Load() != 1 {
		t.Fatalf("Put refused: %v after %d calls", err, calls.Load())
	}
}

// In AWS the bucket is addressed virtual-hosted, and a URL signed with a
// function role's temporary credentials carries their session token.
func TestAWSAddressing(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "session-token")
	store, err := picturebucket.New(picturebucket.Config{Bucket: "contentapi-pictures", Region: "us-west-2"})
	if err != nil {
		t.Fatal(err)
	}
	name := generation.PictureName("acme", "images", 7, "a1")
	u, err := store.URL(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := url.Parse(u)
	q := parsed.Query()
	if parsed.Scheme != "https" || parsed.Host != "contentapi-pictures.s3.us-west-2.amazonaws.com" || parsed.Path != "/"+name ||
		q.Get("X-Amz-Security-Token") != "session-token" || q.Get("X-Amz-Expires") != "3600" ||
		!strings.HasPrefix(q.Get("X-Amz-Credential"), "AKIDEXAMPLE/") || !strings.Contains(q.Get("X-Amz-Credential"), "/us-west-2/s3/aws4_request") {
		t.Fatalf("URL %s", u)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	if _, err := picturebucket.New(picturebucket.Config{Bucket: "b", Region: "us-west-2"}); err == nil {
		t.Fatal("a store in AWS without credentials")
	}
}
