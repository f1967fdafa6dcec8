package bench

import (
	"fmt"
	"math"
	"time"

	"contentapi/shared/generation"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/webhook"
)

// Prices holds AWS list prices, on demand, in US East (N. Virginia), in US
// dollars.
type Prices struct {
	// HTTPAPI per million requests (the first 300 million a month).
	HTTPAPI float64
	// LambdaRequests per million; LambdaARMGBSecond per GB-second of
	// arm64 duration (the first 7.5 billion GB-seconds a month).
	LambdaRequests, LambdaARMGBSecond float64
	// DynamoDBRead and DynamoDBWrite per million request units (standard
	// table class, since the price cut of 1 November 2024).
	DynamoDBRead, DynamoDBWrite float64
	// TextInput and TextOutput per million tokens of the text model;
	// Picture per picture of the image model: the service's own prices of
	// them (generation.DefaultPrices, modelPrices), so that the report
	// prices generations as their records' cost_usd does.
	TextModel, ImageModel          string
	TextInput, TextOutput, Picture float64
	// S3Put per thousand PUT requests (S3 Standard).
	S3Put float64
	// DataOut per GB from API Gateway to the internet (the first 10 TB a
	// month).
	DataOut float64
	// SQS per million requests to a standard queue (each 64 KB chunk;
	// the first million a month free).
	SQS float64
	// LogsStandard and LogsInfrequent per GB that a CloudWatch Logs group
	// of that class ingests (the first 10 TB a month); LogsStorage per
	// GB-month it keeps, either class.
	LogsStandard, LogsInfrequent, LogsStorage float64
	// XRay per million traces recorded (the first 100,000 a month free).
	XRay float64
}

// AWSPrices are the prices as read on PricesRead from the sources the report
// names, the models' as the service declares them.
var AWSPrices = modelPrices(Prices{
	HTTPAPI:        1.00,
	LambdaRequests: 0.20, LambdaARMGBSecond: 0.0000133334,
	DynamoDBRead: 0.125, DynamoDBWrite: 0.625,
	TextModel: "us.amazon.nova-micro-v1:0", ImageModel: "stability.stable-image-core-v1:1",
	S3Put:        0.005,
	DataOut:      0.09,
	SQS:          0.40,
	LogsStandard: 0.50, LogsInfrequent: 0.25, LogsStorage: 0.03,
	XRay: 5.00,
})

// benchPicture is the side of the pictures the bench's create_image draws
// (1024x1024), at which the image model's price is read.
const benchPicture = 1024

// modelPrices is p with its models' prices from generation.DefaultPrices,
// in dollars. A model it does not declare stops the bench: the report would
// price generations at nothing.
func modelPrices(p Prices) Prices {
	text, ok := generation.DefaultPrices.Of(p.TextModel)
	image, ok2 := generation.DefaultPrices.Of(p.ImageModel)
	if !ok || !ok2 {
		panic(fmt.Sprintf("bench: generation.DefaultPrices declares no price of %s or %s", p.TextModel, p.ImageModel))
	}
	p.TextInput, p.TextOutput = text.InputTokens.Dollars(), text.OutputTokens.Dollars()
	p.Picture = image.Picture(benchPicture, benchPicture).Dollars()
	return p
}

// PricesRead is when AWS's prices were last checked.
const PricesRead = "2026-11-23"

