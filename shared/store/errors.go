package store

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"

	"contentapi/shared/httpapi"
)

var (
	// ErrNotFound: no such record for this account.
	ErrNotFound = errors.New("record not found")
	// ErrVersionMismatch: the record exists but If-Match no longer holds.
	ErrVersionMismatch = errors.New("record version changed")
)

// maxUnprocessedRetries bounds how often a batch read or write asks again
// for what DynamoDB left unprocessed.
const maxUnprocessedRetries = 12

// RetryAfter is what a client is told to wait when DynamoDB is throttling
// or too slow.
const RetryAfter = time.Second

// Classify turns store and DynamoDB errors into client answers: missing
// records are 404, a changed version 412, throttling and timeouts 503 with
// Retry-After. Anything else stays an internal error (500, logged).
func Classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		return httpapi.NotFound()
	case errors.Is(err, ErrVersionMismatch):
		return httpapi.PreconditionFailed()
	case errors.Is(err, ErrInterrupted) || isThrottle(err) || isTimeout(err):
		return httpapi.Unavailable(RetryAfter)
	}
	return err
}

func isThrottle(err error) bool {
	var qe *retry.MaxAttemptsError
	if errors.As(err, &qe) {
		// The SDK gave up retrying; what it retried was transient.
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded",
			"ServiceUnavailable", "InternalServerError", "LimitExceededException":
			return true
		}
	}
	return false
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
