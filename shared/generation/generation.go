// Package generation is the domain of generated content: the state a record
// carries while its text or picture is generated, the failures a client may
// see, and the contract between the code that generates and the models it
// calls. It imports nothing of AWS or HTTP, so the resources, the store and
// the generator can all share it.
package generation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"
)

// Status is where a record's generation stands.
type Status string

// The statuses a client sees (docs/api.md), in the order a generation passes through them.
const (
	Pending Status = "pending"
	Running Status = "running"
	Done    Status = "done"
	Failed  Status = "failed"
)

// Statuses are the statuses in that order (openapi.yaml lists them from
// here: make generate).
var Statuses = []Status{Pending, Running, Done, Failed}

// Mode is how a record's generation runs. The empty mode is on demand:
// the request or the generator, from the table's stream, calls the model,
// as for every record before bulk generation. Batch is a Bedrock batch
// inference job's: the generator's event source mappings leave a pending
// record in it out (template.yaml), and the job's results are written
// back by the batches' function instead.
type Mode string

// Batch is the mode of a record a batch inference job generates.
const Batch Mode = "batch"

// Ended reports whether the status is final.
func (s Status) Ended() bool { return s == Done || s == Failed }

// MaxDuration is the longest a record may read as pending or running: past
// it, whatever happened to the attempt, the record reads as failed with
// Timeout, and no late write-back may change that.
const MaxDuration = 15 * time.Minute

// TimeLayout is the contract's timestamp: ISO-8601 UTC with microseconds.
// Declared here, in a leaf, so that the store (store.TimeLayout) and the
// records share it.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// FormatTime renders t as the API shows times.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads a time written by FormatTime.
func ParseTime(s string) (time.Time, error) { return time.Parse(TimeLayout, s) }

// State is a record's generation, stored on the record under "generation"
// and shown in its JSON. The fields a client does not see (which attempt
// owns the record, when it was requested and started) are stored only.
type State struct {
	Status       Status `json:"status" dynamodbav:"status"`
	Model        string `json:"model" dynamodbav:"model"`
	Error        *Error `json:"error" dynamodbav:"error"`
	InputTokens  *int64 `json:"input_tokens" dynamodbav:"input_tokens"`
	OutputTokens *int64 `json:"output_tokens" dynamodbav:"output_tokens"`
	// CostUSD is what the generation's calls of the models cost so far, at
	// the deployment's prices (Meter): every try's, every variant's, and
	// of a call that reached the model whatever came of it after. Stored
	// in nano-dollars, a whole number.
	CostUSD    USD     `json:"cost_usd" dynamodbav:"cost_nusd,omitempty"`
	FinishedAt *string `json:"finished_at" dynamodbav:"finished_at"`

	// Attempt identifies one request for generation. Every write-back is
	// conditional on it, so of duplicate or overtaken deliveries exactly
	// one attempt writes the record, and a picture is named after it.
	Attempt string `json:"-" dynamodbav:"attempt"`
	// Mode is Batch while a batch inference job generates the record,
	// empty on demand; stored only (attribute "mode", which the
	// generator's stream filters read).
	Mode Mode `json:"-" dynamodbav:"mode,omitempty"`
	// RequestedAt starts the 15-minute clock.
	RequestedAt string `json:"-" dynamodbav:"requested_at"`
	// StartedAt is when a generator took the attempt up; empty while pending.
	StartedAt string `json:"-" dynamodbav:"started_at,omitempty"`
	// Tries counts the tries that failed for a reason that may pass
	// (throttling, a model unavailable or too slow) and were queued again.
	Tries int `json:"-" dynamodbav:"tries,omitempty"`
	// Hold is what the generation holds of the account's monthly quota
	// while it is under way (a document's words, at the most it can
	// write); nil when it holds nothing. Claims and hand-overs keep it.
	// The write that ends the generation moves it to Settled; a write
	// that ends it otherwise (the record deleted, or regenerated past its
	// deadline) drops it. The tally function reads that write from the
	// table's stream and gives back the difference (shared/store, holds).
	Hold *Hold `json:"-" dynamodbav:"hold,omitempty"`
	// Settled is the hold of a generation that ended, with what it counts.
	Settled *Hold `json:"-" dynamodbav:"settled,omitempty"`
	// SpendHold is the worst case of what the generation may cost, held
	// against the account's monthly spend limit while it is under way;
	// nil when no spend limit applies. Claims and hand-overs keep it; the
	// write that ends the generation, or takes it away, drops it, and the
	// tally function gives it back (shared/store, ledger.go).
	SpendHold *SpendHold `json:"-" dynamodbav:"spend_hold,omitempty"`
	// Parts are the parts of its content (a document's variants) the
	// request's tries have written so far: a try that ran out of time or
	// failed for a reason that may pass keeps what it wrote, and the next
	// try makes only the rest. Their tokens are InputTokens and
	// OutputTokens meanwhile.
	Parts Parts `json:"-" dynamodbav:"parts,omitempty"`
}

// Parts is a set of the numbered parts of a generation's content (a
// document's variants, from 1), one bit each: bit k-1 is part k.
type Parts int64

