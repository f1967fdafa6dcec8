package listgen

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/documents"
	"contentapi/shared/generation"
	"contentapi/shared/hookapi"
	"contentapi/shared/hookstore"
	"contentapi/shared/idempotency"
	"contentapi/shared/ratelimit"
	"contentapi/shared/records"
	"contentapi/shared/store"
	"contentapi/shared/webhook"
)

// declared is every value the documents copy from the code, by the name
// their marks give it, for the resources given.
func declared(resources []app.Resource) (map[string]*yaml.Node, error) {
	v := map[string]*yaml.Node{}
	v["documents.Templates"] = list(documents.Templates[documents.FreestyleID:])
	var byID []string
	for id, name := range documents.Templates {
		if id >= documents.FreestyleID {
			byID = append(byID, fmt.Sprint(id, " ", name))
		}
	}
	v["documents.Templates by id"] = &yaml.Node{Kind: yaml.ScalarNode, Style: yaml.LiteralStyle,
		Value: "A document template, by id: " + strings.Join(byID, ", ") + ".\n"}

	ids := "0*(?:" + upTo(len(documents.Templates)-1) + ")"
	v["documents.Templates ids trimmed"] = quoted("^" + space + "*" + ids + space + "*$")
	v["documents.Templates ids or empty"] = singleQuoted("^(?:" + ids + ")?$")

	// What the tally reaches of every resource's table, and the generator
	// of those whose records it generates.
	tables := func(generated bool, tag, format string) *yaml.Node {
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, r := range resources {
			if !generated || r.Def.Content != nil {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: fmt.Sprintf(format, r.Table())})
			}
		}
		return n
	}
	v["every table"] = tables(false, "!GetAtt", "%s.Arn")
	v["every table's stream"] = tables(false, "!GetAtt", "%s.StreamArn")
	v["every table's unsettled index"] = tables(false, "!Sub", "${%s.Arn}/index/"+store.IndexUnsettled)
	v["every generated table"] = tables(true, "!GetAtt", "%s.Arn")
	v["every generated table's stream"] = tables(true, "!GetAtt", "%s.StreamArn")

	if err := perResource(v, resources); err != nil {
		return nil, err
	}
	if err := openAPIRuns(v, resources); err != nil {
		return nil, err
	}
	// A list two resources' fields share (a voice's language is the one a
	// document takes: documents.Languages) is one declaration: the first
	// field's keys write it, and the documents mark those.
	var lists []records.Kind
	for _, r := range resources {
		events, err := routeEvents(r, r.Def == resources[0].Def)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Function(), err)
		}
		v["routes of "+r.Function()] = events
		name := r.Def.Name
		for _, f := range r.Def.Fields {
			field := name + ".Resource " + f.Name
			switch f.Kind.(type) {
			case records.Enum, records.AnyCase, records.Choice:
				if slices.ContainsFunc(lists, func(k records.Kind) bool { return reflect.DeepEqual(k, f.Kind) }) {
					continue
				}
				lists = append(lists, f.Kind)
			}
			switch kind := f.Kind.(type) {
			case records.Text:
				v[field+" minLength"] = integer(kind.Min)
				v[field+" maxLength"] = integer(kind.Max)
			case records.Int:
				v[field+" minimum"] = integer(int(kind.Min))
				v[field+" maximum"] = integer(int(kind.Max))
			case records.Choice:
				v[field] = numbers(kind)
			case records.Enum:
				v[field] = list(kind)
				v[field+" trimmed"] = quoted(trimmed(kind))
				if !f.Required {
					// A record shows an optional value not given as null.
					v[field+" or null"] = list(append(kind, ""))
				}
			case records.AnyCase:
				// Listed as shown; taken in any letter case.
				v[field] = list(kind)
				v[field+" trimmed"] = quoted(pattern(caseless(kind)))
				v[field+" any case"] = singleQuoted("^(?:" + strings.Join(caseless(kind), "|") + ")$")
				v[field+" or null"] = list(append(kind, ""))
			}
		}
	}

	// The other tables' keys, and when their items expire.
	schema(v, "auth.Schema", auth.Schema())
	schema(v, "ratelimit.Schema", ratelimit.Schema())
	schema(v, "idempotency.Schema", idempotency.Schema())
	schema(v, "hookstore.Schema", hookstore.Schema())
	v["ratelimit.AttrTTL"] = plain("!!str", ratelimit.AttrTTL)
	v["idempotency.AttrTTL"] = plain("!!str", idempotency.AttrTTL)
	v["hookstore.AttrTTL"] = plain("!!str", hookstore.AttrTTL)

	v["records.SortBys"] = list(records.SortBys)
	v["records.Sorts"] = list(records.Sorts)
	v["records.Sorts any case"] = singleQuoted("^(?:" + strings.Join(caseless(records.Sorts), "|") + ")$")
	v["records.PerPages"] = numbers(records.PerPages)
	perPages := make([]string, len(records.PerPages))
	for i, n := range records.PerPages {
		perPages[i] = strconv.Itoa(n)
	}
	v["records.PerPages or empty"] = singleQuoted("^(?:0*(?:" + strings.Join(perPages, "|") + "))?$")

	v["app.LogLevels"] = list(app.LogLevels)
	v["app.GenerationValues"] = list(app.GenerationValues)
	v["app.DefaultAuthCacheSeconds"] = integer(app.DefaultAuthCacheSeconds)
	v["app.MaxAuthCacheSeconds"] = integer(app.MaxAuthCacheSeconds)
	v["app.DefaultWaitSeconds"] = integer(app.DefaultWaitSeconds)
	v["app.MaxWaitSeconds"] = integer(app.MaxWaitSeconds)

	v["app.EventTypes"] = list(app.EventTypesOf(resources))
	v["webhook.MaxURLLength"] = integer(webhook.MaxURLLength)
	v["hookapi.MaxDescription"] = integer(hookapi.MaxDescription)
	v["hookapi.MaxEvents"] = integer(hookapi.MaxEvents)

	maps.Copy(v, variableNodes(resources))
	names, err := metricNames()
	if err != nil {
		return nil, err
	}
	maps.Copy(v, names)

	v["generation.Statuses"] = list(generation.Statuses)
	v["generation.Codes"] = list(generation.Codes)
	return v, nil
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

