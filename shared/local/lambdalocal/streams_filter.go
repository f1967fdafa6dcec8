package lambdalocal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// StreamFilter is an event source mapping's FilterCriteria: a record passes when
// any of its patterns matches it. The patterns are Lambda's event
// filtering syntax (EventBridge's); this implements the part of it a
// template may use here, exact values, exists and prefix, and refuses the
// rest when parsing, so that a pattern it would misread never runs.
type StreamFilter struct {
	patterns []map[string]any
}

// ParseStreamFilter compiles the patterns; none means every record passes.
func ParseStreamFilter(patterns []string) (*StreamFilter, error) {
	f := &StreamFilter{}
	for _, p := range patterns {
		var m map[string]any
		if err := json.Unmarshal([]byte(p), &m); err != nil {
			return nil, fmt.Errorf("streams: filter pattern %s: %w", p, err)
		}
		if err := check(m); err != nil {
			return nil, fmt.Errorf("streams: filter pattern %s: %w", p, err)
		}
		f.patterns = append(f.patterns, m)
	}
	return f, nil
}

func check(pattern map[string]any) error {
	for k, v := range pattern {
		switch x := v.(type) {
		case map[string]any:
			if err := check(x); err != nil {
				return err
			}
		case []any:
			for _, e := range x {
				rule, isRule := e.(map[string]any)
				if !isRule {
					continue
				}
				if len(rule) != 1 {
					return fmt.Errorf("%s: a rule of more than one operator", k)
				}
				for op, arg := range rule {
					switch op {
					case "exists":
						if _, ok := arg.(bool); !ok {
							return fmt.Errorf("%s: exists takes true or false", k)
						}
					case "prefix":
						if _, ok := arg.(string); !ok {
							return fmt.Errorf("%s: prefix takes a string", k)
						}
					default:
						return fmt.Errorf("%s: operator %q is not supported here", k, op)
					}
				}
			}
		default:
			return fmt.Errorf("%s: a pattern's leaves are lists of values", k)
		}
	}
	return nil
}

// Match reports whether the record passes the filter.
func (f *StreamFilter) Match(rec events.DynamoDBEventRecord) bool {
	return f.matchJSON(rec)
}

// matchJSON reports whether v, as JSON, passes the filter: a stream's
// record here, an event on the bus (eventbus.go).
func (f *StreamFilter) matchJSON(v any) bool {
	if len(f.patterns) == 0 {
		return true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		return false
	}
	return slices.ContainsFunc(f.patterns, func(p map[string]any) bool { return matches(p, ev) })
}

func matches(pattern, ev map[string]any) bool {
	for k, want := range pattern {
		got, present := ev[k]
		switch w := want.(type) {
		case map[string]any:
			sub, ok := got.(map[string]any)
			if !present {
				// Nothing there: only rules that ask for absence match
				// within it ({"exists": false}).
				sub, ok = map[string]any{}, true
			}
			if !ok || !matches(w, sub) {
				return false
			}
		case []any:
			if !slices.ContainsFunc(w, func(rule any) bool { return leaf(rule, got, present) }) {
				return false
			}
		}
	}
	return true
}

func leaf(rule, got any, present bool) bool {
	r, isRule := rule.(map[string]any)
	if !isRule {
		return present && got == rule
	}
	if exists, ok := r["exists"].(bool); ok {
		_, isObject := got.(map[string]any)
		return exists == (present && !isObject)
	}
	if prefix, ok := r["prefix"].(string); ok {
		s, isString := got.(string)
		return present && isString && strings.HasPrefix(s, prefix)
	}
	return false
}