// With is the set with part k.
func (p Parts) With(k int) Parts { return p | 1<<(k-1) }

// Has reports whether part k is in the set.
func (p Parts) Has(k int) bool { return k >= 1 && p&(1<<(k-1)) != 0 }

// Hold is a part of the account's monthly quota held by a generation.
type Hold struct {
	// ID tells one request's hold from the next one's on the same record
	// (the request's first attempt).
	ID string `dynamodbav:"id"`
	// Usage names what is held: the counter item's usage attribute (its
	// kind and month, shared/quota), so that it is given back in the
	// month it was counted in.
	Usage string `dynamodbav:"usage"`
	// Held is what the generation's request counted.
	Held int64 `dynamodbav:"held"`
	// Used is what the ended generation counts of it: what its content
	// counts (Usage.Counted), at most Held, so that a generation never
	// counts more than its request was allowed to hold.
	Used int64 `dynamodbav:"used"`
}

// SpendHold is the worst case of a generation's cost, held on the
// account's spend ledger by the request that started it.
type SpendHold struct {
	// ID is the hold's mark on the ledger (the request's execution token).
	ID string `dynamodbav:"id"`
	// Committed names the ledger's attribute it is held in (its month).
	Committed string `dynamodbav:"committed"`
	// Held is the worst case held, in nano-dollars.
	Held USD `dynamodbav:"held"`
}

// settle ends the hold: used of it counts, at most what was held. The
// spend hold ends too: what the generation cost is counted as it is
// spent, and the tally gives the worst case back.
func (s State) settle(used int64) State {
	s.SpendHold = nil
	if s.Hold != nil {
		h := *s.Hold
		h.Used = min(max(used, 0), h.Held)
		s.Hold, s.Settled = nil, &h
	}
	return s
}

// Usage is what a finished generation consumed; images have no tokens.
type Usage struct {
	InputTokens, OutputTokens *int64
	// Counted is what the content counts against the account's monthly
	// quota of what the generation holds (a document's words).
	Counted int64
}

// Tokens is the usage of a text generation.
func Tokens(input, output int64) Usage { return Usage{InputTokens: &input, OutputTokens: &output} }

// Request starts a generation: a new attempt, pending, on the given model.
func Request(model string, now time.Time) State {
	return State{Status: Pending, Model: model, Attempt: NewAttempt(), RequestedAt: FormatTime(now)}
}

// Start is the state once a generator has taken the attempt up.
func (s State) Start(now time.Time) State {
	s.Status, s.StartedAt = Running, FormatTime(now)
	return s
}

// Claim is the state once a generator has taken a pending attempt up: it
// runs under a new attempt of its own, so that of two deliveries of the
// same pending state only the one whose claim landed may write back.
func (s State) Claim(now time.Time) State {
	s.Attempt = NewAttempt()
	return s.Start(now)
}

// Requeue hands the generation back to the queue: pending under a new
// attempt, so that whoever held the old one can no longer write. The
// request time stays, so the 15-minute clock keeps running across tries;
// retry counts the try as one that failed for a reason that may pass.
func (s State) Requeue(retry bool) State {
	s.Status, s.Attempt, s.StartedAt = Pending, NewAttempt(), ""
	if retry {
		s.Tries++
	}
	return s
}

// Finish is the state of an attempt that produced its content. The model is
// the one that answered, which is the one configured unless the deployment
// changed it since the request.
func (s State) Finish(model string, u Usage, now time.Time) State {
	s.Status, s.Model, s.Error = Done, model, nil
	s.InputTokens, s.OutputTokens = u.InputTokens, u.OutputTokens
	s.FinishedAt = ptr(FormatTime(now))
	return s.settle(u.Counted)
}

// Fail is the state of an attempt that ended without content.
func (s State) Fail(e *Error, now time.Time) State { return s.FailAfter(e, Output{}, now) }

// FailAfter is the state of an attempt that ended without all of its
// content, having written made of it (some of a document's variants):
// that part stays written, and counts.
func (s State) FailAfter(e *Error, made Output, now time.Time) State {
	if e == nil {
		e = NewError(Internal)
	}
	s.Status, s.Error = Failed, e.Public()
	s.FinishedAt = ptr(FormatTime(now))
	if made.Parts > 0 {
		s.Model, s.Parts = made.Model, made.Parts
		s.InputTokens, s.OutputTokens = made.Usage.InputTokens, made.Usage.OutputTokens
		return s.settle(made.Usage.Counted)
	}
	return s.settle(0)
}

// Keep is the state of a generation handed back to the queue holding
// made, the part of its content written so far: the next try makes the
// rest.
func (s State) Keep(made Output) State {
	if made.Parts > 0 {
		s.Parts = made.Parts
		s.InputTokens, s.OutputTokens = made.Usage.InputTokens, made.Usage.OutputTokens
	}
	return s
}

// Spend is the state with c more spent on the models: what the try that
// writes it cost, added to what the earlier tries did.
func (s State) Spend(c USD) State {
	s.CostUSD += max(c, 0)
	return s
}

