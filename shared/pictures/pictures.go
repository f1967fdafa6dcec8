// Package pictures keeps the generated pictures in S3: one object per
// record and generation attempt, named so that a repeated delivery of the
// same attempt rewrites its own object and never adds a second one, and
// read through presigned GET URLs, since the bucket is private.
package pictures

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"contentapi/shared/awsenv"
)

// URLExpiry is how long a picture's URL works.
const URLExpiry = time.Hour

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
	client  *s3.Client
	presign *s3.PresignClient
	bucket  string
}

// New builds the store from the function's environment (see awsenv).
func New(cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("pictures: no bucket")
	}
	creds, err := awsenv.Credentials(cfg.Endpoint != "")
	if err != nil {
		return nil, fmt.Errorf("pictures: %w", err)
	}
	opts := s3.Options{
		Region:       cfg.Region,
		Credentials:  creds,
		HTTPClient:   awshttp.NewBuildableClient().WithTimeout(10 * time.Second),
		Retryer:      awsenv.Retryer(3, time.Second),
		UsePathStyle: cfg.PathStyle,
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
	}
	client := s3.New(opts)
	return &Store{client: client, presign: s3.NewPresignClient(client), bucket: cfg.Bucket}, nil
}

// Put stores a PNG under name, replacing what the name held.
func (s *Store) Put(ctx context.Context, name string, png []byte) error {
	if !IsName(name) {
		return fmt.Errorf("%w: %q", ErrName, name)
	}
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(name),
		Body:          bytes.NewReader(png),
		ContentLength: aws.Int64(int64(len(png))),
		ContentType:   aws.String("image/png"),
	})
	if err != nil {
		return fmt.Errorf("pictures: put %s: %w", name, err)
	}
	return nil
}

// Delete removes a picture; one that is not there is no error.
func (s *Store) Delete(ctx context.Context, name string) error {
	if !IsName(name) {
		return fmt.Errorf("%w: %q", ErrName, name)
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(name)})
	if err != nil {
		return fmt.Errorf("pictures: delete %s: %w", name, err)
	}
	return nil
}

// URL is a presigned GET URL of a picture, valid URLExpiry from now. It is
// computed, not fetched: no call to S3. (With a function role's temporary
// credentials, the URL stops working when they expire, if that is sooner.)
func (s *Store) URL(ctx context.Context, name string) (string, error) {
	if !IsName(name) {
		return "", fmt.Errorf("%w: %q", ErrName, name)
	}
	req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(name)},
		s3.WithPresignExpires(URLExpiry))
	if err != nil {
		return "", fmt.Errorf("pictures: presign %s: %w", name, err)
	}
	return req.URL, nil
}
