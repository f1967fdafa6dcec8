package generation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"contentapi/shared/generation"
)

var t0 = time.Date(2026, 11, 21, 16, 48, 30, 123456789, time.UTC)

func TestTimesRoundTrip(t *testing.T) {
	back, err := generation.ParseTime(generation.FormatTime(t0))
	if err != nil || !back.Equal(t0.Truncate(time.Microsecond)) {
		t.Fatalf("ParseTime round trip = %v, %v", back, err)
	}
}

func TestLifecycle(t *testing.T) {
	s := generation.Request("amazon.nova-micro-v1:0", t0)
	if s.Status != generation.Pending || s.Attempt == "" || s.RequestedAt != generation.FormatTime(t0) {
		t.Fatalf("Request = %+v", s)
	}
	s = s.Start(t0.Add(time.Second))
	if s.Status != generation.Running || s.StartedAt != generation.FormatTime(t0.Add(time.Second)) {
		t.Fatalf("Start = %+v", s)
	}
	done := s.Finish("us.amazon.nova-micro-v1:0", generation.Tokens(12, 340), t0.Add(3*time.Second))
	if done.Status != generation.Done || done.Model != "us.amazon.nova-micro-v1:0" || done.Error != nil ||
		*done.InputTokens != 12 || *done.OutputTokens != 340 || *done.FinishedAt != generation.FormatTime(t0.Add(3*time.Second)) {
		t.Fatalf("Finish = %+v", done)
	}
	if done.Attempt != s.Attempt {
		t.Fatal("Finish changed the attempt: the conditional write-back would not match")
	}
	failed := s.Fail(generation.Wrap(generation.Throttled, errors.New("ThrottlingException: rate exceeded for account 1234")), t0.Add(time.Minute))
	if failed.Status != generation.Failed || failed.Error.Code != generation.Throttled || failed.Error.Cause != nil {
		t.Fatalf("Fail = %+v (the cause must not be stored)", failed)
	}
	if failed.InputTokens != nil || failed.OutputTokens != nil {
		t.Fatalf("a failure reports no tokens: %+v", failed)
	}
}

func TestAttemptsAreDistinct(t *testing.T) {
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 1000 {
		a := generation.NewAttempt()
		if !hex32.MatchString(a) || seen[a] {
			t.Fatalf("attempt %q: not 32 hex digits, or repeated", a)
		}
		seen[a] = true
	}
}

func TestAtTimesOutAfterFifteenMinutes(t *testing.T) {
	pending := generation.Request("m", t0)
	running := pending.Start(t0.Add(time.Minute))
	done := running.Finish("m", generation.Usage{}, t0.Add(2*time.Minute))
	failed := running.Fail(generation.NewError(generation.ContentFiltered), t0.Add(2*time.Minute))
	unreadable := pending
	unreadable.RequestedAt = "yesterday"
	deadline := generation.FormatTime(t0.Add(generation.MaxDuration))

	testCases := []struct {
		name       string
		state      generation.State
		at         time.Time
		wantStatus generation.Status
		wantCode   generation.Code
		wantEnd    string
	}{
		{"pending just before", pending, t0.Add(generation.MaxDuration - time.Microsecond), generation.Pending, "", ""},
		{"pending at the deadline", pending, t0.Add(generation.MaxDuration), generation.Failed, generation.Timeout, deadline},
		{"running long after", running, t0.Add(48 * time.Hour), generation.Failed, generation.Timeout, deadline},
		{"done stays done", done, t0.Add(48 * time.Hour), generation.Done, "", generation.FormatTime(t0.Add(2 * time.Minute))},
		{"failed keeps its code", failed, t0.Add(48 * time.Hour), generation.Failed, generation.ContentFiltered, generation.FormatTime(t0.Add(2 * time.Minute))},
		{"unreadable request time", unreadable, t0.Add(48 * time.Hour), generation.Pending, "", ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.state.At(tc.at)
			if got.Status != tc.wantStatus {
				t.Fatalf("status = %s, want %s", got.Status, tc.wantStatus)
			}
			var code generation.Code
			if got.Error != nil {
				code = got.Error.Code
			}
			if code != tc.wantCode {
				t.Fatalf("code = %q, want %q", code, tc.wantCode)
			}
			end := ""
			if got.FinishedAt != nil {
				end = *got.FinishedAt
			}
			if end != tc.wantEnd {
				t.Fatalf("finished_at = %q, want %q", end, tc.wantEnd)
			}
		})
	}
}

func TestJSONShowsTheContractFieldsOnly(t *testing.T) {
	s := generation.Request("amazon.nova-micro-v1:0", t0).Start(t0)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": "running", "model": "amazon.nova-micro-v1:0", "error": nil,
		"input_tokens": nil, "output_tokens": nil, "cost_usd": float64(0), "finished_at": nil}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("JSON = %s, want the keys and values of %v", b, want)
	}

	f := s.Fail(generation.Wrap(generation.ModelUnavailable, errors.New("AccessDeniedException: arn:aws:iam::1234")), t0)
	b, _ = json.Marshal(f)
	if regexp.MustCompile(`arn:|Access|attempt|cause`).Match(b) {
		t.Fatalf("JSON leaks internals: %s", b)
	}
}

