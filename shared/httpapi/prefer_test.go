package httpapi

import (
	"net/http"
	"testing"
	"time"
)

func TestParsePrefer(t *testing.T) {
	testCases := []struct {
		name    string
		headers []string
		want    Prefer
		applied string
	}{
		{"none", nil, Prefer{}, ""},
		{"async", []string{"respond-async"}, Prefer{Async: true}, "respond-async"},
		{"wait", []string{"wait=5"}, Prefer{Wait: 5 * time.Second}, "wait=5"},
		{"case and spaces", []string{"  Respond-Async ,  WAIT = 7 "}, Prefer{Async: true, Wait: 7 * time.Second}, "respond-async"},
		{"quoted", []string{`wait="9"`}, Prefer{Wait: 9 * time.Second}, "wait=9"},
		{"more than 25 counts as 25", []string{"wait=600"}, Prefer{Wait: 25 * time.Second}, "wait=25"},
		{"zero is ignored", []string{"wait=0"}, Prefer{}, ""},
		{"garbage is ignored", []string{"wait=soon", "wait=-3", "wait=1.5"}, Prefer{}, ""},
		{"unknown preferences are ignored", []string{"return=minimal, handling=strict"}, Prefer{}, ""},
		{"parameters are ignored", []string{"wait=3;foo=bar"}, Prefer{Wait: 3 * time.Second}, "wait=3"},
		{"the first wait counts, across headers", []string{"wait=4", "wait=8"}, Prefer{Wait: 4 * time.Second}, "wait=4"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.headers {
				h.Add("Prefer", v)
			}
			got := ParsePrefer(h)
			if got != tc.want || got.Applied() != tc.applied {
				t.Errorf("ParsePrefer(%q) = %+v applied %q, want %+v applied %q", tc.headers, got, got.Applied(), tc.want, tc.applied)
			}
		})
	}
}
