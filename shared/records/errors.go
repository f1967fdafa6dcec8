package records

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"contentapi/shared/generation"
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

// QuotaError: the account's monthly limit of a kind allows no more this
// month, so nothing was written. RetryAfter is the time until the next
// month, when the limit allows again.
type QuotaError struct {
	Kind       string // images, documents, words, ... or spend
	Limit      int64  // of spend, in nano-dollars (generation.USD)
	RetryAfter time.Duration
}

func (e *QuotaError) Error() string { return "the monthly " + e.Limited() + " is reached" }

// Limited names the limit that refused: "limit of 100 images", or for
// spend "spend limit of $25".
func (e *QuotaError) Limited() string {
	if e.Kind == SpendKind {
		return "spend limit of " + generation.USD(e.Limit).String()
	}
	return fmt.Sprintf("limit of %d %s", e.Limit, e.Kind)
}

// SpendKind is the kind of the monthly spend limit (quota.Spend).
const SpendKind = "spend"

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

// Bounds of what an InvalidError reports, so that its answer stays a few KB
// whatever the input: a body of a million bad fields, or a field named with
// a megabyte, is refused without being echoed back.
const (
	// MaxInvalidFields is how many fields an InvalidError names at most;
	// the first ones found are kept.
	MaxInvalidFields = 10
	// MaxFieldNameRunes is where a field's name is cut in the report.
	MaxFieldNameRunes = 32
)

// fieldErrors collects messages per field within the bounds above, each
// message once.
type fieldErrors map[string][]string

func (e fieldErrors) add(field, msg string) {
	field = shortName(field)
	msgs, known := e[field]
	if !known && len(e) >= MaxInvalidFields {
		return
	}
	if !slices.Contains(msgs, msg) {
		e[field] = append(msgs, msg)
	}
}

// err is the InvalidError of what was collected, or nil.
func (e fieldErrors) err() error {
	if len(e) == 0 {
		return nil
	}
	return &InvalidError{Fields: e}
}

// shortName is a field's name as a report shows it: valid UTF-8, no control
// characters, at most MaxFieldNameRunes characters ("…" marks a cut).
func shortName(name string) string {
	if len(name) <= MaxFieldNameRunes && isPlain(name) {
		return name
	}
	var b strings.Builder
	n := 0
	for _, r := range strings.ToValidUTF8(name, "\uFFFD") {
		if n == MaxFieldNameRunes {
			b.WriteRune('…')
			break
		}
		if unicode.IsControl(r) {
			r = '\uFFFD'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// InvalidRows is the refusal of a body of rows (a batch's), all or nothing:
// each invalid row's messages under "rows.<n>.<field>", n its number from
// 1, the first rows' first, within MaxInvalidFields. errs[i] is what
// judging row i+1 answered, nil for a valid row; an error of another kind
// than InvalidError is returned as it is. nil when every row is valid.
func InvalidRows(errs []error) error {
	report := fieldErrors{}
	for i, err := range errs {
		if err == nil {
			continue
		}
		var invalid *InvalidError
		if !errors.As(err, &invalid) {
			return err
		}
		for _, field := range slices.Sorted(maps.Keys(invalid.Fields)) {
			name := "rows." + strconv.Itoa(i+1) + "." + field
			if _, known := report[name]; !known && len(report) >= MaxInvalidFields {
				return report.err()
			}
			report[name] = invalid.Fields[field]
		}
	}
	return report.err()
}