// The model's assumptions, each stated in the report.
const (
	// RoundTripMs is what one DynamoDB call adds to a function's duration
	// in its own region: single-digit milliseconds, as AWS states.
	RoundTripMs = 4
	// vCPUMemoryMB is the memory size at which Lambda gives a function a
	// whole vCPU; below it the CPU share is proportional.
	vCPUMemoryMB = 1769
	// charsPerToken is how much English text a model token holds.
	charsPerToken = 4
	// TokensPerSecond is the text model's assumed output speed, and
	// PictureSeconds the image model's assumed time per picture: while a
	// create waits for generation, the function's duration runs.
	TokensPerSecond = 200
	PictureSeconds  = 4
	// ReceiverMs is the assumed time a webhook receiver takes to answer
	// (the sender's duration runs meanwhile; it gives up at 10 s), and
	// sqsPerDelivery the queue's requests for one: the generator's send,
	// the mapping's receive and delete.
	ReceiverMs     = 250
	sqsPerDelivery = 3
	// sqsPerWorstAttempt are the queue's requests for an attempt at most:
	// the publisher's send, the mapping's receive, the sender's move to
	// the slow lane (a send) and the mapping's delete.
	sqsPerWorstAttempt = 4
	// TracedRate is the steady traffic, in requests a second, at which
	// traces are priced: Lambda's active tracing records the first
	// request of each second and 5% of the others, so the share of
	// requests traced depends on it.
	TracedRate = 100
	// daysPerMonth turns a group's retention into the months storage is
	// billed by.
	daysPerMonth = 365.25 / 12
)

// TracedShare is the share of a function's invocations X-Ray records
// under tracing mode (Active or PassThrough) at rps invocations a second:
// Lambda samples one a second and 5% of the rest when Active; when
// PassThrough, only those whose caller sent a sampled trace header, which
// neither the HTTP API (it traces nothing) nor the event sources do.
func TracedShare(tracing string, rps float64) float64 {
	if tracing != "Active" || rps <= 0 {
		return 0
	}
	reservoir := min(rps, 1)
	return (reservoir + 0.05*(rps-reservoir)) / rps
}

// CostOperation is what one request of an operation does.
type CostOperation struct {
	Name                   string
	Calls, RRU, WRU, Bytes float64 // DynamoDB calls and units, the answer's body
	// CPUNs is the handler's CPU time on a whole vCPU; WaitSeconds the time
	// it waits for a model.
	CPUNs, WaitSeconds float64
	// Rest is what a million of it cost beyond the platform: the models,
	// S3.
	Rest float64
	// Streamed is the DynamoDB calls a stream function (the tally) makes
	// for one of it, in an invocation of its own: as many deletes as a
	// batch holds share one, so this is the most it costs.
	Streamed float64
	// Logs is what one of it writes to CloudWatch Logs (LogMeter).
	Logs []LogWrite
}

// CostRow is what a million requests of one operation cost, in dollars.
type CostRow struct {
	Op                                       string
	Calls, RRU, WRU, Ms, Bytes               float64
	Gateway, DataOut, Lambda, DynamoDB, Rest float64
	// LogBytes is what one request writes to CloudWatch Logs; Logs and
	// XRay what a million of them cost there and in traces.
	LogBytes, Logs, XRay float64
	// Total is the bill; Untraced the same without logs and traces, as
	// the table gave it before it counted them.
	Total, Untraced float64
}

// CostModel is the cost table and what it was computed from.
type CostModel struct {
	Rows                             []CostRow
	MemoryMB                         int
	InputTokens, OutputTokens        int
	TextSeconds, LambdaPerSecondPerM float64
	CPUScale                         float64
	Prices                           Prices
	PricesRead                       string
	RoundTripMs, TokensPerSecond     int
	PictureSeconds, ReceiverMs       int
	// Tracing is the functions' tracing mode; TracedShare the share of
	// their invocations traced at TracedRate requests a second, and
	// ActiveShare and ActiveCost what Active would trace and cost a million
	// requests.
	Tracing                              string
	TracedShare, ActiveShare, ActiveCost float64
	TracedRate, DaysInMonth              float64
	// PlatformInfoBytes is what Lambda's own lines of an invocation weigh
	// at the system level INFO, which the default leaves out.
	PlatformInfoBytes int
	// Missing names what the table could not be computed from, if anything.
	Missing string
}

