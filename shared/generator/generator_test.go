package generator

import (
	"testing"
	"time"
)

func TestDefaultBackoff(t *testing.T) {
	for _, tc := range []struct {
		tries    int
		min, max time.Duration
	}{
		{0, 0, 0},
		{1, time.Second, 2 * time.Second},
		{2, 4 * time.Second, 8 * time.Second},
		{3, 16 * time.Second, 32 * time.Second},
		{9, 256 * time.Second, 512 * time.Second},
	} {
		for range 50 {
			if d := DefaultBackoff(tc.tries); d < tc.min || d > tc.max {
				t.Fatalf("DefaultBackoff(%d) = %v, want %v to %v", tc.tries, d, tc.min, tc.max)
			}
		}
	}
}
