// Package metrics is the service's own CloudWatch metrics, written as log
// lines in CloudWatch's Embedded Metric Format (EMF): a JSON line whose
// _aws member tells CloudWatch Logs which of its members to turn into
// metrics. A function writes the line to standard output with its other
// logs, so recording a metric makes no call to CloudWatch and adds no
// latency; CloudWatch Logs extracts it from the function's log group.
//
// Every metric is declared once here (Defined lists them): its name, unit
// and dimension sets. template.yaml's alarms and dashboard name metrics of
// Namespace: make generate (cmd/listgen) writes the namespace's, the
// metrics' and the dimensions' names there from these declarations, and a
// test holds each metric's dimensions and their values to what the code
// emits. The lines are written only when there is something to
// count (an answer that failed or was refused, a generation, a stream
// batch that failed), never for an ordinary request: a request that
// succeeds pays one comparison.
//
// No EMF library among the Go modules at hand is kept up; the format is
// small and documented ("Specification: Embedded metric format" in the
// CloudWatch user guide), and TestLinesFollowTheSpecification holds the
// lines to its required shape.
package metrics

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Namespace is the CloudWatch namespace of every metric the service
// emits.
const Namespace = "ContentAPI"

// Dimension names. Stack is on every metric, so that two stacks in one
// account and region (staging, production) keep their metrics apart.
const (
	DimStack    = "Stack"
	DimFunction = "Function"
	DimKind     = "Kind"
	DimOutcome  = "Outcome"
	DimCode     = "Code"
)

// Unit is a CloudWatch unit.
type Unit string

// The units the service's metrics use.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	// None is a unit CloudWatch does not know: dollars.
	None Unit = "None"
)

// Metric is one declared metric: CloudWatch keeps one series per
// dimension set and combination of values.
type Metric struct {
	Name string
	Unit Unit
	// Dimensions are its dimension sets, each led by DimStack.
	Dimensions [][]string
}

func define(name string, unit Unit, dimensionSets ...[]string) Metric {
	m := Metric{Name: name, Unit: unit}
	for _, set := range dimensionSets {
		m.Dimensions = append(m.Dimensions, append([]string{DimStack}, set...))
	}
	return m
}

// The metrics. Kind is the resource whose record was generated (images,
// documents); Function the function that counted (images, documents,
// generator, tally: its folder under functions/).
var (
	// Generations counts generation tries by how they ended (Outcome),
	// over all kinds and per kind.
	Generations = define("Generations", Count, []string{DimOutcome}, []string{DimKind, DimOutcome})
	// GenerationErrors counts tries that failed, by the code a client
	// would see, whether the try is retried (Outcome retried) or ends the
	// record (failed).
	GenerationErrors = define("GenerationErrors", Count, []string{DimKind, DimCode})
	// GenerationLatency is how long a try took to make its content (or
	// to fail): the model's call, and for a picture its rendering and
	// storing.
	GenerationLatency = define("GenerationLatency", Milliseconds, []string{DimKind})
	// InputTokens and OutputTokens are what the text model billed for,
	// whether or not its text became the record's (images report none).
	InputTokens  = define("InputTokens", Count, []string{DimKind})
	OutputTokens = define("OutputTokens", Count, []string{DimKind})
	// SpendUSD is what the tries' calls of the models cost, in dollars at
	// the deployment's prices, over the whole stack only: a series per
	// account would cost per account (each record's cost_usd and /usage
	// say what one account spent).
	SpendUSD = define("SpendUSD", None, []string{})
	// ServerErrors counts answers with a 5xx status that the functions'
	// code gave (the platform's own, a crash or a timeout, show in the
	// Lambda and API Gateway metrics instead).
	ServerErrors = define("ServerErrors", Count, []string{DimFunction})
	// DynamoDBUnavailable counts the 503s among them: DynamoDB throttled
	// the request or did not answer in time.
	DynamoDBUnavailable = define("DynamoDBUnavailable", Count, []string{DimFunction})
	// QuotaRefusals counts requests refused by a monthly limit (429
	// quota_exceeded): creates and regenerates past a generation limit,
	// lists and gets past the reads limit.
	QuotaRefusals = define("QuotaRefusals", Count, []string{DimFunction})
	// BatchFailures counts stream batches a function could not handle
	// whole: the records it reported failed are delivered again (the
	// generator's up to three times, then to GenerationFailures; the
	// tally's until they land).
	BatchFailures = define("BatchFailures", Count, []string{DimFunction})
)

// Defined lists every declared metric.
func Defined() []Metric {
	return []Metric{Generations, GenerationErrors, GenerationLatency, InputTokens, OutputTokens, SpendUSD,
		ServerErrors, DynamoDBUnavailable, QuotaRefusals, BatchFailures}
}

// Outcome is how a generation try ended.
type Outcome string

// The outcomes of a try.
const (
	// Done: the content is the record's.
	Done Outcome = "done"
	// Failed: the record's generation ended failed, for a reason of
	// ours or the model's.
	Failed Outcome = "failed"
	// Filtered: the record's generation ended failed because the model's
	// content filters blocked its input or result: the user's to change,
	// so not in the failure rate an operator is alarmed on.
	Filtered Outcome = "filtered"
	// Retried: the try failed for a reason that may pass; the record went
	// back to the queue for another.
	Retried Outcome = "retried"
	// HandedOver: a request's wait ran out; the generator function takes
	// the record up.
	HandedOver Outcome = "handed_over"
	// Lost: the record was regenerated, deleted or taken over meanwhile;
	// what the try made was thrown away.
	Lost Outcome = "lost"
	// Unwritten: the write-back failed; the record ends by the 15-minute
	// rule unless another delivery finishes it.
	Unwritten Outcome = "unwritten"
)