// NewCostModel is an empty table for a function of memoryMB on arm64,
// traced as tracing (the template's mode) says.
func NewCostModel(memoryMB int, tracing string) *CostModel {
	return &CostModel{MemoryMB: memoryMB, Prices: AWSPrices, PricesRead: PricesRead, RoundTripMs: RoundTripMs,
		TokensPerSecond: TokensPerSecond, PictureSeconds: PictureSeconds, ReceiverMs: ReceiverMs,
		CPUScale:            float64(vCPUMemoryMB) / float64(memoryMB),
		LambdaPerSecondPerM: float64(memoryMB) / 1024 * AWSPrices.LambdaARMGBSecond * 1e6,
		Tracing:             tracing, TracedShare: TracedShare(tracing, TracedRate), TracedRate: TracedRate, DaysInMonth: daysPerMonth,
		ActiveShare: TracedShare("Active", TracedRate), ActiveCost: TracedShare("Active", TracedRate) * AWSPrices.XRay,
		PlatformInfoBytes: platformInfoBytes}
}

// platformInfoBytes is what Lambda's own lines of an invocation weigh at
// the system level INFO.
var platformInfoBytes, _ = platformBytes(lambdalocal.LogFormatJSON, "INFO")

// platformBytes is what Lambda's own lines of an invocation weigh in
// format at system level.
func platformBytes(format, level string) (int, error) {
	lines, err := lambdalocal.PlatformLines(format, level)
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	return n, err
}

// logsAndTraces adds to r what a million requests of invocations Lambda
// invocations each, writing writes, cost in CloudWatch Logs (ingested at
// the class's price, kept for the group's retention: priced on the bytes
// as ingested, though AWS bills storage compressed, so an upper bound) and
// in X-Ray traces, and makes the total.
func (m *CostModel) logsAndTraces(r *CostRow, invocations float64, writes []LogWrite) {
	for _, w := range writes {
		gb := w.Bytes / (1 << 30) * 1e6
		ingest := m.Prices.LogsStandard
		if w.Class == sam.LogClassInfrequentAccess {
			ingest = m.Prices.LogsInfrequent
		}
		r.Logs += gb * (ingest + m.Prices.LogsStorage*float64(w.RetentionDays)/daysPerMonth)
	}
	r.LogBytes = LogBytes(writes)
	r.XRay = invocations * m.TracedShare * m.Prices.XRay
	r.Total = r.Untraced + r.Logs + r.XRay
}

// Add prices a million requests of op and adds them to the table. Lambda
// bills duration rounded up to the millisecond: modeled as RoundTripMs per
// call, the CPU time at the function's share of a vCPU, and the wait.
func (m *CostModel) Add(op CostOperation) CostRow {
	r := CostRow{Op: op.Name, Calls: op.Calls, RRU: op.RRU, WRU: op.WRU, Bytes: op.Bytes, Rest: op.Rest}
	r.Ms = math.Ceil(r.Calls*RoundTripMs + op.CPUNs/1e6*m.CPUScale + op.WaitSeconds*1000)
	r.Gateway = m.Prices.HTTPAPI
	r.DataOut = op.Bytes / (1 << 30) * m.Prices.DataOut * 1e6
	r.Lambda = m.Prices.LambdaRequests + r.Ms/1000*m.LambdaPerSecondPerM
	if op.Streamed > 0 {
		ms := math.Ceil(op.Streamed * RoundTripMs)
		r.Calls += op.Streamed
		r.Lambda += m.Prices.LambdaRequests + ms/1000*m.LambdaPerSecondPerM
	}
	r.DynamoDB = r.RRU*m.Prices.DynamoDBRead + r.WRU*m.Prices.DynamoDBWrite
	r.Untraced = r.Gateway + r.DataOut + r.Lambda + r.DynamoDB + r.Rest
	invocations := 1.0
	if op.Streamed > 0 {
		invocations++
	}
	m.logsAndTraces(&r, invocations, op.Logs)
	m.Rows = append(m.Rows, r)
	return r
}

