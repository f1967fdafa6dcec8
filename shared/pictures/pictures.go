// Package pictures keeps the generated pictures in S3: one object per
// record and generation attempt, named so that a repeated delivery of the
// same attempt rewrites its own object and never adds a second one, and
// read through presigned GET URLs, since the bucket is private.
//
// It speaks S3's REST API through net/http, each request signed by the
// SDK's own SigV4 signer and retried by the SDK's standard retryer, rather
// than through the S3 client: that client adds 1.25 MB to a bootstrap, and
// the API functions, which store a picture when they generate within the
// request, have no such room under their 10 MB (BENCHMARKS.md). Four
// requests are all it takes: PUT, DELETE, DELETE ?tagging and a presigned
// GET.
//
// Orphans: a picture is stored tagged unclaimed (UnclaimedTag). Its
// record's write-back claims it, and then the generator removes the tag
// (Keep); a bucket lifecycle rule expires what stays tagged, so a picture
// whose write-back lost and whose delete failed, or whose writer died in
// between, does not stay forever.
package pictures

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"contentapi/shared/awsenv"
)

// URLExpiry is how long a picture's URL works.
const URLExpiry = time.Hour

// UnclaimedTag is the object tag (key=value) of a picture no record has
// claimed yet; template.yaml's lifecycle rule expires objects carrying it.
const UnclaimedTag = "generation=unclaimed"

// Name is the file name of the picture of one generation attempt of a
// record: the same for every delivery of that attempt, another for every
// other attempt or record, and revealing none of them.
func Name(account, resource string, id int64, attempt string) string {
	h := sha256.New()
	for _, part := range []string{"picture", account, resource, strconv.FormatInt(id, 10), attempt} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16]) + ".png"
}

var namePattern = regexp.MustCompile(`^[0-9a-f]{32}\.png$`)

// IsName reports whether s is a name Name makes: only those are read or
// deleted, whatever a stored record says.
func IsName(s string) bool { return namePattern.MatchString(s) }

// ErrName is a name Name did not make.
var ErrName = errors.New("pictures: not a picture name")

// Config is where the pictures are.
type Config struct {
	Bucket string
	Region string
	// Endpoint is set only for a local S3 server, which also wants
	// path-style addressing.
	Endpoint  string
	PathStyle bool
}

// Store reads and writes the pictures; build it once per warm function.
type Store struct {
	base    *url.URL // the bucket's URL, without a trailing slash
	region  string
	creds   aws.CredentialsProvider
	signer  *v4.Signer
	client  *awshttp.BuildableClient
	retryer aws.Retryer
}

// New builds the store from the function's environment (see awsenv).
func New(cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("pictures: no bucket")
	}
	if cfg.Region == "" {
		return nil, errors.New("pictures: no region")
	}
	creds, err := awsenv.Credentials(cfg.Endpoint != "")
	if err != nil {
		return nil, fmt.Errorf("pictures: %w", err)
	}
	base, err := bucketURL(cfg)
	if err != nil {
		return nil, err
	}
	return &Store{
		base:   base,
		region: cfg.Region,
		creds:  creds,
		// S3 signs the path as it is sent, not escaped a second time.
		signer:  v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }),
		client:  awshttp.NewBuildableClient().WithTimeout(10 * time.Second),
		retryer: awsenv.Retryer(3, time.Second),
	}, nil
}

// bucketURL is the bucket's address: virtual-hosted in AWS, path-style
// on a local server.
func bucketURL(cfg Config) (*url.URL, error) {
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = "https://s3." + cfg.Region + ".amazonaws.com"
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("pictures: endpoint %q is not an http(s) URL", endpoint)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if cfg.PathStyle {
		u.Path += "/" + cfg.Bucket
	} else {
		u.Host = cfg.Bucket + "." + u.Host
	}
	return u, nil
}

// object is the URL of a picture, with a query ("tagging") or none.
func (s *Store) object(name, query string) (string, error) {
	if !IsName(name) {
		return "", fmt.Errorf("%w: %q", ErrName, name)
	}
	u := *s.base
	u.Path += "/" + name
	u.RawQuery = query
	return u.String(), nil
}

