// Package fold turns text into the form that search and name order compare:
// Unicode case folding plus accent removal, so "CAFÉ" and "my cafe" meet.
package fold

import (
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// dropMarks removes combining marks; stateless, so shared.
var dropMarks = runes.Remove(runes.In(unicode.Mn))

// String returns the folded form of s: decomposed (compatibility form, so
// ligatures and full-width letters fold too), without combining marks,
// case-folded as golang.org/x/text/cases.Fold does (full folding: "ß" is
// "ss") and recomposed. Tab, CR and LF become spaces so a folded name can
// carry a separator below every character it may hold.
//
// The folding is foldRune: the runes whose folding is not their lower case
// come from a table generated from x/text's cases package, which the tests
// hold to cases.Fold rune by rune. Linking cases itself would bring its
// language tables, 0.2 MB of a bootstrap, for this one mapping.
func String(s string) string {
	// transform.Chain keeps state, so each call builds its own.
	bare, _, err := transform.String(transform.Chain(norm.NFKD, dropMarks), s)
	if err != nil {
		// Only invalid UTF-8 can fail here, and input is validated before it
		// is folded; fall back to a plain lower-casing rather than panic.
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(bare))
	for _, r := range bare {
		switch r {
		case '\t', '\r', '\n':
			b.WriteByte(' ')
		default:
			if f, ok := foldings[r]; ok {
				b.WriteString(f)
			} else {
				b.WriteRune(unicode.ToLower(r))
			}
		}
	}
	return norm.NFC.String(b.String())
}
