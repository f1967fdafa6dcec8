// Package records holds the rules both resources share, free of HTTP and
// AWS: which fields a resource has, how each is validated, what a list
// request may ask for and how a page is counted. A resource is a value of
// Resource; images and documents are two such values, not two codebases.
// What a client sent comes in as an Input (a body) or a Query, filled by
// the HTTP layer and judged here (input.go).
package records

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind validates one field's raw value and converts it to the stored Go
// value (string, bool, int64 or float64). It returns a message when the
// value is invalid.
type Kind interface {
	parse(field string, v InputValue) (any, string)
}

// Text is a string of Min..Max Unicode characters, trimmed, holding no
// control characters but tab, CR and LF.
type Text struct{ Min, Max int }

func (k Text) parse(field string, v InputValue) (any, string) {
	if v.Type != InputString {
		return nil, fmt.Sprintf("The %s field must be a string.", label(field))
	}
	s := v.Text
	if msg := checkText(field, s); msg != "" {
		return nil, msg
	}
	n := utf8.RuneCountInString(s)
	if n > k.Max {
		return nil, fmt.Sprintf("The %s field must not be greater than %d characters.", label(field), k.Max)
	}
	if n < k.Min {
		return nil, fmt.Sprintf("The %s field must be at least %d characters.", label(field), k.Min)
	}
	return s, ""
}

// checkText refuses what no text field may hold.
func checkText(field, s string) string {
	if !utf8.ValidString(s) {
		return fmt.Sprintf("The %s field must be valid UTF-8 text.", label(field))
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\t' && r != '\r' && r != '\n' {
			return fmt.Sprintf("The %s field must not contain control characters.", label(field))
		}
	}
	return ""
}

// Enum is one of a fixed set of strings.
type Enum []string

func (k Enum) parse(field string, v InputValue) (any, string) {
	if v.Type != InputString || !slices.Contains(k, v.Text) {
		return nil, fmt.Sprintf("The selected %s is invalid.", label(field))
	}
	return v.Text, ""
}

// AnyCase is one of a fixed set of strings, matched in any letter case and
// given back as listed: BCP 47 language tags, where "PT-br" is "pt-BR".
type AnyCase []string

func (k AnyCase) parse(field string, v InputValue) (any, string) {
	if v.Type == InputString {
		for _, s := range k {
			if strings.EqualFold(s, v.Text) {
				return s, ""
			}
		}
	}
	return nil, fmt.Sprintf("The selected %s is invalid.", label(field))
}

// Bool is a flag sent as 1, 0, true or false (or a JSON boolean), or as
// on, off, yes or no: what an HTML checkbox sends checked (on) and what
// Laravel's boolean rule takes. Text is taken in any letter case.
type Bool struct{}

// BoolSpellings are the texts a flag takes, in any letter case, true's and
// false's (openapi.yaml's patterns and docs/api.md list them).
var BoolSpellings = map[bool][]string{
	true:  {"1", "true", "on", "yes"},
	false: {"0", "false", "off", "no"},
}

func (Bool) parse(field string, v InputValue) (any, string) {
	switch {
	case v.Type == InputBool:
		return v.Text == "true", ""
	case v.Type == InputString:
		for _, b := range []bool{true, false} {
			if slices.Contains(BoolSpellings[b], strings.ToLower(v.Text)) {
				return b, ""
			}
		}
	case v.Type == InputNumber:
		// A JSON number is its value, however written: 1.0 is 1, as it is
		// to every JSON Schema validator of the published document.
		switch f, _ := strconv.ParseFloat(v.Text, 64); f {
		case 1:
			return true, ""
		case 0:
			return false, ""
		}
	}
	return nil, fmt.Sprintf("The %s field must be true or false.", label(field))
}

// decimal is a plain decimal number as people write it in text: "1",
// "1.0", ".5". strconv alone would also take hex, "Inf" and "NaN"; an
// exponent is left out so that the spellings of each allowed value stay a
// regular language, which the OpenAPI document states as a pattern.
var decimal = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)$`)

// number is the value of a JSON number or of a decimal text: a JSON number
// counts by its value however it is written (5e-1 is 0.5), text only in
// plain decimal spellings.
func number(v InputValue) (float64, bool) {
	switch {
	case v.Type == InputNumber:
	case v.Type == InputString && decimal.MatchString(v.Text):
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(v.Text, 64)
	return f, err == nil
}

// Choice is a number from a fixed set; any decimal spelling of a member is
// that member ("0.50" is 0.5).
type Choice []float64

func (k Choice) parse(field string, v InputValue) (any, string) {
	if f, ok := number(v); ok && slices.Contains(k, f) {
		return f, ""
	}
	return nil, fmt.Sprintf("The selected %s is invalid.", label(field))
}

// Int is a whole number in Min..Max: in text, digits only (leading zeros
// allowed, no sign); as a JSON number, any spelling of a whole value (9.0).
type Int struct{ Min, Max int64 }

var digits = regexp.MustCompile(`^\d+$`)

func (k Int) parse(field string, v InputValue) (any, string) {
	if n, ok := k.value(v); ok && n >= k.Min && n <= k.Max {
		return n, ""
	}
	return nil, fmt.Sprintf("The selected %s is invalid.", label(field))
}

// maxDigits keeps a whole number far from int64 overflow; the allowed
// ranges are much smaller.
const maxDigits = 18

func (k Int) value(v InputValue) (int64, bool) {
	switch v.Type {
	case InputString:
		if !digits.MatchString(v.Text) {
			return 0, false
		}
		s := strings.TrimLeft(v.Text, "0")
		if s == "" {
			return 0, true
		}
		if len(s) > maxDigits {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	case InputNumber:
		f, ok := number(v)
		if !ok || f != math.Trunc(f) || math.Abs(f) > 1e18 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

// label is how Laravel names a field in a message: "template_id" reads
// "template id". Names are cut short, as in the report's keys.
func label(field string) string { return strings.ReplaceAll(shortName(field), "_", " ") }
