package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"contentapi/shared/app"
	"contentapi/shared/documents"
	"contentapi/shared/generation"
	"contentapi/shared/images"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// declared is every value the documents copy from the code, by the name
// their marks give it.
func declared() map[string]*yaml.Node {
	v := map[string]*yaml.Node{}
	for _, e := range []struct {
		name     string
		enum     records.Enum
		optional bool
	}{
		{"images.Resolutions", images.Resolutions, false},
		{"images.Styles", images.Styles, true},
		{"images.Media", images.Media, true},
		{"images.Filters", images.Filters, true},
	} {
		v[e.name] = list(e.enum)
		v[e.name+" trimmed"] = quoted(trimmed(e.enum))
		if e.optional {
			// An image shows an optional value not given as null.
			v[e.name+" or null"] = list(append(e.enum, ""))
		}
	}

	v["documents.Templates"] = list(documents.Templates[documents.FreestyleID:])
	var byID []string
	for id, name := range documents.Templates {
		if id >= documents.FreestyleID {
			byID = append(byID, fmt.Sprint(id, " ", name))
		}
	}
	v["documents.Templates by id"] = &yaml.Node{Kind: yaml.ScalarNode, Style: yaml.LiteralStyle,
		Value: "A document template, by id: " + strings.Join(byID, ", ") + ".\n"}
	v["documents.Templates last id"] = plain("!!int", strconv.Itoa(len(documents.Templates)-1))

	for _, r := range app.Resources {
		v["store.IndexAttributes("+r.Def.Name+")"] = list(store.IndexAttributes(r.Def))
	}

	v["generation.Statuses"] = list(generation.Statuses)
	v["generation.Codes"] = list(generation.Codes)
	return v
}

// list is a flow list of values; "" is null.
func list[S ~[]E, E ~string](values S) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range values {
		if s == "" {
			n.Content = append(n.Content, plain("!!null", "null"))
			continue
		}
		n.Content = append(n.Content, plain("!!str", string(s)))
	}
	return n
}

func plain(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: s}
}

// trimmed is the pattern of a value of enum with white space around it,
// which the service trims (input reads every field through
// strings.TrimSpace).
func trimmed(enum records.Enum) string {
	quoted := make([]string, len(enum))
	for i, s := range enum {
		quoted[i] = regexp.QuoteMeta(s)
	}
	return "^" + space + "*(?:" + strings.Join(quoted, "|") + ")" + space + "*$"
}

// space is the regular expression class of what strings.TrimSpace trims,
// unicode.White_Space: ASCII and Latin-1 characters as escapes, the others
// as themselves.
var space = func() string {
	var runes []rune
	for _, r16 := range unicode.White_Space.R16 {
		for r := rune(r16.Lo); r <= rune(r16.Hi); r += rune(r16.Stride) {
			runes = append(runes, r)
		}
	}
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < len(runes); {
		j := i
		for j+1 < len(runes) && runes[j+1] == runes[j]+1 {
			j++
		}
		switch j - i {
		case 0:
			b.WriteString(classRune(runes[i]))
		case 1:
			b.WriteString(classRune(runes[i]) + classRune(runes[j]))
		default:
			b.WriteString(classRune(runes[i]) + "-" + classRune(runes[j]))
		}
		i = j + 1
	}
	b.WriteString("]")
	return b.String()
}()

func classRune(r rune) string {
	switch {
	case r == ' ' || r > 0xFF:
		return string(r)
	case r >= '\t' && r <= '\r':
		return `\` + string("tnvfr"[r-'\t'])
	default:
		return fmt.Sprintf(`\x%02X`, r)
	}
}
