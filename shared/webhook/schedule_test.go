package webhook_test

import (
	"testing"
	"time"

	"contentapi/shared/webhook"
)

// The contract's schedule: 8 attempts, retried after 5 s, 5 min, 30 min,
// 2 h, 5 h, 10 h, 10 h, each within SQS's 12 h visibility limit.
func TestDefaultScheduleIsTheContracts(t *testing.T) {
	s := webhook.DefaultSchedule
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	if s.Attempts() != 8 {
		t.Errorf("%d attempts, want 8", s.Attempts())
	}
	for i, w := range want {
		got, ok := s.Retry(i + 1)
		if !ok || got != w {
			t.Errorf("after attempt %d: %v %v, want %v", i+1, got, ok, w)
		}
		if got > 12*time.Hour {
			t.Errorf("wait %v exceeds SQS's visibility limit", got)
		}
	}
	if _, ok := s.Retry(8); ok {
		t.Error("a 9th attempt is scheduled")
	}
	if _, ok := s.Retry(0); ok {
		t.Error("attempt 0 is retried")
	}
}

func TestDisableAfterFiveDaysOfFailures(t *testing.T) {
	since := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		since time.Time
		now   time.Time
		want  bool
	}{
		{since, since.Add(5*24*time.Hour - time.Second), false},
		{since, since.Add(5 * 24 * time.Hour), true},
		{time.Time{}, since.Add(30 * 24 * time.Hour), false}, // the last attempt succeeded
	} {
		if got := webhook.Disable(c.since, c.now); got != c.want {
			t.Errorf("failing since %v, failure at %v: %v, want %v", c.since, c.now, got, c.want)
		}
	}
}
