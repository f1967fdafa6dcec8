// Package pictures keeps the generated pictures in S3: one object per
// record and generation attempt, named so that a repeated delivery of the
// same attempt rewrites its own object and never adds a second one, and
// read through presigned GET URLs, since the bucket is private.
//
// It speaks S3's REST API through awsenv.Service (the SDK's SigV4 signer
// and retryer over net/http) rather than through the SDK's S3 client:
// that client adds 1,310,720 bytes to every function's bootstrap
// (measured with the S3 calls below, arm64, as the Makefile builds), and
// the API functions, which store a picture when they generate within the
// request and call Bedrock through its SDK client, would pass their 10 MB
// with it (11.1 MB). Four requests are all it takes: PUT, DELETE, DELETE
// ?tagging and a presigned GET.
//
// Orphans: a picture is stored tagged unclaimed (UnclaimedTag). Its
// record's write-back claims it, and then the generator removes the tag
// (Keep); a bucket lifecycle rule expires what stays tagged, so a picture
// whose write-back lost and whose delete failed, or whose writer died in
// between, does not stay forever.
package pictures

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

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
	base *url.URL // the bucket's URL, without a trailing slash
	s3   *awsenv.Service
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
	return &Store{base: base, s3: awsenv.NewService(awsenv.ServiceConfig{
		Name: "s3", Region: cfg.Region, Credentials: creds, S3: true,
		Retryer: awsenv.Retryer(3, time.Second), Timeout: 10 * time.Second,
	})}, nil
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
	header := http.Header{"Content-Type": {"image/png"}, "X-Amz-Tagging": {UnclaimedTag}}
	if _, err := s.s3.Do(ctx, http.MethodPut, u, header, png); err != nil {
		return fmt.Errorf("pictures: put %s: %w", name, err)
	}
	return nil
}

// Keep removes the unclaimed tag: the picture belongs to a record now, and
// the lifecycle rule leaves it alone. A picture that is gone is no error.
func (s *Store) Keep(ctx context.Context, name string) error {
	return s.delete(ctx, name, "tagging")
}

// Delete removes a picture; one that is not there is no error.
func (s *Store) Delete(ctx context.Context, name string) error {
	return s.delete(ctx, name, "")
}

func (s *Store) delete(ctx context.Context, name, query string) error {
	u, err := s.object(name, query)
	if err != nil {
		return err
	}
	_, err = s.s3.Do(ctx, http.MethodDelete, u, nil, nil)
	var missing *awsenv.ResponseError
	if errors.As(err, &missing) && missing.Status == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pictures: delete %s %s: %w", query, name, err)
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
	signed, err := s.s3.Presign(ctx, u)
	if err != nil {
		return "", fmt.Errorf("pictures: presign %s: %w", name, err)
	}
	return signed, nil
}