// Deadline is when a pending or running state turns into a timeout; the
// zero time when the request time is unreadable (a record that says
// nothing of when it was asked for cannot be held to it).
func (s State) Deadline() time.Time {
	t, err := ParseTime(s.RequestedAt)
	if err != nil {
		return time.Time{}
	}
	return t.Add(MaxDuration)
}

// At is the state as it reads at now: a generation still pending or running
// past its deadline reads as failed with Timeout, finished at the deadline.
// Reads apply it, so no record shows pending for more than 15 minutes even
// when every generator that could have ended it is gone.
func (s State) At(now time.Time) State {
	if s.Status.Ended() {
		return s
	}
	d := s.Deadline()
	if d.IsZero() || now.Before(d) {
		return s
	}
	s.Status, s.Error = Failed, NewError(Timeout)
	s.FinishedAt = ptr(FormatTime(d))
	return s
}

// Expired is the state a generation past its deadline is written as, when
// something writes it: what it reads as (At), with its hold given back.
func (s State) Expired(now time.Time) State {
	if s.Status.Ended() || s.InFlight(now) {
		return s
	}
	return s.At(now).settle(0)
}

// InFlight reports whether the generation is still under way at now:
// pending or running, and not past its deadline. Only then may its attempt
// write the record back, and only then does a new request for generation
// conflict with it.
func (s State) InFlight(now time.Time) bool {
	return !s.At(now).Status.Ended()
}

// RetryAfter is when a request that conflicts with the generation in
// flight at now may succeed: the typical length of a generation, and never
// past the deadline, when the record reads as failed.
func (s State) RetryAfter(now time.Time) time.Duration {
	const typical = 10 * time.Second
	left := s.Deadline().Sub(now)
	if left <= 0 || left > typical {
		return typical
	}
	return left
}

// ErrSuperseded is a write of an attempt that no longer owns the record:
// another attempt took it over, it was regenerated or deleted, or its
// deadline passed. Whatever the attempt made must be thrown away.
var ErrSuperseded = errors.New("generation: the attempt no longer owns the record")

// InFlightError refuses a request that would overwrite a generation still
// under way (a regenerate, an edit of the generated field).
type InFlightError struct {
	// RetryAfter is when trying again makes sense.
	RetryAfter time.Duration
}

func (e *InFlightError) Error() string { return "generation: the record is being generated" }

// NewAttempt returns a fresh attempt id: 128 random bits in hex.
func NewAttempt() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on the platforms Go supports; an
		// attempt id that is not unique would break exactly-once writes.
		panic("generation: no randomness for an attempt id: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// Code classifies a failed generation for clients.
type Code string

// The codes a client sees in a failed generation's error.
const (
	Throttled        Code = "throttled"
	ContentFiltered  Code = "content_filtered"
	ModelUnavailable Code = "model_unavailable"
	Timeout          Code = "timeout"
	Internal         Code = "internal"
)

// Codes are the codes in that order (openapi.yaml lists them from here:
// make generate).
var Codes = []Code{Throttled, ContentFiltered, ModelUnavailable, Timeout, Internal}

// messages are what clients read for each code: what happened and whether
// trying again may help, never the model's or AWS's own words.
var messages = map[Code]string{
	Throttled:        "The model is busy. Try again in a moment.",
	ContentFiltered:  "The model's content filters blocked this request or its result. Change the input and try again.",
	ModelUnavailable: "The model is unavailable right now. Try again later.",
	Timeout:          "Generation did not finish in time. Try again.",
	Internal:         "Generation failed because of an internal error.",
}

// Retryable reports whether the same request may succeed later.
func (c Code) Retryable() bool { return c != ContentFiltered && c != Internal }

// Error is a failed generation as a client sees it, with the cause kept for
// logs (never stored, never shown).
type Error struct {
	Code    Code   `json:"code" dynamodbav:"code"`
	Message string `json:"message" dynamodbav:"message"`
	Cause   error  `json:"-" dynamodbav:"-"`
}

// NewError is the error of a code, with its public message.
func NewError(c Code) *Error {
	msg, ok := messages[c]
	if !ok {
		c, msg = Internal, messages[Internal]
	}
	return &Error{Code: c, Message: msg}
}

// Wrap is NewError keeping the cause for logs.
func Wrap(c Code, cause error) *Error {
	e := NewError(c)
	e.Cause = cause
	return e
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return string(e.Code) + ": " + e.Cause.Error()
	}
	return string(e.Code) + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// Public is the error without its cause: what may be stored and shown.
func (e *Error) Public() *Error {
	if e == nil {
		return nil
	}
	return &Error{Code: e.Code, Message: e.Message}
}

// ErrorOf classifies any error of a generation: an *Error as it is, a
// deadline as Timeout, anything else as Internal (its text is kept as the
// cause, for logs only).
func ErrorOf(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	// A caller that gave up (its deadline passed, or Lambda is ending the
	// invocation) leaves the generation unfinished: in time it was not.
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return Wrap(Timeout, err)
	}
	return Wrap(Internal, err)
}

func ptr[T any](v T) *T { return &v }
