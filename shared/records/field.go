// Package records holds the rules both resources share, free of HTTP and
// AWS: which fields a resource has, how each is validated, what a list
// request may ask for and how a page is counted. A resource is a value of
// Resource; images and documents are two such values, not two codebases.
package records

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"contentapi/shared/input"
)

// Kind validates one field's raw value and converts it to the stored Go
// value (string, bool, int64 or float64). It returns a message when the
// value is invalid.
type Kind interface {
	parse(field string, v input.Value) (any, string)
}

// Text is a string of Min..Max Unicode characters, trimmed, holding no
// control characters but tab, CR and LF.
type Text struct{ Min, Max int }

func (k Text) parse(field string, v input.Value) (any, string) {
	if v.Kind != input.KindString {
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

func (k Enum) parse(field string, v input.Value) (any, string) {
	if v.Kind != input.KindString || !slices.Contains(k, v.Text) {
		return nil, fmt.Sprintf("The selected %s is invalid.", label(field))
	}
	return v.Text, ""
}

// Bool is a flag sent as 1, 0, true or false (or a JSON boolean).
type Bool struct{}

func (Bool) parse(field string, v input.Value) (any, string) {
	switch {
	case v.Kind == input.KindBool:
		return v.Text == "true", ""
	case v.Kind == input.KindString || v.Kind == input.KindNumber:
		switch strings.ToLower(v.Text) {
		case "1", "true":
			return true, ""
		case "0", "false":
			return false, ""
		}
	}
	return nil, fmt.Sprintf("The %s field must be true or false.", label(field))
}

// decimal is a plain decimal number as people write it: "1", "1.0", ".5".
// strconv alone would also take hex, "Inf" and "NaN".
var decimal = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$`)

// Choice is a number from a fixed set; any decimal spelling of a member is
// that member ("0.50" is 0.5).
type Choice []float64

func (k Choice) parse(field string, v input.Value) (any, string) {
	if v.Kind == input.KindString || v.Kind == input.KindNumber {
		if decimal.MatchString(v.Text) {
			if f, err := strconv.ParseFloat(v.Text, 64); err == nil && slices.Contains(k, f) {
				return f, ""
			}
		}
	}
	return nil, fmt.Sprintf("The selected %s is invalid.", label(field))
}

// Int is a whole number in Min..Max.
type Int struct{ Min, Max int64 }

var digits = regexp.MustCompile(`^\d{1,18}$`)

func (k Int) parse(field string, v input.Value) (any, string) {
	if (v.Kind == input.KindString || v.Kind == input.KindNumber) && digits.MatchString(v.Text) {
		if n, err := strconv.ParseInt(v.Text, 10, 64); err == nil && n >= k.Min && n <= k.Max {
			return n, ""
		}
	}
	return nil, fmt.Sprintf("The selected %s is invalid.", label(field))
}

// label is how Laravel names a field in a message: "template_id" reads
// "template id". Names are cut short, as in the report's keys.
func label(field string) string { return strings.ReplaceAll(shortName(field), "_", " ") }