func TestStoredFieldsKeepTheAttempt(t *testing.T) {
	s := generation.Request("m", t0).Start(t0).Fail(generation.Wrap(generation.Internal, errors.New("secret")), t0)
	item, err := attributevalue.MarshalMap(s)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range item {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"attempt", "error", "finished_at", "input_tokens", "model", "output_tokens", "requested_at", "started_at", "status"}
	if !slices.Equal(keys, want) {
		t.Fatalf("stored attributes = %v, want %v", keys, want)
	}
	var back generation.State
	if err := attributevalue.UnmarshalMap(item, &back); err != nil {
		t.Fatal(err)
	}
	if back.Attempt != s.Attempt || back.Error.Code != generation.Internal || back.Error.Cause != nil {
		t.Fatalf("round trip = %+v", back)
	}
}

func TestErrorOf(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	testCases := []struct {
		name string
		err  error
		want generation.Code
	}{
		{"classified", generation.NewError(generation.ContentFiltered), generation.ContentFiltered},
		{"classified, wrapped", fmt.Errorf("worker: %w", generation.NewError(generation.Throttled)), generation.Throttled},
		{"deadline", fmt.Errorf("call: %w", context.DeadlineExceeded), generation.Timeout},
		{"canceled", ctx.Err(), generation.Timeout},
		{"anything else", errors.New("unexpected EOF"), generation.Internal},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := generation.ErrorOf(tc.err)
			if got.Code != tc.want {
				t.Fatalf("code = %s, want %s", got.Code, tc.want)
			}
			if got.Message == "" || got.Message == tc.err.Error() {
				t.Fatalf("message %q is not the public one", got.Message)
			}
		})
	}
	if generation.ErrorOf(nil) != nil {
		t.Fatal("ErrorOf(nil) is not nil")
	}
}

func TestEveryCodeHasAPublicMessage(t *testing.T) {
	for _, c := range generation.Codes {
		if e := generation.NewError(c); e.Code != c || e.Message == "" {
			t.Errorf("NewError(%s) = %+v", c, e)
		}
	}
	if e := generation.NewError("bogus"); e.Code != generation.Internal {
		t.Errorf("an unknown code must read as internal, got %+v", e)
	}
	if generation.ContentFiltered.Retryable() || !generation.Throttled.Retryable() {
		t.Error("Retryable: content_filtered is final, throttled is not")
	}
}

func TestInFlight(t *testing.T) {
	pending := generation.Request("m", t0)
	testCases := []struct {
		name  string
		state generation.State
		at    time.Time
		want  bool
	}{
		{"pending", pending, t0.Add(time.Minute), true},
		{"running", pending.Start(t0), t0.Add(14 * time.Minute), true},
		{"past the deadline", pending.Start(t0), t0.Add(generation.MaxDuration), false},
		{"done", pending.Finish("m", generation.Usage{}, t0), t0, false},
		{"failed", pending.Fail(nil, t0), t0, false},
	}
	for _, tc := range testCases {
		if got := tc.state.InFlight(tc.at); got != tc.want {
			t.Errorf("%s: InFlight = %v, want %v", tc.name, got, tc.want)
		}
	}
	if f := pending.Fail(nil, t0); f.Error == nil || f.Error.Code != generation.Internal {
		t.Errorf("Fail(nil) = %+v, want an internal error", f.Error)
	}
}

// A hold stays with the generation's steps and is settled by its end: the
// content's count, at most the hold; nothing for a failure or a timeout.
func TestHoldSettledByTheEnd(t *testing.T) {
	s := generation.Request("m", t0)
	s.Hold = &generation.Hold{ID: s.Attempt, Usage: "used_words_2026_11", Held: 4096}
	running := s.Claim(t0).Requeue(true).Claim(t0)
	if running.Hold == nil || *running.Hold != *s.Hold || running.Settled != nil {
		t.Fatalf("claims and hand-overs changed the hold: %+v %+v", running.Hold, running.Settled)
	}
	for _, tc := range []struct {
		name string
		end  generation.State
		used int64
	}{
		{"done", running.Finish("m", generation.Usage{Counted: 300}, t0), 300},
		{"done past the hold", running.Finish("m", generation.Usage{Counted: 9000}, t0), 4096},
		{"failed", running.Fail(nil, t0), 0},
		{"expired", running.Expired(t0.Add(16 * time.Minute)), 0},
	} {
		if tc.end.Hold != nil || tc.end.Settled == nil || tc.end.Settled.Used != tc.used || tc.end.Settled.ID != s.Attempt {
			t.Errorf("%s: hold %+v, settled %+v, want %d used", tc.name, tc.end.Hold, tc.end.Settled, tc.used)
		}
	}
	if e := running.Expired(t0.Add(16 * time.Minute)); e.Status != generation.Failed || e.Error.Code != generation.Timeout {
		t.Errorf("expired reads %v %v", e.Status, e.Error)
	}
	if still := running.Expired(t0.Add(time.Minute)); still.Hold == nil {
		t.Error("a generation within its deadline expired")
	}
}
