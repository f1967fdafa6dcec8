// Package fold turns text into the form that search and name order compare:
// Unicode case folding plus accent removal, so "CAFÉ" and "my cafe" meet.
package fold

import (
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// The chain decomposes (compatibility form, so ligatures and full-width
// letters fold too), drops combining marks, case-folds and recomposes.
// transform.Chain keeps state, so each call builds its own; the parts are
// stateless and shared.
var (
	dropMarks = runes.Remove(runes.In(unicode.Mn))
	caseFold  = cases.Fold()
)

// String returns the folded form of s. Tab, CR and LF become spaces so a
// folded name can carry a separator below every character it may hold.
func String(s string) string {
	t := transform.Chain(norm.NFKD, dropMarks, caseFold, norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		// Only invalid UTF-8 can fail here, and input is validated before it
		// is folded; fall back to a plain lower-casing rather than panic.
		out = strings.ToLower(s)
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, out)
}
