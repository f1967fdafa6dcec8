package webhook

import "time"

// Schedule is the wait before each retry of a failed attempt: the first
// attempt goes out at once, retry i waits Schedule[i-1] after attempt i
// failed, and when the schedule is spent the delivery has failed.
type Schedule []time.Duration

// DefaultSchedule is the public contract's: about 5 s, 5 min, 30 min,
// 2 h, 5 h, 10 h and 10 h (eight attempts over about 28 hours, as Svix's).
// Each wait fits SQS's longest visibility timeout (12 h), which is how the
// sender waits: it hides the message for the wait and reports it failed.
// Only the local stack's tests shorten it (cmd/local); a function always
// uses this one.
var DefaultSchedule = Schedule{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// Attempts is how many attempts a delivery gets.
func (s Schedule) Attempts() int { return len(s) + 1 }

// Retry says how long to wait after attempt number made (1 for the first)
// failed, and false when that was the last attempt.
func (s Schedule) Retry(made int) (time.Duration, bool) {
	if made < 1 || made > len(s) {
		return 0, false
	}
	return s[made-1], true
}

// SlowAnswer is how long a receiver may take to answer and still count as
// answering in time: an endpoint whose last attempt took longer, or
// failed, has its deliveries attempted in the sender's slow lane
// (hooksender), apart from the receivers that answer in time, until one is
// answered 2xx in time again.
const SlowAnswer = 2 * time.Second

// DisableAfter is how long every delivery to an endpoint must have failed
// before the endpoint is disabled (Svix's rule): an endpoint that failed
// since failingSince is disabled by a failure at now once this has passed.
const DisableAfter = 5 * 24 * time.Hour

// Disable says whether a failure at now disables an endpoint that has
// failed every delivery since failingSince (zero when its last attempt
// succeeded).
func Disable(failingSince, now time.Time) bool {
	return !failingSince.IsZero() && now.Sub(failingSince) >= DisableAfter
}
