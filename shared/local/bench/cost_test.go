package bench

import (
	"math"
	"testing"

	"contentapi/shared/store"
)

func near(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

// A get as make bench measures one: 1 call plus the rate limiter's share,
// 2 RRU, a 5.6 KB answer and 70 µs of CPU, priced at 256 MB.
func TestAddPricesEachPart(t *testing.T) {
	m := NewCostModel(256, "PassThrough")
	r := m.Add(CostOperation{Name: "get", Calls: 1.029, RRU: 2, WRU: 0.029, Bytes: 5600, CPUNs: 70000})
	// 1.029 calls at 4 ms and 70 µs at 256/1769 of a vCPU (0.48 ms): 4.6 ms,
	// billed as 5.
	if r.Ms != 5 {
		t.Errorf("billed ms = %v, want 5", r.Ms)
	}
	lambda := 0.20 + 0.005*0.25*0.0000133334*1e6
	dynamo := 2*0.125 + 0.029*0.625
	dataOut := 5600.0 / (1 << 30) * 0.09 * 1e6
	if !near(r.Gateway, 1) || !near(r.Lambda, lambda) || !near(r.DynamoDB, dynamo) || !near(r.DataOut, dataOut) {
		t.Errorf("row = %+v, want gateway 1, lambda %v, DynamoDB %v, data out %v", r, lambda, dynamo, dataOut)
	}
	if !near(r.Total, 1+lambda+dynamo+dataOut) || len(m.Rows) != 1 || m.Rows[0] != r {
		t.Errorf("total %v, rows %v", r.Total, m.Rows)
	}
}

// Generation waits for the model, and the function's duration runs.
func TestGenerationWaitsAndPays(t *testing.T) {
	m := NewCostModel(1769, "PassThrough") // a whole vCPU: CPU time counts as measured
	seconds, text := m.Text(400, 5000)
	// 100 input tokens and 1250 output tokens, at 200 tokens a second.
	if m.InputTokens != 100 || m.OutputTokens != 1250 || seconds != 6.25 || !near(text, 100*0.035+1250*0.14) {
		t.Errorf("text: %d in, %d out, %v s, $%v", m.InputTokens, m.OutputTokens, seconds, text)
	}
	r := m.Add(CostOperation{Name: "create, text generated", Calls: 3, CPUNs: 1e6, WaitSeconds: seconds, Rest: text})
	if r.Ms != 3*4+1+6250 || !near(r.Total-r.Rest, r.Gateway+r.Lambda+r.DynamoDB+r.DataOut) {
		t.Errorf("row = %+v", r)
	}
	if s, p := m.Picture(); s != 4 || !near(p, 0.04*1e6+0.005*1e3) {
		t.Errorf("picture: %v s, $%v", s, p)
	}
}

func TestDollarsKeepTheCentsThatMatter(t *testing.T) {
	for v, want := range map[float64]string{40005: "40005", 178.5: "178", 1.0: "1.00", 1.2345: "1.23", 0.2167: "0.217", 0.0004: "0.000"} {
		if got := Dollars(v); got != want {
			t.Errorf("Dollars(%v) = %q, want %q", v, got, want)
		}
	}
}

// The figures are the totals of the operations that generate nothing.
func TestCostModelFigures(t *testing.T) {
	m := NewCostModel(256, "PassThrough")
	get := m.Add(CostOperation{Name: "get", Calls: 1, RRU: 2, Bytes: 2000, CPUNs: 50_000})
	m.Add(CostOperation{Name: "create, text generated", Calls: 3, WRU: 10, WaitSeconds: 6, Rest: 183})
	fs := m.Figures()
	if len(fs) != 2 || fs[0].Name != "usd_get" || fs[0].Value != get.Total || fs[0].Unit != "$/M" ||
		fs[1].Name != "usdx_get" || fs[1].Value != get.Untraced {
		t.Fatalf("%+v", fs)
	}
}

// An attempt to a receiver that never answers holds an invocation of its
// own for the whole timeout: 10 s of duration on top of its calls.
func TestWorstAttemptWaitsTheWholeTimeout(t *testing.T) {
	m := NewCostModel(256, "PassThrough")
	r := m.WorstAttempt("attempt", 9, 3, 6, nil)
	lambda := 0.20 + (9*4+10_000)/1000.0*0.25*0.0000133334*1e6
	if r.Ms != 9*4+10_000 || !near(r.Lambda, lambda) || !near(r.DynamoDB, 3*0.125+6*0.625) || !near(r.Rest, 4*0.40) ||
		!near(r.Total, r.Lambda+r.DynamoDB+r.Rest) || r.Logs != 0 || m.Row("attempt") != r {
		t.Errorf("row = %+v, want %v ms and $%v of Lambda", r, 9*4+10_000, lambda)
	}
}

// A key's worst day adds the deliveries' month, each at the worst
// attempt's price, to the reads'.
func TestKeyDayCountsDeliveries(t *testing.T) {
	var r WorstCaseReport
	reads := r.KeyDay([]float64{1_000_000, 1_000_000}, 0, 0).Value
	both := r.KeyDay([]float64{1_000_000, 1_000_000}, 25_000, 40e-6).Value
	if !near(both-reads, 1) || reads <= 0 {
		t.Errorf("reads alone $%v, with 25,000 deliveries at $40 a million $%v: want $1 more", reads, both)
	}
}

// A key's worst day counts each resource's reads at its own limit: a
// resource with a tenth of the limit adds a tenth of a resource's month
// (and its batch's slack).
func TestKeyDayCountsEachResourceAtItsLimit(t *testing.T) {
	var r WorstCaseReport
	two := r.KeyDay([]float64{1_000_000, 1_000_000}, 0, 0).Value
	three := r.KeyDay([]float64{1_000_000, 1_000_000, 100_000}, 0, 0).Value
	perUnit := two / (2 * (1_000_000 + store.DefaultReadsBatch))
	if want := two + perUnit*(100_000+store.DefaultReadsBatch); !near(three, want) {
		t.Errorf("three resources, the third at 100,000 reads: $%v, want $%v", three, want)
	}
}

// Lambda's active tracing records the first request of each second and
// 5% of the rest; passing through records none of ours.
func TestTracedShare(t *testing.T) {
	for _, tc := range []struct {
		mode string
		rps  float64
		want float64
	}{{"Active", 100, 0.0595}, {"Active", 1, 1}, {"Active", 0.5, 1}, {"Active", 1001, 51.0 / 1001}, {"PassThrough", 100, 0}} {
		if got := TracedShare(tc.mode, tc.rps); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s at %v rps: %v, want %v", tc.mode, tc.rps, got, tc.want)
		}
	}
}