// numbers is a flow list of numbers.
func numbers[N int | float64](values []N) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, x := range values {
		f := float64(x)
		if f == math.Trunc(f) {
			n.Content = append(n.Content, plain("!!int", strconv.FormatInt(int64(f), 10)))
		} else {
			n.Content = append(n.Content, plain("!!float", strconv.FormatFloat(f, 'f', -1, 64)))
		}
	}
	return n
}

func integer(n int) *yaml.Node { return plain("!!int", strconv.Itoa(n)) }

func plain(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: s}
}

func singleQuoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.SingleQuotedStyle, Value: s}
}

// caseless are the patterns of values matched in any letter case: each
// letter a class of its two cases ("pt-BR" is [pP][tT]-[bB][rR]).
func caseless(values records.AnyCase) []string {
	out := make([]string, len(values))
	for i, s := range values {
		var b strings.Builder
		for _, r := range s {
			lower, upper := unicode.ToLower(r), unicode.ToUpper(r)
			if lower == upper {
				b.WriteString(regexp.QuoteMeta(string(r)))
			} else {
				b.WriteString("[" + string(lower) + string(upper) + "]")
			}
		}
		out[i] = b.String()
	}
	return out
}

// trimmed is the pattern of a value of enum with white space around it,
// which the service trims (input reads every field through
// strings.TrimSpace).
func trimmed(enum records.Enum) string {
	quoted := make([]string, len(enum))
	for i, s := range enum {
		quoted[i] = regexp.QuoteMeta(s)
	}
	return pattern(quoted)
}

// pattern is the pattern of one of alternatives (regular expressions) with
// white space around it.
func pattern(alternatives []string) string {
	return "^" + space + "*(?:" + strings.Join(alternatives, "|") + ")" + space + "*$"
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

// upTo is a regular expression of the numbers 1 to n written without
// leading zeros: 52 is "[1-9]|[1-4][0-9]|5[0-2]".
func upTo(n int) string {
	var parts []string
	hi := strconv.Itoa(n)
	for digits := 1; digits <= len(hi); digits++ {
		lo, top := "1"+strings.Repeat("0", digits-1), strings.Repeat("9", digits)
		if digits == len(hi) {
			top = hi
		}
		parts = append(parts, between(lo, top)...)
	}
	return strings.Join(parts, "|")
}

// between is the alternatives matching the numbers from lo to hi, both of
// the same number of digits.
func between(lo, hi string) []string {
	if len(lo) == 1 {
		return []string{digitClass(lo[0], hi[0])}
	}
	if lo[0] == hi[0] {
		var out []string
		for _, rest := range between(lo[1:], hi[1:]) {
			out = append(out, lo[:1]+rest)
		}
		return out
	}
	zeros, nines := strings.Repeat("0", len(lo)-1), strings.Repeat("9", len(lo)-1)
	var out []string
	first, last := lo[0], hi[0]
	if lo[1:] != zeros {
		out = append(out, between(lo, lo[:1]+nines)...)
		first++
	}
	if hi[1:] != nines {
		last--
	}
	if first <= last {
		out = append(out, digitClass(first, last)+strings.Repeat("[0-9]", len(lo)-1))
	}
	if hi[1:] != nines {
		out = append(out, between(hi[:1]+zeros, hi)...)
	}
	return out
}

func digitClass(lo, hi byte) string {
	if lo == hi {
		return string(lo)
	}
	return "[" + string(lo) + "-" + string(hi) + "]"
}
