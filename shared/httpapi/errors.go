// Package httpapi is the HTTP layer both functions share: the error and
// envelope shapes of the public contract, request parsing, and the
// middleware every request passes through (request id, logging, CORS,
// authentication, limits).
package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"contentapi/shared/generation"
	"contentapi/shared/records"
)

// Error is a failure the client is told about, in the contract's shape.
// The domain's errors become one (clientError); anything else is a 500
// with no details.
type Error struct {
	Status  int
	Message string
	// Code tells apart answers that share a status: "quota_exceeded" for
	// the 429 of a monthly limit. Empty for most.
	Code string
	// Fields holds validation messages per field; set only for 422.
	Fields map[string][]string
	// Header carries headers the status needs (Allow, Retry-After, ...).
	Header http.Header
}

func (e *Error) Error() string {
	if len(e.Fields) > 0 {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		return strconv.Itoa(e.Status) + " invalid: " + strings.Join(keys, ",")
	}
	return strconv.Itoa(e.Status) + " " + e.Message
}

func newError(status int, message string) *Error {
	return &Error{Status: status, Message: message}
}

func (e *Error) withHeader(key, value string) *Error {
	if e.Header == nil {
		e.Header = http.Header{}
	}
	e.Header.Set(key, value)
	return e
}

// NotFound is the answer for an unknown record or path; a record of another
// account is unknown too, so its existence is not revealed.
func NotFound() *Error { return newError(http.StatusNotFound, "Resource not found.") }

// Unauthenticated is the 401 for any missing, malformed, unknown, revoked or
// expired key: one answer, so a caller learns nothing about which it was.
func Unauthenticated() *Error {
	return newError(http.StatusUnauthorized, "Unauthenticated.").withHeader("WWW-Authenticate", "Bearer")
}

// Forbidden is the 403 for a key that lacks the scope an operation needs.
func Forbidden(message string) *Error { return newError(http.StatusForbidden, message) }

// BadRequest is the 400 for a body or query that does not parse.
func BadRequest(message string) *Error { return newError(http.StatusBadRequest, message) }

// MethodNotAllowed is the 405 with the methods the path does take.
func MethodNotAllowed(allow []string) *Error {
	return newError(http.StatusMethodNotAllowed, "Method not allowed.").withHeader("Allow", strings.Join(allow, ", "))
}

// TooLarge is the 413 for a body over MaxBodyBytes.
func TooLarge() *Error {
	return newError(http.StatusRequestEntityTooLarge, "The request body must not be larger than 1 MiB.")
}

// UnsupportedMediaType is the 415 for a body of a type we do not parse.
func UnsupportedMediaType() *Error {
	return newError(http.StatusUnsupportedMediaType,
		"The Content-Type must be application/x-www-form-urlencoded, multipart/form-data or application/json.")
}

// Conflict is the 409 for a request that collides with one still running.
func Conflict(message string) *Error { return newError(http.StatusConflict, message) }

// PreconditionFailed is the 412 for an If-Match that no longer holds.
func PreconditionFailed() *Error {
	return newError(http.StatusPreconditionFailed, "The resource has been changed since it was read.")
}

// Invalid is the 422 with messages per field.
func Invalid(fields map[string][]string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Fields: fields}
}

// InvalidField is Invalid for a single field and message.
func InvalidField(field, message string) *Error {
	return Invalid(map[string][]string{field: {message}})
}

// Throttled is the 429 with the seconds to wait.
func Throttled(retryAfter time.Duration) *Error {
	return newError(http.StatusTooManyRequests, "Too Many Attempts.").withHeader("Retry-After", seconds(retryAfter))
}

// QuotaExceeded is the 429 of a monthly limit that allows no more; the
// client may retry when the next month begins.
func QuotaExceeded(e *records.QuotaError) *Error {
	msg := "The monthly " + e.Limited() + " is reached."
	err := newError(http.StatusTooManyRequests, msg).withHeader("Retry-After", seconds(e.RetryAfter))
	err.Code = CodeQuotaExceeded
	return err
}

// CodeQuotaExceeded is the code of QuotaExceeded's answer.
const CodeQuotaExceeded = "quota_exceeded"

// Unavailable is the 503 for a dependency that is overloaded or too slow;
// the client may retry after the given time.
func Unavailable(retryAfter time.Duration) *Error {
	return newError(http.StatusServiceUnavailable, "Service temporarily unavailable, please retry.").
		withHeader("Retry-After", seconds(retryAfter))
}

// RetryAfter is what a client is told to wait when storage is throttling
// or too slow.
const RetryAfter = time.Second

// clientError is the one place where errors become statuses: an *Error as
// it is, the domain's errors as the contract answers them, nil for anything
// else (a 500).
func clientError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var invalid *records.InvalidError
	var quota *records.QuotaError
	var inFlight *generation.InFlightError
	switch {
	case errors.As(err, &inFlight):
		return Conflict("The record is being generated; try again when its generation has ended.").
			withHeader("Retry-After", seconds(inFlight.RetryAfter))
	case errors.As(err, &invalid):
		return Invalid(invalid.Fields)
	case errors.As(err, &quota):
		return QuotaExceeded(quota)
	case errors.Is(err, records.ErrNotFound):
		return NotFound()
	case errors.Is(err, records.ErrVersionMismatch):
		return PreconditionFailed()
	case errors.Is(err, records.ErrConflict):
		return Conflict("A conflicting request is still in progress.").withHeader("Retry-After", seconds(RetryAfter))
	case errors.Is(err, records.ErrUnavailable):
		return Unavailable(RetryAfter)
	}
	return nil
}

func seconds(d time.Duration) string {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return strconv.Itoa(s)
}
