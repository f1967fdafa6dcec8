package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"contentapi/shared/records"
)

// The store answers in the domain's errors; these are its names for them.
var (
	ErrNotFound        = records.ErrNotFound
	ErrVersionMismatch = records.ErrVersionMismatch
)

// maxConflictRetries bounds how often a transaction that lost a race for
// the account's counter item is tried again; with jittered backoff this
// covers dozens of concurrent writers on one account.
const maxConflictRetries = 12

// transact runs a write transaction, retrying when it was cancelled only
// because another transaction held one of its items (nothing was written).
func (t *Table) transact(ctx context.Context, items []types.TransactWriteItem) error {
	backoff := 5 * time.Millisecond
	for attempt := 0; ; attempt++ {
		_, err := t.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil || !onlyConflicts(err) || attempt == maxConflictRetries {
			return err
		}
		sleep := backoff/2 + rand.N(backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sleep):
		}
		backoff = min(backoff*2, 200*time.Millisecond)
	}
}

// onlyConflicts reports a cancelled transaction whose reasons are
// conflicts (or none), never a failed condition.
func onlyConflicts(err error) bool {
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) {
		var conflict *types.TransactionConflictException
		return errors.As(err, &conflict)
	}
	conflict := false
	for _, r := range tc.CancellationReasons {
		switch code := deref(r.Code); code {
		case "TransactionConflict":
			conflict = true
		case "", "None":
		default:
			return false
		}
	}
	return conflict
}

// conditionFailedItem reports whether err is a transaction cancelled by the
// condition of item i, and the item as it was (nil when it did not exist).
func conditionFailedItem(err error, i int) (Item, bool) {
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) || i >= len(tc.CancellationReasons) {
		return nil, false
	}
	r := tc.CancellationReasons[i]
	if deref(r.Code) != "ConditionalCheckFailed" {
		return nil, false
	}
	return r.Item, true
}

// conditionFailure maps a failed single-item condition to ErrNotFound (no
// item) or ErrVersionMismatch (the item exists, so the version differed).
func conditionFailure(err error) error {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return err
	}
	if len(ccf.Item) == 0 {
		return ErrNotFound
	}
	return ErrVersionMismatch
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

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
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		for _, r := range tc.CancellationReasons {
			if c := deref(r.Code); c == "ThrottlingError" || c == "ProvisionedThroughputExceeded" || c == "TransactionConflict" {
				return true
			}
		}
	}
	var qe *retry.MaxAttemptsError
	if errors.As(err, &qe) {
		// The SDK gave up retrying; what it retried was transient.
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded",
			"TransactionInProgressException", "TransactionConflictException", "ServiceUnavailable",
			"InternalServerError", "LimitExceededException":
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
