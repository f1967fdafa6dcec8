package store

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"strconv"
	"strings"
	"time"
)

// Attempt is one client operation as storage sees it across the requests
// that carry it: the retries of one Idempotency-Key. Without an Attempt in
// the context every call is an operation of its own.
type Attempt struct {
	// Op names the operation across its executions. Records, updates and
	// tombstones carry it, so a later execution recognises what an earlier
	// one wrote instead of answering 404, 412 or writing a second record.
	Op string
	// ID is the record id an earlier execution of a create bound, 0 if none.
	ID int64
	// Bind, when set, durably records a create's id before the record is
	// written: a later execution then writes that same id (and finds the
	// record if it is there) rather than allocating another.
	Bind func(ctx context.Context, id int64) error
}

type attemptKey struct{}

// WithAttempt attaches the client operation a request belongs to.
func WithAttempt(ctx context.Context, a Attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

func attemptFrom(ctx context.Context) (Attempt, bool) {
	a, ok := ctx.Value(attemptKey{}).(Attempt)
	return a, ok && a.Op != ""
}

var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewToken returns a fresh attempt token: the time it was made (seconds,
// base 36) and 50 random bits. The time lets anyone tell how old an
// unfinished write of that token is.
func NewToken(now time.Time) string {
	var b [7]byte
	_, _ = rand.Read(b[:]) // never fails, by its documentation
	return strconv.FormatInt(now.Unix(), 36) + "-" + tokenEncoding.EncodeToString(b[:])[:10]
}

// TokenTime is when a token was made (to the second); ok is false for a
// malformed one.
func TokenTime(token string) (time.Time, bool) {
	head, _, found := strings.Cut(token, "-")
	if !found {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(head, 36, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}