// Put stores a PNG under name, replacing what the name held, tagged
// unclaimed until Keep.
func (s *Store) Put(ctx context.Context, name string, png []byte) error {
	u, err := s.object(name, "")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(png)
	hash := hex.EncodeToString(sum[:])
	err = s.do(ctx, http.MethodPut, u, png, hash, map[string]string{
		"Content-Type":  "image/png",
		"X-Amz-Tagging": UnclaimedTag,
	})
	if err != nil {
		return fmt.Errorf("pictures: put %s: %w", name, err)
	}
	return nil
}

// Keep removes the unclaimed tag: the picture belongs to a record now, and
// the lifecycle rule leaves it alone.
func (s *Store) Keep(ctx context.Context, name string) error {
	u, err := s.object(name, "tagging")
	if err != nil {
		return err
	}
	if err := s.do(ctx, http.MethodDelete, u, nil, emptyHash, nil); err != nil {
		return fmt.Errorf("pictures: keep %s: %w", name, err)
	}
	return nil
}

// Delete removes a picture; one that is not there is no error.
func (s *Store) Delete(ctx context.Context, name string) error {
	u, err := s.object(name, "")
	if err != nil {
		return err
	}
	if err := s.do(ctx, http.MethodDelete, u, nil, emptyHash, nil); err != nil {
		return fmt.Errorf("pictures: delete %s: %w", name, err)
	}
	return nil
}

// URL is a presigned GET URL of a picture, valid URLExpiry from now. It is
// computed, not fetched: no call to S3. (With a function role's temporary
// credentials, the URL stops working when they expire, if that is sooner.)
func (s *Store) URL(ctx context.Context, name string) (string, error) {
	u, err := s.object(name, "X-Amz-Expires="+strconv.Itoa(int(URLExpiry/time.Second)))
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	creds, err := s.creds.Retrieve(ctx)
	if err != nil {
		return "", fmt.Errorf("pictures: presign %s: %w", name, err)
	}
	signed, _, err := s.signer.PresignHTTP(ctx, creds, req, "UNSIGNED-PAYLOAD", "s3", s.region, time.Now())
	if err != nil {
		return "", fmt.Errorf("pictures: presign %s: %w", name, err)
	}
	return signed, nil
}

// emptyHash is the SHA-256 of an empty payload, as SigV4 wants it said.
const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// do sends one signed request, and again while the SDK's retryer says a
// failure may pass (5xx, SlowDown, a dropped connection).
func (s *Store) do(ctx context.Context, method, u string, body []byte, hash string, header map[string]string) error {
	for attempt := 1; ; attempt++ {
		err := s.send(ctx, method, u, body, hash, header)
		if err == nil || attempt >= s.retryer.MaxAttempts() || !s.retryer.IsErrorRetryable(err) {
			return err
		}
		delay, derr := s.retryer.RetryDelay(attempt, err)
		if derr != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(delay):
		}
	}
}

func (s *Store) send(ctx context.Context, method, u string, body []byte, hash string, header map[string]string) error {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.ContentLength = int64(len(body))
	if body == nil {
		req.Body = http.NoBody
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds, err := s.creds.Retrieve(ctx)
	if err != nil {
		return err
	}
	if err := s.signer.SignHTTP(ctx, creds, req, hash, "s3", s.region, time.Now()); err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 300 || (method == http.MethodDelete && resp.StatusCode == http.StatusNotFound) {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil
	}
	return responseError(resp)
}

// Error is an answer of S3 that is not a success.
type Error struct {
	Status int
	Code   string
}

func (e *Error) Error() string { return fmt.Sprintf("S3 answered %d %s", e.Status, e.Code) }

// HTTPStatusCode and ErrorCode let the SDK's retryer classify the error.
func (e *Error) HTTPStatusCode() int { return e.Status }
func (e *Error) ErrorCode() string   { return e.Code }

func responseError(resp *http.Response) error {
	var body struct {
		Code string `xml:"Code"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = xml.Unmarshal(raw, &body)
	return &Error{Status: resp.StatusCode, Code: body.Code}
}
