package awsenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Service calls one AWS service's REST API over net/http: each request
// signed by the SDK's SigV4 signer, and tried again while the SDK's
// standard retryer says a failure may pass. It is for the few calls a
// function makes to a service whose SDK client would cost the bootstrap
// more than it has room for (S3's, 1.3 MB, measured): the protocol's
// framing is the caller's, everything AWS-specific stays the SDK's.
type Service struct {
	cfg    ServiceConfig
	signer *v4.Signer
	client *awshttp.BuildableClient
}

// ServiceConfig says how to call a service.
type ServiceConfig struct {
	// Name is the signing name ("s3") and Region the region
	// signed for.
	Name, Region string
	Credentials  aws.CredentialsProvider
	Retryer      aws.Retryer
	// S3 signs the way S3 wants: the path as sent, not escaped again, and
	// the payload's hash in a header.
	S3 bool
	// Timeout bounds one try; 0 leaves it to the context.
	Timeout time.Duration
}

// NewService is a client of one service; safe for concurrent use.
func NewService(cfg ServiceConfig) *Service {
	return &Service{
		cfg:    cfg,
		signer: v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = cfg.S3 }),
		client: awshttp.NewBuildableClient().WithTimeout(cfg.Timeout),
	}
}

// maxResponseBytes bounds a response body: a picture in base64 is a few MB.
const maxResponseBytes = 32 << 20

// Response is a successful answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request and returns the answer if its status is below 300.
// Any other status is a *ResponseError carrying the service's error code;
// a request that could not be sent is a *SendError.
func (s *Service) Do(ctx context.Context, method, url string, header http.Header, body []byte) (Response, error) {
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	for attempt := 1; ; attempt++ {
		resp, err := s.send(ctx, method, url, header, body, hash)
		retryer := s.cfg.Retryer
		if err == nil || ctx.Err() != nil || attempt >= retryer.MaxAttempts() || !retryer.IsErrorRetryable(err) {
			return resp, err
		}
		delay, derr := retryer.RetryDelay(attempt, err)
		if derr != nil {
			return resp, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return resp, err
		case <-t.C:
		}
	}
}

func (s *Service) send(ctx context.Context, method, url string, header http.Header, body []byte, hash string) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	req.ContentLength = int64(len(body))
	for k, vs := range header {
		req.Header[k] = vs
	}
	if s.cfg.S3 {
		req.Header.Set("X-Amz-Content-Sha256", hash)
	}
	creds, err := s.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return Response{}, err
	}
	if err := s.signer.SignHTTP(ctx, creds, req, hash, s.cfg.Name, s.cfg.Region, time.Now()); err != nil {
		return Response{}, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return Response{}, &SendError{Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return Response{}, &SendError{Err: err}
	}
	if resp.StatusCode >= 300 {
		return Response{}, responseError(resp, raw)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}, nil
}

// Presign is a presigned URL for a GET of url: S3's way of letting anyone
// who holds the URL read an object, until the X-Amz-Expires its query
// names.
func (s *Service) Presign(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	creds, err := s.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return "", err
	}
	signed, _, err := s.signer.PresignHTTP(ctx, creds, req, "UNSIGNED-PAYLOAD", s.cfg.Name, s.cfg.Region, time.Now())
	return signed, err
}

// SendError is a request that got no answer: the service could not be
// reached, or the connection broke.
type SendError struct{ Err error }

func (e *SendError) Error() string { return "request not sent: " + e.Err.Error() }
func (e *SendError) Unwrap() error { return e.Err }

// ResponseError is an answer that is not a success. Its message is the
// service's and may name accounts or resources: it is for logs only.
type ResponseError struct {
	Status  int
	Code    string
	Message string
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// HTTPStatusCode and ErrorCode let the SDK's retryer classify the error.
func (e *ResponseError) HTTPStatusCode() int { return e.Status }
func (e *ResponseError) ErrorCode() string   { return e.Code }

// S3's error body is <Error><Code>...</Code><Message>...: two elements,
// read by xmlText, so no XML decoder for them (100 KB of a bootstrap) and
// no regular expression compiled at every cold start (a bounded
// repetition of a thousand costed 2.5 ms of init).
const (
	maxCodeBytes    = 128
	maxMessageBytes = 1000
)

// xmlText is the text of the first <name> element of body, up to limit
// bytes; "" if there is none, or if it holds markup.
func xmlText(body []byte, name string, limit int) string {
	_, rest, ok := bytes.Cut(body, []byte("<"+name+">"))
	if !ok {
		return ""
	}
	text, _, ok := bytes.Cut(rest, []byte("</"+name+">"))
	if !ok || bytes.IndexByte(text, '<') >= 0 {
		return ""
	}
	return string(text[:min(len(text), limit)])
}

// responseError reads the error code as the service sends it: in the
// X-Amzn-ErrorType header (REST-JSON services), or in the body, as JSON's
// __type or S3's XML.
func responseError(resp *http.Response, body []byte) *ResponseError {
	e := &ResponseError{Status: resp.StatusCode}
	if t := resp.Header.Get("X-Amzn-Errortype"); t != "" {
		e.Code, _, _ = strings.Cut(t, ":")
	}
	var j struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &j) == nil {
		if e.Code == "" {
			e.Code = j.Type[strings.LastIndex(j.Type, "#")+1:]
		}
		e.Message = j.Message
		return e
	}
	if code := xmlText(body, "Code", maxCodeBytes+1); e.Code == "" && len(code) <= maxCodeBytes {
		e.Code = code
	}
	e.Message = xmlText(body, "Message", maxMessageBytes)
	return e
}