// Outcomes lists every outcome.
func Outcomes() []Outcome {
	return []Outcome{Done, Failed, Filtered, Retried, HandedOver, Lost, Unwritten}
}

// The functions that count batches, by their folder under functions/.
const (
	FunctionGenerator = "generator"
	FunctionTally     = "tally"
)

// Emitter writes the metric lines. A nil Emitter records nothing, so a
// part built without one (in a unit test) needs no check.
type Emitter struct {
	out   io.Writer
	stack string
}

// New writes the lines to out, one Write per line (give it the writer
// the function's log lines go through, so the two never interleave),
// with stack as the value of DimStack: LocalStack if empty, as CloudWatch
// takes no empty value.
func New(out io.Writer, stack string) *Emitter {
	if stack == "" {
		stack = LocalStack
	}
	return &Emitter{out: out, stack: stack}
}

// LocalStack is the stack of a function run outside a stack: make run,
// the tests.
const LocalStack = "local"

// Generation is one try of a generation, as it ended.
type Generation struct {
	// Kind is the record's resource (images, documents).
	Kind    string
	Outcome Outcome
	// Code is the failure's code when the try failed, else "".
	Code string
	// Took is how long making the content took.
	Took time.Duration
	// InputTokens and OutputTokens are what the text model answered with,
	// nil where it did not answer, and for pictures.
	InputTokens, OutputTokens *int64
	// CostUSD is what the try's calls of the models cost, in dollars.
	CostUSD float64
}

// Generation records a try: one line with every metric it gives.
func (e *Emitter) Generation(g Generation) {
	if e == nil {
		return
	}
	l := e.line(dim{DimKind, g.Kind}, dim{DimOutcome, string(g.Outcome)}, dim{DimCode, g.Code})
	l.add(Generations, 1)
	if g.Code != "" {
		l.add(GenerationErrors, 1)
	}
	l.add(GenerationLatency, float64(g.Took.Microseconds())/1000)
	if g.InputTokens != nil {
		l.add(InputTokens, float64(*g.InputTokens))
	}
	if g.OutputTokens != nil {
		l.add(OutputTokens, float64(*g.OutputTokens))
	}
	if g.CostUSD > 0 {
		l.add(SpendUSD, g.CostUSD)
	}
	e.write(l)
}

// Answer records an answer of function's, if it is one to count: a 5xx
// (ServerErrors, and DynamoDBUnavailable too for a 503), or a refusal by a
// monthly limit (QuotaRefusals). Every request's answer passes here; the
// others cost a comparison.
func (e *Emitter) Answer(function string, status int, quotaRefused bool) {
	if e == nil || status < http.StatusInternalServerError && !quotaRefused {
		return
	}
	l := e.line(dim{DimFunction, function})
	switch {
	case status == http.StatusServiceUnavailable:
		l.add(ServerErrors, 1)
		l.add(DynamoDBUnavailable, 1)
	case status >= http.StatusInternalServerError:
		l.add(ServerErrors, 1)
	default:
		l.add(QuotaRefusals, 1)
	}
	e.write(l)
}

// BatchFailure records a stream batch of function's that was not handled
// whole.
func (e *Emitter) BatchFailure(function string) {
	if e == nil {
		return
	}
	l := e.line(dim{DimFunction, function})
	l.add(BatchFailures, 1)
	e.write(l)
}

type dim struct{ name, value string }

type value struct {
	m Metric
	v float64
}

// line is one EMF line in the making: its dimension values (those that are
// empty are left out) and its metrics.
type line struct {
	dims   []dim
	values []value
}

func (e *Emitter) line(dims ...dim) *line {
	l := &line{dims: []dim{{DimStack, e.stack}}}
	for _, d := range dims {
		if d.value != "" {
			l.dims = append(l.dims, d)
		}
	}
	return l
}

func (l *line) add(m Metric, v float64) { l.values = append(l.values, value{m, v}) }

func (e *Emitter) write(l *line) {
	bp := make([]byte, 0, 512)
	_, _ = e.out.Write(l.append(bp, time.Now()))
}

// append writes the line: the _aws member, with one directive per metric
// (its own dimension sets), then the dimension values and the metrics'
// values as top-level members, then level and msg as the service's other
// lines have them, for Logs Insights queries.
func (l *line) append(b []byte, now time.Time) []byte {
	b = append(b, `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, now.UnixMilli(), 10)
	b = append(b, `,"CloudWatchMetrics":[`...)
	for i, v := range l.values {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Namespace":`...)
		b = appendString(b, Namespace)
		b = append(b, `,"Dimensions":[`...)
		for j, set := range v.m.Dimensions {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for k, name := range set {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendString(b, name)
			}
			b = append(b, ']')
		}
		b = append(b, `],"Metrics":[{"Name":`...)
		b = appendString(b, v.m.Name)
		b = append(b, `,"Unit":`...)
		b = appendString(b, string(v.m.Unit))
		b = append(b, `}]}`...)
	}
	b = append(b, `]}`...)
	for _, d := range l.dims {
		b = append(b, ',')
		b = appendString(b, d.name)
		b = append(b, ':')
		b = appendString(b, d.value)
	}
	for _, v := range l.values {
		b = append(b, ',')
		b = appendString(b, v.m.Name)
		b = append(b, ':')
		f := v.v
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0 // JSON has no such number, and CloudWatch takes none
		}
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	return append(b, `,"level":"INFO","msg":"metrics"}`+"\n"...)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}
