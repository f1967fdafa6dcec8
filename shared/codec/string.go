package codec

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
	"unsafe"
)

// AppendString appends s as a JSON string, as AppendJSON writes one: for
// a line built by hand that must read as the service's other JSON.
func AppendString(b []byte, s string) []byte { return appendString(b, s) }

// appendString writes s as a JSON string exactly as encoding/json does
// with HTML escaping off: `"` and `\` escaped, control characters as \b,
// \f, \n, \r, \t or \u00XX, invalid UTF-8 as \ufffd, and U+2028 and U+2029
// as \u2028 and \u2029 (JavaScript takes them for line ends).
//
// Generated text is long and almost all plain, so s is read eight bytes at
// a time and copied a run at a time: the common bytes cost a few
// instructions per word, where encoding/json tests each one.
func appendString(b []byte, s string) []byte {
	// The bytes of s, read in place: nothing writes through this view.
	p := unsafe.Slice(unsafe.StringData(s), len(s))
	b = slices.Grow(b, len(s)+2)
	b = append(b, '"')
	start := 0
	for i := 0; ; {
		i += plainPrefix(p[i:])
		if i == len(p) {
			break
		}
		b = append(b, s[start:i]...)
		var size int
		b, size = appendSpecial(b, s[i:])
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainPrefix is how many bytes of p are written as they are: printable
// ASCII but `"` and `\`, and whole UTF-8 characters but U+2028 and U+2029.
func plainPrefix(p []byte) int {
	i := 0
	for i < len(p) {
		// Eight bytes at a time, sixteen while there are: the window q
		// keeps bounds checks out of the loop.
		q := p[i:]
		for len(q) >= 16 && special(binary.LittleEndian.Uint64(q[:8]))|special(binary.LittleEndian.Uint64(q[8:16])) == 0 {
			q = q[16:]
		}
		for len(q) >= 8 {
			if m := special(binary.LittleEndian.Uint64(q[:8])); m != 0 {
				// Its lowest flagged byte is one to look at (a borrow only
				// flags bytes above one that is): the plain bytes before it
				// are skipped at once rather than one at a time.
				q = q[bits.TrailingZeros64(m)/8:]
				break
			}
			q = q[8:]
		}
		i = len(p) - len(q)
		if i == len(p) {
			return i
		}
		c := p[i]
		switch {
		case c < 0x20 || c == '"' || c == '\\':
			return i
		case c < utf8.RuneSelf:
			i++
		case c >= 0xC2 && c < 0xE0 && i+1 < len(p) && p[i+1]&0xC0 == 0x80:
			// Two bytes, the most common: accents. Never U+2028 or U+2029.
			i += 2
		default:
			r, size := utf8.DecodeRune(p[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return i
			}
			i += size
		}
	}
	return i
}

// special has the high bit of a byte of x set when the byte is below 0x20,
// '"', '\' or not ASCII (then it is set in x itself). A borrow may also
// set it in bytes above one that is, which only sends them the slow way.
func special(x uint64) uint64 {
	return ((x - lows*0x20) | ((x ^ lows*'"') - lows) | ((x ^ lows*'\\') - lows) | x) & highs
}

const hex = "0123456789abcdef"

// appendSpecial writes the first character of s, one plainPrefix stopped
// at, and returns how many bytes of s it took.
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
		return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF]), 1
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 {
		return append(b, `\ufffd`...), 1
	}
	// U+2028 or U+2029.
	return append(b, '\\', 'u', '2', '0', '2', hex[r&0xF]), size
}

// QuotedLen is the length of p written as a JSON string (quotes included),
// as appendString, encoding/json with HTML escaping off and so the Lambda
// runtime write it, without writing it: what a body costs inside the
// response event, where it travels as one string.
func QuotedLen(p []byte) int {
	n := 2 + len(p)
	var scratch [8]byte
	for i := 0; ; {
		i += plainPrefix(p[i:])
		if i == len(p) {
			return n
		}
		escaped, size := appendSpecial(scratch[:0], unsafe.String(&p[i], len(p)-i))
		n += len(escaped) - size
		i += size
	}
}