// Delivery prices a million webhook deliveries of one successful attempt
// each, from their DynamoDB calls and units (the generator's publishing and
// the sender's attempt) and what they write to CloudWatch Logs: no API
// Gateway and no answer out; two Lambda invocations at most, as a
// generation's end is a stream record of its own for the generator and a
// delivery a message for the sender (batches share invocations, so this
// is the most), their duration RoundTripMs per call plus the sender's wait
// for the receiver; and the queue's requests, priced in the rest.
func (m *CostModel) Delivery(name string, calls, rru, wru float64, logs []LogWrite) CostRow {
	r := CostRow{Op: name, Calls: calls, RRU: rru, WRU: wru}
	r.Ms = math.Ceil(calls*RoundTripMs + ReceiverMs)
	r.Lambda = 2*m.Prices.LambdaRequests + r.Ms/1000*m.LambdaPerSecondPerM
	r.DynamoDB = rru*m.Prices.DynamoDBRead + wru*m.Prices.DynamoDBWrite
	r.Rest = sqsPerDelivery * m.Prices.SQS
	r.Untraced = r.Lambda + r.DynamoDB + r.Rest
	m.logsAndTraces(&r, 2, logs)
	m.Rows = append(m.Rows, r)
	return r
}

// WorstAttempt prices a million delivery attempts at their dearest: to a
// receiver that never answers, so that each holds a sender invocation of
// its own for the attempt's whole timeout (webhook.DefaultTimeout; an
// attempt in a batch would share one), with the DynamoDB calls and units
// of a first attempt and its publishing (a retry makes fewer), and the
// queue's requests; and what the sender writes to CloudWatch Logs for an
// attempt without answer (logs) and its invocation's trace. What a key's
// deliveries cost at worst (KeyDay).
func (m *CostModel) WorstAttempt(name string, calls, rru, wru float64, logs []LogWrite) CostRow {
	r := CostRow{Op: name, Calls: calls, RRU: rru, WRU: wru}
	r.Ms = math.Ceil(calls*RoundTripMs + float64(webhook.DefaultTimeout/time.Millisecond))
	r.Lambda = m.Prices.LambdaRequests + r.Ms/1000*m.LambdaPerSecondPerM
	r.DynamoDB = rru*m.Prices.DynamoDBRead + wru*m.Prices.DynamoDBWrite
	r.Rest = sqsPerWorstAttempt * m.Prices.SQS
	r.Untraced = r.Lambda + r.DynamoDB + r.Rest
	m.logsAndTraces(&r, 1, logs)
	m.Rows = append(m.Rows, r)
	return r
}

// Row is the table's row of the operation name; the zero row when it has
// none.
func (m *CostModel) Row(name string) CostRow {
	for _, r := range m.Rows {
		if r.Op == name {
			return r
		}
	}
	return CostRow{}
}

// Figures are the totals of the table's operations that generate
// nothing, usd_<operation> per million requests: what the service's own
// work costs, where a generating create's is mostly the model's. Beside
// each, usdx_<operation> is the same without CloudWatch Logs and X-Ray,
// which the figures left out before they counted them.
func (m *CostModel) Figures() []Figure {
	var out []Figure
	for _, r := range m.Rows {
		if r.Rest == 0 {
			out = append(out, Figure{Name: "usd_" + r.Op, Value: r.Total, Unit: "$/M", Missing: m.Missing},
				Figure{Name: "usdx_" + r.Op, Value: r.Untraced, Unit: "$/M", Missing: m.Missing})
		}
	}
	return out
}

// Text is what generating a text of resultBytes from a prompt of
// promptChars (system prompt included) takes: the wait, and the model's
// price for a million of them.
func (m *CostModel) Text(promptChars, resultBytes int) (seconds, perMillion float64) {
	m.InputTokens = promptChars / charsPerToken
	m.OutputTokens = resultBytes / charsPerToken
	m.TextSeconds = float64(m.OutputTokens) / TokensPerSecond
	return m.TextSeconds, float64(m.InputTokens)*m.Prices.TextInput + float64(m.OutputTokens)*m.Prices.TextOutput
}

// Picture is what generating a picture takes: the wait, and a million of
// the model's pictures with one S3 PUT each.
func (m *CostModel) Picture() (seconds, perMillion float64) {
	return PictureSeconds, m.Prices.Picture*1e6 + m.Prices.S3Put*1e3
}

// Dollars writes an amount with the cents that matter: whole dollars from
// 100, two decimals from 1, three below.
func Dollars(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
