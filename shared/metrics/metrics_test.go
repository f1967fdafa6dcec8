package metrics_test

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"contentapi/shared/metrics"
	"contentapi/shared/metrics/metricstest"
)

func ptr[T any](v T) *T { return &v }

// record writes with a fresh emitter and returns what CloudWatch would
// read of it.
func record(t *testing.T, write func(e *metrics.Emitter)) []metricstest.Line {
	t.Helper()
	var out bytes.Buffer
	write(metrics.New(&out, "prod"))
	lines, err := metricstest.Parse(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != len(lines) {
		t.Fatalf("%d lines written, %d of them metric lines:\n%s", n, len(lines), out.String())
	}
	return lines
}

// Every line the emitter writes follows the specification (metricstest
// checks each), and every metric it names is declared, with the unit and
// dimension sets of its declaration; together the emitter's methods
// write every declared metric.
func TestLinesFollowTheSpecification(t *testing.T) {
	before := time.Now().UnixMilli()
	lines := record(t, func(e *metrics.Emitter) {
		for _, o := range metrics.Outcomes() {
			e.Generation(metrics.Generation{Kind: "documents", Outcome: o, Took: 1500 * time.Millisecond,
				InputTokens: ptr(int64(12)), OutputTokens: ptr(int64(340)), CostUSD: 0.0000506})
		}
		e.Generation(metrics.Generation{Kind: "images", Outcome: metrics.Failed, Code: "content_filtered", Took: time.Second})
		e.Answer("images", http.StatusInternalServerError, false)
		e.Answer("images", http.StatusServiceUnavailable, false)
		e.Answer("documents", http.StatusTooManyRequests, true)
		e.BatchFailure(metrics.FunctionTally)
	})
	declared := map[string]metrics.Metric{}
	for _, m := range metrics.Defined() {
		declared[m.Name] = m
	}
	written := map[string]bool{}
	for _, l := range lines {
		if l.Timestamp < before || l.Timestamp > time.Now().UnixMilli() {
			t.Errorf("timestamp %d is not now", l.Timestamp)
		}
		if l.Dimensions[metrics.DimStack] != "prod" {
			t.Errorf("stack %q, want prod", l.Dimensions[metrics.DimStack])
		}
		for _, d := range l.Directives {
			if d.Namespace != metrics.Namespace {
				t.Errorf("namespace %q", d.Namespace)
			}
			for _, def := range d.Metrics {
				m, ok := declared[def.Name]
				if !ok {
					t.Errorf("metric %s is not declared", def.Name)
					continue
				}
				if def.Unit != string(m.Unit) || !reflect.DeepEqual(d.Dimensions, m.Dimensions) {
					t.Errorf("%s written with %s %v, declared %s %v", def.Name, def.Unit, d.Dimensions, m.Unit, m.Dimensions)
				}
				written[def.Name] = true
			}
		}
	}
	for name := range declared {
		if !written[name] {
			t.Errorf("%s is declared but no method writes it", name)
		}
	}
}

func TestGenerationLine(t *testing.T) {
	lines := record(t, func(e *metrics.Emitter) {
		e.Generation(metrics.Generation{Kind: "documents", Outcome: metrics.Done, Took: 1234567 * time.Microsecond,
			InputTokens: ptr(int64(12)), OutputTokens: ptr(int64(340))})
		e.Generation(metrics.Generation{Kind: "images", Outcome: metrics.Retried, Code: "throttled", Took: 2 * time.Second})
	})
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	done, retried := lines[0], lines[1]
	want := map[string]float64{"Generations": 1, "GenerationLatency": 1234.567, "InputTokens": 12, "OutputTokens": 340}
	if !reflect.DeepEqual(done.Values, want) {
		t.Errorf("done: %v, want %v", done.Values, want)
	}
	if !done.Has("Kind=documents", "Outcome=done") || done.Dimensions[metrics.DimCode] != "" {
		t.Errorf("done: dimensions %v", done.Dimensions)
	}
	want = map[string]float64{"Generations": 1, "GenerationErrors": 1, "GenerationLatency": 2000}
	if !reflect.DeepEqual(retried.Values, want) {
		t.Errorf("retried: %v, want %v", retried.Values, want)
	}
	if !retried.Has("Kind=images", "Outcome=retried", "Code=throttled") {
		t.Errorf("retried: dimensions %v", retried.Dimensions)
	}
}

// A try that spent writes what it cost, in dollars, as a metric of the
// stack alone: no account, and not even the kind, is a dimension of it.
func TestGenerationSpendIsTheStacks(t *testing.T) {
	lines := record(t, func(e *metrics.Emitter) {
		e.Generation(metrics.Generation{Kind: "images", Outcome: metrics.Done, CostUSD: 0.04})
		e.Generation(metrics.Generation{Kind: "images", Outcome: metrics.Retried, Code: "throttled"})
	})
	if len(lines) != 2 || lines[0].Values["SpendUSD"] != 0.04 {
		t.Fatalf("lines %+v, want the first to spend 0.04", lines)
	}
	if _, ok := lines[1].Values["SpendUSD"]; ok {
		t.Error("a try that spent nothing writes a spend")
	}
	for _, d := range lines[0].Directives {
		if slices.ContainsFunc(d.Metrics, func(m metricstest.Definition) bool { return m.Name == "SpendUSD" }) && !reflect.DeepEqual(d.Dimensions, [][]string{{metrics.DimStack}}) {
			t.Errorf("SpendUSD's dimensions are %v, want the stack's alone", d.Dimensions)
		}
	}
}

// Only answers worth counting write a line: an ordinary one, a 4xx
// included, writes none.
func TestAnswerCountsFailuresAndRefusals(t *testing.T) {
	for _, c := range []struct {
		status  int
		refused bool
		want    []string
	}{
		{http.StatusOK, false, nil},
		{http.StatusNotFound, false, nil},
		{http.StatusTooManyRequests, false, nil}, // the rate limit's
		{http.StatusTooManyRequests, true, []string{"QuotaRefusals"}},
		{http.StatusInternalServerError, false, []string{"ServerErrors"}},
		{http.StatusServiceUnavailable, false, []string{"DynamoDBUnavailable", "ServerErrors"}},
	} {
		lines := record(t, func(e *metrics.Emitter) { e.Answer("documents", c.status, c.refused) })
		var got []string
		for _, l := range lines {
			if !l.Has("Function=documents") {
				t.Errorf("%d: dimensions %v", c.status, l.Dimensions)
			}
			for name, v := range l.Values {
				if v != 1 {
					t.Errorf("%d: %s = %v", c.status, name, v)
				}
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%d (quota %v): %v, want %v", c.status, c.refused, got, c.want)
		}
	}
}

// A part built without an emitter may call it: without the nil checks
// each call would panic on the nil receiver, failing the test.
func TestNilEmitterRecordsNothing(t *testing.T) {
	var e *metrics.Emitter
	e.Generation(metrics.Generation{Kind: "images", Outcome: metrics.Done})
	e.Answer("images", http.StatusInternalServerError, false)
	e.BatchFailure(metrics.FunctionGenerator)
}

// Dimension values are escaped as JSON: a line stays one JSON object.
func TestValuesAreEscaped(t *testing.T) {
	lines := record(t, func(e *metrics.Emitter) { e.BatchFailure("a\"b\n") })
	if len(lines) != 1 || lines[0].Dimensions[metrics.DimFunction] != "a\"b\n" {
		t.Fatalf("%+v", lines)
	}
}

// The checker itself refuses what the specification forbids, so that a
// line it passes is one CloudWatch extracts.
func TestParseRefusesBrokenLines(t *testing.T) {
	const dir = `{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"M","Unit":"Count"}]}`
	for name, line := range map[string]string{
		"no timestamp":       `{"_aws":{"CloudWatchMetrics":[` + dir + `]},"D":"x","M":1}`,
		"no directives":      `{"_aws":{"Timestamp":1},"D":"x","M":1}`,
		"missing dimension":  `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[` + dir + `]},"M":1}`,
		"number dimension":   `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[` + dir + `]},"D":3,"M":1}`,
		"empty dimension":    `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[` + dir + `]},"D":"","M":1}`,
		"missing value":      `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[` + dir + `]},"D":"x"}`,
		"string value":       `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[` + dir + `]},"D":"x","M":"1"}`,
		"unknown unit":       `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"M","Unit":"Requests"}]}]},"D":"x","M":1}`,
		"extra member":       `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"M"}],"Extra":1}]},"D":"x","M":1}`,
		"no namespace":       `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Dimensions":[["D"]],"Metrics":[{"Name":"M"}]}]},"D":"x","M":1}`,
		"no metrics":         `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[]}]},"D":"x"}`,
		"timestamp a string": `{"_aws":{"Timestamp":"1","CloudWatchMetrics":[` + dir + `]},"D":"x","M":1}`,
	} {
		if _, err := metricstest.Parse([]byte(line + "\n")); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := metricstest.Parse([]byte(`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[` + dir + `]},"D":"x","M":1}` + "\n")); err != nil {
		t.Errorf("a well-formed line: %v", err)
	}
}

// Outside a stack the metrics still carry a Stack, which CloudWatch needs.
func TestEmptyStackIsLocal(t *testing.T) {
	var out bytes.Buffer
	metrics.New(&out, "").BatchFailure(metrics.FunctionTally)
	lines, err := metricstest.Parse(out.Bytes())
	if err != nil || len(lines) != 1 || lines[0].Dimensions[metrics.DimStack] != metrics.LocalStack {
		t.Fatalf("%v %+v", err, lines)
	}
}

// Every request's answer passes Answer; an ordinary one allocates nothing
// and writes nothing.
func TestOrdinaryAnswerAllocatesNothing(t *testing.T) {
	var out bytes.Buffer
	e := metrics.New(&out, "prod")
	if n := testing.AllocsPerRun(100, func() { e.Answer("images", http.StatusOK, false) }); n != 0 || out.Len() != 0 {
		t.Fatalf("%v allocations, %d bytes written", n, out.Len())
	}
}

// docs/operations.md's table of metrics, the operator's list, names every
// metric the code declares, with its dimension sets and unit, and no other.
func TestOperationsDocListsEveryMetric(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{} // name -> "unit dimension sets"
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		names, sets := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		unit := metrics.Count
		switch {
		case strings.HasSuffix(names, "(ms)"):
			unit, names = metrics.Milliseconds, strings.TrimSpace(strings.TrimSuffix(names, "(ms)"))
		case strings.HasSuffix(names, "($)"):
			unit, names = metrics.None, strings.TrimSpace(strings.TrimSuffix(names, "($)"))
		}
		for _, name := range strings.Split(names, ",") {
			listed[strings.Trim(strings.TrimSpace(name), "`")] = fmt.Sprint(unit, " ", sets)
		}
	}
	want := map[string]string{}
	for _, m := range metrics.Defined() {
		var sets []string
		for _, s := range m.Dimensions {
			sets = append(sets, strings.Join(s, ", "))
		}
		want[m.Name] = fmt.Sprint(m.Unit, " ", strings.Join(sets, "; "))
	}
	if !maps.Equal(listed, want) {
		t.Errorf("docs/operations.md lists the metrics\n%v\nthe code declares\n%v", listed, want)
	}
}