// What a request writes to CloudWatch Logs is priced by its group's class
// (Infrequent Access at half the price) and kept for its retention; each
// invocation, a delete's tally's too, is traced at the share sampled; the
// total is the bill, the untraced one what the table said before.
func TestLogsAndTracesPriced(t *testing.T) {
	m := NewCostModel(256, "Active")
	logs := []LogWrite{{Group: "Fn", Class: "STANDARD", RetentionDays: 30, Bytes: 200}, {Group: "Access", Class: "INFREQUENT_ACCESS", RetentionDays: 7, Bytes: 300}}
	r := m.Add(CostOperation{Name: "delete", Calls: 1, WRU: 9, CPUNs: 50_000, Streamed: 1, Logs: logs})
	gb := func(b float64) float64 { return b / (1 << 30) * 1e6 }
	wantLogs := gb(200)*(0.50+0.03*30/(365.25/12)) + gb(300)*(0.25+0.03*7/(365.25/12))
	if !near(r.Logs, wantLogs) || r.LogBytes != 500 {
		t.Errorf("logs $%v for %v bytes, want $%v for 500", r.Logs, r.LogBytes, wantLogs)
	}
	if want := 2 * 0.0595 * 5.0; !near(r.XRay, want) {
		t.Errorf("X-Ray $%v, want $%v (two invocations)", r.XRay, want)
	}
	if !near(r.Total, r.Untraced+r.Logs+r.XRay) || !near(r.Untraced, r.Gateway+r.DataOut+r.Lambda+r.DynamoDB) {
		t.Errorf("row = %+v", r)
	}
	d := m.Delivery("webhook delivery", 7, 3, 4, logs[:1])
	if !near(d.XRay, 2*0.0595*5.0) || !near(d.Total, d.Untraced+d.Logs+d.XRay) || d.Logs <= 0 {
		t.Errorf("delivery = %+v", d)
	}
	// An attempt without answer is the sender's invocation alone.
	w := m.WorstAttempt("attempt", 7, 3, 4, logs[:1])
	if !near(w.XRay, 0.0595*5.0) || !near(w.Logs, d.Logs) || !near(w.Total, w.Untraced+w.Logs+w.XRay) {
		t.Errorf("worst attempt = %+v", w)
	}
}
