package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxWait is the longest wait a request may prefer (docs/api.md: wait=1-25),
// within the HTTP API's 30 s.
const MaxWait = 25 * time.Second

// Prefer is what a request's Prefer headers ask of how long it waits
// (RFC 7240). Preferences it does not know, and values that do not parse,
// are ignored, as RFC 7240 has servers do.
type Prefer struct {
	// Async: answer at once (respond-async).
	Async bool
	// Wait is the longest wait asked for, 1 s to MaxWait (a larger value
	// counts as MaxWait); 0 when not asked.
	Wait time.Duration
}

// ParsePrefer reads the Prefer headers of a request.
func ParsePrefer(h http.Header) Prefer {
	var p Prefer
	for _, line := range h.Values("Prefer") {
		for _, pref := range strings.Split(line, ",") {
			// A preference's own parameters (after ";") change nothing here.
			pref, _, _ = strings.Cut(pref, ";")
			name, value, _ := strings.Cut(strings.TrimSpace(pref), "=")
			value = strings.Trim(strings.TrimSpace(value), `"`)
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "respond-async":
				p.Async = true
			case "wait":
				if p.Wait > 0 {
					continue // the first one counts
				}
				n, err := strconv.ParseUint(value, 10, 32)
				if err == nil && n > 0 {
					p.Wait = min(time.Duration(n)*time.Second, MaxWait)
				}
			}
		}
	}
	return p
}

// Applied is the Preference-Applied value naming how the request waits:
// respond-async, wait=N, or "" when it applied neither.
func (p Prefer) Applied() string {
	switch {
	case p.Async:
		return "respond-async"
	case p.Wait > 0:
		return "wait=" + strconv.Itoa(int(p.Wait/time.Second))
	}
	return ""
}
