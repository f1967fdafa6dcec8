// Package picturebucket keeps the generated pictures in S3: one object per
// record and generation attempt, named so that a repeated delivery of the
// same attempt rewrites its own object and never adds a second one, and
// read through presigned GET URLs, since the bucket is private. It calls
// S3 through the SDK's client and signs the URLs with its presign client.
//
// Orphans: a picture is stored tagged unclaimed (UnclaimedTag). Its
// record's write-back claims it, and then the generator removes the tag
// (Keep); a bucket lifecycle rule expires what stays tagged, so a picture
// whose write-back lost and whose delete failed, or whose writer died in
// between, does not stay forever.
package picturebucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"contentapi/shared/awsenv"
	"contentapi/shared/generation"
)

// URLExpiry is how long a picture's URL works.
const URLExpiry = time.Hour

// UnclaimedTag is the object tag (key=value) of a picture no record has
// claimed yet; template.yaml's lifecycle rule expires objects carrying it.
const UnclaimedTag = "generation=unclaimed"

// ErrName is a name generation.PictureName did not make.
var ErrName = errors.New("picturebucket: not a picture name")

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
	bucket  *string
	s3      *s3.Client
	presign *s3.PresignClient
}

// New builds the store from the function's environment (see awsenv).
func New(cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("picturebucket: no bucket")
	}
	if cfg.Region == "" {
		return nil, errors.New("picturebucket: no region")
	}
	// Loading reads only the environment: no call to cancel.
	awscfg, err := awsenv.Load(context.Background(), cfg.Region, cfg.Endpoint != "")
	if err != nil {
		return nil, fmt.Errorf("picturebucket: %w", err)
	}
	client := s3.NewFromConfig(awscfg, func(o *s3.Options) {
		o.UsePathStyle = cfg.PathStyle
		o.Retryer = awsenv.Retryer(3, time.Second)
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(10 * time.Second)
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
	})
	return &Store{bucket: aws.String(cfg.Bucket), s3: client, presign: s3.NewPresignClient(client)}, nil
}

// key is a picture's object key: only names Name made are read or written.
func key(name string) (*string, error) {
	if !generation.IsPictureName(name) {
		return nil, fmt.Errorf("%w: %q", ErrName, name)
	}
	return aws.String(name), nil
}

// Put stores a PNG under name, replacing what the name held, tagged
// unclaimed until Keep.
func (s *Store) Put(ctx context.Context, name string, png []byte) error {
	k, err := key(name)
	if err != nil {
		return err
	}
	_, err = s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: s.bucket, Key: k, Body: bytes.NewReader(png),
		ContentType: aws.String("image/png"), Tagging: aws.String(UnclaimedTag),
	})
	if err != nil {
		return fmt.Errorf("picturebucket: put %s: %w", name, err)
	}
	return nil
}

// Keep removes the unclaimed tag: the picture belongs to a record now, and
// the lifecycle rule leaves it alone. A picture that is gone is no error.
func (s *Store) Keep(ctx context.Context, name string) error {
	k, err := key(name)
	if err != nil {
		return err
	}
	_, err = s.s3.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: s.bucket, Key: k})
	if err != nil && !gone(err) {
		return fmt.Errorf("picturebucket: untag %s: %w", name, err)
	}
	return nil
}

// Delete removes a picture; one that is not there is no error.
func (s *Store) Delete(ctx context.Context, name string) error {
	k, err := key(name)
	if err != nil {
		return err
	}
	_, err = s.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: s.bucket, Key: k})
	if err != nil && !gone(err) {
		return fmt.Errorf("picturebucket: delete %s: %w", name, err)
	}
	return nil
}

// gone is S3's answer about an object that is not there (404 NoSuchKey):
// what a delete wanted.
func gone(err error) bool {
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
}

// URL is a presigned GET URL of a picture, valid URLExpiry from now. It is
// computed, not fetched: no call to S3. (With a function role's temporary
// credentials, the URL stops working when they expire, if that is sooner.)
func (s *Store) URL(ctx context.Context, name string) (string, error) {
	k, err := key(name)
	if err != nil {
		return "", err
	}
	req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: s.bucket, Key: k}, s3.WithPresignExpires(URLExpiry))
	if err != nil {
		return "", fmt.Errorf("picturebucket: presign %s: %w", name, err)
	}
	return req.URL, nil
}
