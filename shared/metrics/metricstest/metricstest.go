// Package metricstest reads the metric lines a function wrote (package
// metrics) as CloudWatch Logs would, for tests: each is held to the
// Embedded Metric Format's specification ("Specification: Embedded metric
// format", CloudWatch user guide), and what it records comes out by
// metric and dimension values.
package metricstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Directive is one MetricDirective of a line.
type Directive struct {
	Namespace  string
	Dimensions [][]string
	Metrics    []Definition
}

// Definition is one MetricDefinition.
type Definition struct {
	Name              string
	Unit              string
	StorageResolution *int
}

// Line is one metric line: its directives, and the values they name.
type Line struct {
	Timestamp  int64
	Directives []Directive
	// Dimensions are the values of the dimensions the directives name.
	Dimensions map[string]string
	// Values are the metrics' values by name.
	Values map[string]float64
}

// units are the units the specification allows.
var units = []string{"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes",
	"Gigabytes", "Terabytes", "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count",
	"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
	"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second",
	"Count/Second", "None"}

// Parse returns the metric lines among out's lines (those with an _aws
// member); the others are left alone. A metric line that breaks the
// specification is an error saying how.
func Parse(out []byte) ([]Line, error) {
	var lines []Line
	for raw := range bytes.Lines(out) {
		if !bytes.Contains(raw, []byte(`"_aws"`)) {
			continue
		}
		l, err := parseLine(raw)
		if err != nil {
			return nil, fmt.Errorf("%w in %s", err, raw)
		}
		lines = append(lines, l)
	}
	return lines, nil
}

func parseLine(raw []byte) (Line, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(raw, &root); err != nil {
		return Line{}, fmt.Errorf("not a JSON object: %w", err)
	}
	var meta struct {
		Timestamp         json.RawMessage
		CloudWatchMetrics []json.RawMessage
	}
	if err := strictly(root["_aws"], &meta); err != nil {
		return Line{}, fmt.Errorf("_aws: %w", err)
	}
	l := Line{Dimensions: map[string]string{}, Values: map[string]float64{}}
	if meta.Timestamp == nil {
		return Line{}, fmt.Errorf("_aws has no Timestamp")
	}
	if err := json.Unmarshal(meta.Timestamp, &l.Timestamp); err != nil || l.Timestamp <= 0 {
		return Line{}, fmt.Errorf("_aws.Timestamp %s is not milliseconds since the epoch", meta.Timestamp)
	}
	if meta.CloudWatchMetrics == nil {
		return Line{}, fmt.Errorf("_aws has no CloudWatchMetrics")
	}
	for _, rd := range meta.CloudWatchMetrics {
		var d Directive
		if err := strictly(rd, &d); err != nil {
			return Line{}, fmt.Errorf("a MetricDirective: %w", err)
		}
		if d.Namespace == "" || len(d.Namespace) > 255 {
			return Line{}, fmt.Errorf("namespace %q is empty or over 255 characters", d.Namespace)
		}
		if d.Dimensions == nil {
			return Line{}, fmt.Errorf("a MetricDirective has no Dimensions")
		}
		for _, set := range d.Dimensions {
			if len(set) > 30 {
				return Line{}, fmt.Errorf("a DimensionSet of %d dimensions, over 30", len(set))
			}
			for _, name := range set {
				var v string
				if err := json.Unmarshal(root[name], &v); err != nil {
					return Line{}, fmt.Errorf("dimension %s is not a string member of the root", name)
				}
				if v == "" || len(v) > 1024 {
					return Line{}, fmt.Errorf("dimension %s's value %q is empty or over 1024 characters", name, v)
				}
				l.Dimensions[name] = v
			}
		}
		if len(d.Metrics) == 0 || len(d.Metrics) > 100 {
			return Line{}, fmt.Errorf("a MetricDirective of %d metrics, want 1 to 100", len(d.Metrics))
		}
		for _, m := range d.Metrics {
			if m.Name == "" || len(m.Name) > 1024 {
				return Line{}, fmt.Errorf("metric name %q is empty or over 1024 characters", m.Name)
			}
			if m.Unit != "" && !slices.Contains(units, m.Unit) {
				return Line{}, fmt.Errorf("metric %s: unit %q is not one CloudWatch knows", m.Name, m.Unit)
			}
			if r := m.StorageResolution; r != nil && *r != 1 && *r != 60 {
				return Line{}, fmt.Errorf("metric %s: StorageResolution %d, want 1 or 60", m.Name, *r)
			}
			var v float64
			if err := json.Unmarshal(root[m.Name], &v); err != nil {
				return Line{}, fmt.Errorf("metric %s is not a number member of the root", m.Name)
			}
			l.Values[m.Name] = v
		}
		l.Directives = append(l.Directives, d)
	}
	return l, nil
}

// strictly decodes an object the specification defines, which may hold
// no member but its own.
func strictly(raw json.RawMessage, v any) error {
	if raw == nil {
		return fmt.Errorf("missing")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Sum adds up metric name over the lines whose dimensions have the values
// in dims ("Name=value" each).
func Sum(lines []Line, name string, dims ...string) float64 {
	var sum float64
	for _, l := range lines {
		v, ok := l.Values[name]
		if ok && l.Has(dims...) {
			sum += v
		}
	}
	return sum
}

// Has reports whether the line's dimensions have the values in dims
// ("Name=value" each).
func (l Line) Has(dims ...string) bool {
	for _, d := range dims {
		name, value, _ := strings.Cut(d, "=")
		if l.Dimensions[name] != value {
			return false
		}
	}
	return true
}
