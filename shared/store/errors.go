package store

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"

	"contentapi/shared/records"
)

// The store answers in the domain's errors; these are its names for them.
var (
	ErrNotFound        = records.ErrNotFound
	ErrVersionMismatch = records.ErrVersionMismatch
)

// maxUnprocessedRetries bounds how often a batch read or write asks again
// for what DynamoDB left unprocessed.
const maxUnprocessedRetries = 12

// Classify turns DynamoDB's failures into the domain's: throttling and
// timeouts, here or in any package calling DynamoDB, become
// records.ErrUnavailable (wrapping the cause, for the logs). Anything else
// is returned as it is.
func Classify(err error) error {
	if err != nil && !errors.Is(err, records.ErrUnavailable) && (isThrottle(err) || isTimeout(err)) {
		return fmt.Errorf("%w: %w", records.ErrUnavailable, err)
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

// isValidation reports DynamoDB refusing a request as malformed.
func isValidation(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "ValidationException"
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
