package codec

import (
	"encoding/binary"
	"unicode/utf8"
)

// appendString writes s as a JSON string exactly as encoding/json does
// with HTML escaping off: `"` and `\` escaped, control characters as \b,
// \f, \n, \r, \t or \u00XX, invalid UTF-8 as \ufffd, and U+2028 and U+2029
// as \u2028 and \u2029 (JavaScript takes them for line ends).
//
// Generated text is long and almost all plain: s is copied a run at a time
// and the copy checked eight bytes at once, so the common bytes cost a few
// instructions per word instead of a test each.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for len(s) > 0 {
		n := min(len(s), runLength)
		start := len(b)
		b = append(b, s[:n]...)
		clean := plainPrefix(b[start:])
		if clean == n {
			s = s[n:]
			continue
		}
		// Drop the copy from the first byte that needs care on, and write
		// that character the way encoding/json does.
		b = b[:start+clean]
		s = s[clean:]
		var size int
		b, size = appendSpecial(b, s)
		s = s[size:]
	}
	return append(b, '"')
}

// runLength bounds how much is copied ahead of a check: a string full of
// escapes copies at most this much in vain per escape.
const runLength = 256

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainPrefix is how many bytes of p are written as they are: printable
// ASCII but `"` and `\`, and whole UTF-8 characters but U+2028 and U+2029.
func plainPrefix(p []byte) int {
	i := 0
	for i < len(p) {
		for i+8 <= len(p) {
			x := binary.LittleEndian.Uint64(p[i:])
			// Flags, in the high bit of each byte, bytes below 0x20, equal
			// to '"' or '\', or non-ASCII; a flag may also spill into the
			// bytes above a flagged one, which only sends them the slow way.
			special := ((x - lows*0x20) | hasZero(x^(lows*'"')) | hasZero(x^(lows*'\\')) | x) & highs
			if special != 0 {
				break
			}
			i += 8
		}
		if i == len(p) {
			return i
		}
		c := p[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				return i
			}
			i++
			continue
		}
		// Invalid UTF-8 stops here, and so does a character cut by the
		// run's end, which appendSpecial then sees whole.
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return i
		}
		i += size
	}
	return i
}

func hasZero(x uint64) uint64 { return (x - lows) & ^x }

const hex = "0123456789abcdef"

// appendSpecial writes the first character of s, one plainPrefix stopped
// at (or a plain one cut by a run's end), and returns how many bytes of s
// it took.
func appendSpecial(b []byte, s string) ([]byte, int) {
	c := s[0]
	if c < utf8.RuneSelf {
		switch c {
		case '"', '\\':
			return append(b, '\\', c), 1
		case '\b':
			return append(b, '\\', 'b'), 1
		case '\f':
			return append(b, '\\', 'f'), 1
		case '\n':
			return append(b, '\\', 'n'), 1
		case '\r':
			return append(b, '\\', 'r'), 1
		case '\t':
			return append(b, '\\', 't'), 1
		}
		if c < 0x20 {
			return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF]), 1
		}
		return append(b, c), 1
	}
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && size == 1:
		return append(b, `\ufffd`...), 1
	case r == '\u2028' || r == '\u2029':
		return append(b, '\\', 'u', '2', '0', '2', hex[r&0xF]), size
	}
	return append(b, s[:size]...), size
}
