package records

import (
	"errors"
	"slices"
	"strings"
)

// The domain's errors. Storage answers in these, and only the HTTP layer
// turns them into statuses (404, 412, 409, 503), in one place.
var (
	// ErrNotFound: no such record for this account.
	ErrNotFound = errors.New("record not found")
	// ErrVersionMismatch: the record exists, but not in the version the
	// write required (If-Match).
	ErrVersionMismatch = errors.New("record version changed")
	// ErrConflict: another request on the same thing is still in progress.
	ErrConflict = errors.New("a conflicting request is in progress")
	// ErrUnavailable: storage is throttling or too slow for now; the same
	// request may succeed a moment later.
	ErrUnavailable = errors.New("storage unavailable for now")
)

// InvalidError is input that breaks a resource's rules, with the messages
// per field that the client is shown.
type InvalidError struct {
	Fields map[string][]string
}

func (e *InvalidError) Error() string {
	names := make([]string, 0, len(e.Fields))
	for name := range e.Fields {
		names = append(names, name)
	}
	slices.Sort(names)
	return "invalid: " + strings.Join(names, ",")
}

type fieldErrors map[string][]string

func (e fieldErrors) add(field, msg string) { e[field] = append(e[field], msg) }

// err is the InvalidError of what was collected, or nil.
func (e fieldErrors) err() error {
	if len(e) == 0 {
		return nil
	}
	return &InvalidError{Fields: e}
}
