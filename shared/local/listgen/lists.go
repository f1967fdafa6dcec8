package listgen

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/documents"
	"contentapi/shared/generation"
	"contentapi/shared/hookapi"
	"contentapi/shared/hookstore"
	"contentapi/shared/idempotency"
	"contentapi/shared/quota"
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
		if sc := r.Def.Scope; sc != nil && sc.All != "" {
			v[name+".Resource "+sc.Field+" all"] = list([]string{sc.All})
		}
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
				if !f.Required {
					// A record shows an optional value not given as null.
					v[field+" or null"] = list(append(kind, ""))
				}
			case records.AnyCase:
				// Listed as shown; taken in any letter case, which the
				// schema's description says.
				v[field] = list(kind)
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
	v["records.PerPages"] = numbers(records.PerPages)

	v["app.LogLevels"] = list(app.LogLevels)
	v["app.GenerationValues"] = list(app.GenerationValues)
	v["app.DefaultAuthCacheSeconds"] = integer(app.DefaultAuthCacheSeconds)
	v["app.MaxAuthCacheSeconds"] = integer(app.MaxAuthCacheSeconds)
	v["app.DefaultWaitSeconds"] = integer(app.DefaultWaitSeconds)
	v["app.MaxWaitSeconds"] = integer(app.MaxWaitSeconds)

	v["app.EventTypes"] = list(app.EventTypesOf(resources))
	v["app.Kinds"] = list(app.KindsOf(resources))
	v["quota.Thresholds"] = numbers(quota.Thresholds)
	v["webhook.MaxURLLength"] = integer(webhook.MaxURLLength)
	v["hookapi.MaxDescription"] = integer(hookapi.MaxDescription)
	v["hookapi.MaxEvents"] = integer(hookapi.MaxEvents)
	// Every delivery log page up to this one is in reach at any per_page.
	v["hookstore.MaxDeliveryLog pages"] = integer(hookstore.MaxDeliveryLog / slices.Max(records.PerPages))
	v["quota.HistoryMonths"] = integer(quota.HistoryMonths)

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
func numbers[N int | int64 | float64](values []N) *yaml.Node {
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
