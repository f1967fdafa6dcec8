package s3local_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"contentapi/shared/local/s3local"
)

// start runs a server for the bucket "pictures" that takes requests signed
// with local/local, and an SDK client signing with secret.
func start(t *testing.T, secret string) (*s3local.Server, *s3.Client) {
	t.Helper()
	srv, err := s3local.Start(s3local.Options{Bucket: "pictures", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL()), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("local", secret, "")})
	return srv, client
}

func TestStartCreatesTheBucket(t *testing.T) {
	srv, client := start(t, "local")
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %s is not on 127.0.0.1", srv.URL())
	}
	out, err := client.ListBuckets(context.Background(), &s3.ListBucketsInput{})
	if err != nil || len(out.Buckets) != 1 || *out.Buckets[0].Name != "pictures" {
		t.Fatalf("buckets %+v, %v", out, err)
	}
	if _, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("pictures"), Key: aws.String("missing.png")}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("GET of a missing object: %v", err)
	}
}

// Only requests signed with the server's credentials get in, as in S3: an
// unsigned one, one signed with another secret, a presigned URL edited,
// expired or without X-Amz-Expires are refused, whatever the client; and
// no web page gets CORS. An object comes as image/png, not to be sniffed.
func TestRequestsMustBeSignedAsS3Wants(t *testing.T) {
	srv, client := start(t, "local")
	ctx := context.Background()
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("pictures"), Key: aws.String("a.png"),
		Body: strings.NewReader("<script>alert(1)</script>"), ContentType: aws.String("text/html")}); err != nil {
		t.Fatal(err)
	}
	presigned, err := s3.NewPresignClient(client).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("pictures"), Key: aws.String("a.png")},
		s3.WithPresignExpires(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	get := func(method, target string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", "http://evil.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		for name := range resp.Header {
			if strings.HasPrefix(name, "Access-Control-") {
				t.Errorf("%s %s: CORS header %s", method, target, name)
			}
		}
		return resp
	}
	if resp := get("GET", presigned.URL); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("the presigned URL: %d %v", resp.StatusCode, resp.Header)
	}
	u, _ := url.Parse(presigned.URL)
	edit := func(f func(q url.Values)) string {
		q := u.Query()
		f(q)
		v := *u
		v.RawQuery = q.Encode()
		return v.String()
	}
	sig := u.Query().Get("X-Amz-Signature")
	flipped := []byte(sig)
	flipped[0] ^= 1
	past := time.Now().Add(-time.Hour).UTC().Format("20060102T150405Z")
	for target, status := range map[string]int{
		srv.URL() + "/":                                                          403,
		srv.URL() + "/pictures":                                                  403,
		srv.URL() + "/pictures/a.png":                                            403,
		edit(func(q url.Values) { q.Del("X-Amz-Expires") }):                      400,
		edit(func(q url.Values) { q.Set("X-Amz-Expires", "604800") }):            403,
		edit(func(q url.Values) { q.Set("X-Amz-Date", past) }):                   403,
		edit(func(q url.Values) { q.Set("X-Amz-Signature", string(flipped)) }):   403,
		edit(func(q url.Values) { q.Set("response-content-type", "text/html") }): 403,
	} {
		if resp := get("GET", target); resp.StatusCode != status {
			t.Errorf("GET %s: %d, want %d", target, resp.StatusCode, status)
		}
	}
	if resp := get("OPTIONS", presigned.URL); resp.StatusCode != 403 {
		t.Errorf("CORS preflight: %d", resp.StatusCode)
	}
	forged := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL()), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("local", "not-the-secret", "")})
	if _, err := forged.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("pictures"), Key: aws.String("a.png")}); err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
		t.Fatalf("a delete signed with another secret: %v", err)
	}
	if _, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("pictures"), Key: aws.String("a.png")}); err != nil {
		t.Fatalf("the picture after the refused delete: %v", err)
	}
}
