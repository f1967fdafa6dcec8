package listgen

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"contentapi/shared/metrics"
)

// metricsLabel starts the label of every name metricNames declares.
const metricsLabel = "metrics."

// metricNames declares the names the alarms and the dashboard give the
// service's own metrics, each under its declaration's Go name in
// shared/metrics: "metrics.Namespace", "metrics.Generations" (the metric's
// Name), "metrics.DimStack". The dashboard's JSON is one string no mark
// reaches, so it names them as variables of its !Sub ("${Generations}"),
// whose values are marked. Every metric metrics.Defined lists, and every
// dimension they are emitted by, must be here.
func metricNames() (map[string]*yaml.Node, error) {
	byGoName := map[string]metrics.Metric{
		"Generations":         metrics.Generations,
		"GenerationErrors":    metrics.GenerationErrors,
		"GenerationLatency":   metrics.GenerationLatency,
		"InputTokens":         metrics.InputTokens,
		"OutputTokens":        metrics.OutputTokens,
		"SpendUSD":            metrics.SpendUSD,
		"ServerErrors":        metrics.ServerErrors,
		"DynamoDBUnavailable": metrics.DynamoDBUnavailable,
		"QuotaRefusals":       metrics.QuotaRefusals,
		"BatchFailures":       metrics.BatchFailures,
	}
	dimensions := map[string]string{
		"DimStack":    metrics.DimStack,
		"DimFunction": metrics.DimFunction,
		"DimKind":     metrics.DimKind,
		"DimOutcome":  metrics.DimOutcome,
		"DimCode":     metrics.DimCode,
	}
	v := map[string]*yaml.Node{metricsLabel + "Namespace": plain("!!str", metrics.Namespace)}
	names := map[string]bool{}
	for goName, m := range byGoName {
		v[metricsLabel+goName] = plain("!!str", m.Name)
		names[m.Name] = true
	}
	named := map[string]bool{}
	for goName, d := range dimensions {
		v[metricsLabel+goName] = plain("!!str", d)
		named[d] = true
	}
	for _, m := range metrics.Defined() {
		if !names[m.Name] {
			return nil, fmt.Errorf("metrics.Defined lists %s, which listgen does not name", m.Name)
		}
		for _, set := range m.Dimensions {
			for _, d := range set {
				if !named[d] {
					return nil, fmt.Errorf("%s is emitted by dimension %s, which listgen does not name", m.Name, d)
				}
			}
		}
	}
	return v, nil
}

// dashboardRow is a dashboard's metric row of the service's namespace, as
// its !Sub writes it: ["${Namespace}", "${Generations}", "${DimStack}", ...
// up to its options or its end.
var dashboardRow = regexp.MustCompile(`\["\$\{Namespace\}"((?:\s*,\s*"[^"]*")*)`)

// HandNamedMetrics finds the service's metrics named by hand in src, where
// make generate would not rewrite them: an alarm's metric of the namespace
// whose namespace, name or a dimension's name is not marked, and a
// dashboard row that writes the namespace, the metric's name or a
// dimension's name other than as a variable.
func HandNamedMetrics(src []byte) error {
	doc, marked, err := markedNodes(src)
	if err != nil {
		return err
	}
	var found []string
	unmarked := func(n *yaml.Node, what string) {
		if n != nil && !marked[n] {
			found = append(found, fmt.Sprintf("line %d: the %s %s is written by hand: mark it %q", n.Line, what, n.Value, marker+metricsLabel+"..."))
		}
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if ns := mapValue(n, "Namespace"); ns != nil && ns.Value == metrics.Namespace {
			unmarked(ns, "namespace")
			unmarked(mapValue(n, "MetricName"), "metric")
			if dims := mapValue(n, "Dimensions"); dims != nil {
				for _, d := range dims.Content {
					unmarked(mapValue(d, "Name"), "dimension")
				}
			}
		}
		if n.Kind == yaml.ScalarNode && !marked[n] && strings.Contains(n.Value, strconv.Quote(metrics.Namespace)) {
			found = append(found, fmt.Sprintf("line %d: a dashboard row names %s by hand: write \"${Namespace}\"", n.Line, metrics.Namespace))
		}
		if n.Tag == "!Sub" && n.Kind == yaml.SequenceNode && len(n.Content) == 2 {
			// A dashboard's rows name each name as a variable of their
			// !Sub whose value is marked.
			text, vars := n.Content[0], n.Content[1]
			for _, row := range dashboardRow.FindAllStringSubmatch(text.Value, -1) {
				names := []string{"${Namespace}"}
				for i, item := range quotedItem.FindAllStringSubmatch(row[1], -1) {
					if i == 0 || i%2 == 1 { // the metric's, then each dimension's
						names = append(names, item[1])
					}
				}
				for _, name := range names {
					v := mapValue(vars, strings.TrimSuffix(strings.TrimPrefix(name, "${"), "}"))
					if !strings.HasPrefix(name, "${") || v == nil || !marked[v] {
						found = append(found, fmt.Sprintf("line %d: the dashboard row %s names %s by hand: write it as a marked variable of its !Sub", text.Line, row[0], name))
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(doc)
	return joined(found)
}

// quotedItem is a JSON string of a dashboard row, without escapes.
var quotedItem = regexp.MustCompile(`"([^"]*)"`)

// mapValue is the value of key in the mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
