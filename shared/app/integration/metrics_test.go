package integration_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/metrics"
	"contentapi/shared/metrics/metricstest"
	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// metricLines are the metric lines written to logs so far.
func metricLines(t *testing.T, logs *lambdalocal.LogBuffer) []metricstest.Line {
	t.Helper()
	lines, err := metricstest.Parse([]byte(logs.String()))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// wantSum waits for the metric's sum over the lines with dims to be want:
// a generation's line is written just after its record.
func wantSum(t *testing.T, logs *lambdalocal.LogBuffer, want float64, name string, dims ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s %v = %v", name, dims, want), func() (bool, string) {
		got := metricstest.Sum(metricLines(t, logs), name, dims...)
		return got == want, fmt.Sprint(got)
	})
}

// The app's functions write their metrics with their logs, under the
// deployment's stack name: generations (in the request and from the
// queue) by kind and outcome, their errors by code, latency and tokens,
// and refusals by the function that answered.
func TestFunctionsWriteTheirMetrics(t *testing.T) {
	var out lambdalocal.LogBuffer
	g := newGenStack(t, genOptions{maxTries: 2, configure: func(c *app.Config) {
		c.LogOutput, c.Stack = &out, "staging"
		c.QuotaDefaults = quota.Limits{quota.Images: quota.Max(0)}
	}})
	expect(t, g.form("POST", "/api/v1/documents", "name", "ok", "prompt", "Coffee"), 201)
	r := g.form("POST", "/api/v1/documents", "name", "filtered", "prompt", "Something [standin:filter]")
	expect(t, r, 201)
	// Throttled past the client's tries in the request, done by the queue.
	g.parts.Bedrock.Inject(bedrockstandin.Throttle, bedrockstandin.Throttle)
	r = g.form("POST", "/api/v1/documents", "name", "busy", "prompt", "Coffee")
	expect(t, r, 201)
	g.settled(t, fmt.Sprintf("/api/v1/documents/%v", r.data()["id"]))
	// A model that keeps failing: two tries retried, the third fails.
	r = g.form("POST", "/api/v1/documents", "name", "broken", "prompt", "Broken [standin:error]")
	expect(t, r, 201)
	g.settled(t, fmt.Sprintf("/api/v1/documents/%v", r.data()["id"]))
	expect(t, g.form("POST", "/api/v1/images", "name", "x", "description", "d", "resolution", "256x256"), 429)

	stack := metrics.DimStack + "=staging"
	docs := metrics.DimKind + "=documents"
	wantSum(t, &out, 2, "Generations", stack, docs, "Outcome=done")
	wantSum(t, &out, 1, "Generations", stack, docs, "Outcome=filtered")
	wantSum(t, &out, 1, "Generations", stack, docs, "Outcome=failed")
	wantSum(t, &out, 3, "Generations", stack, docs, "Outcome=retried")
	wantSum(t, &out, 1, "Generations", stack, "Outcome=failed") // the kinds together
	wantSum(t, &out, 1, "GenerationErrors", stack, docs, "Code=content_filtered")
	wantSum(t, &out, 1, "GenerationErrors", stack, docs, "Code=throttled")
	wantSum(t, &out, 3, "GenerationErrors", stack, docs, "Code=model_unavailable")
	wantSum(t, &out, 1, "QuotaRefusals", stack, metrics.DimFunction+"=images")
	lines := metricLines(t, &out)
	if n := metricstest.Sum(lines, "InputTokens", stack, docs); n <= 0 {
		t.Errorf("input tokens %v", n)
	}
	if n := metricstest.Sum(lines, "OutputTokens", stack, docs); n <= 0 {
		t.Errorf("output tokens %v", n)
	}
	if n := metricstest.Sum(lines, "GenerationLatency", stack, docs); n <= 0 {
		t.Errorf("latency %v", n)
	}
}

// A stream record the generator cannot handle for now (here, the picture
// of a deleted image, with S3 down) is reported as the batch's failure,
// to be delivered again, and the batch is counted as the generator's.
func TestGeneratorCountsTheBatchItCouldNotHandle(t *testing.T) {
	var out lambdalocal.LogBuffer
	g := newGenStack(t, genOptions{noStream: true, configure: func(c *app.Config) { c.LogOutput, c.Stack = &out, "staging" }})
	r := g.form("POST", "/api/v1/images", "name", "x", "description", "A lighthouse", "resolution", "256x256")
	expect(t, r, 201)
	item, err := g.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(g.env.Tables["ImagesTable"]), ConsistentRead: aws.Bool(true),
		Key: store.Item{"account": stringAV("acme"), "id": numberAV(num(r.data()["id"]))},
	})
	if err != nil || store.StrAttr(item.Item, "result") == "" {
		t.Fatalf("the image has no picture: %v %v", item, err)
	}
	removed := events.DynamoDBEventRecord{
		EventID: "1", EventName: "REMOVE", EventSource: "aws:dynamodb",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + g.env.Tables["ImagesTable"] + "/stream/2026-11-21T00:00:00.000",
		Change:         events.DynamoDBStreamRecord{OldImage: streamImage(t, item.Item), SequenceNumber: "100"},
	}
	if err := g.parts.S3.Close(); err != nil {
		t.Fatal(err)
	}
	resp, err := g.stream(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{removed}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "100" {
		t.Fatalf("failures %v, error %v; want the record reported", resp.BatchItemFailures, err)
	}
	if got := metricstest.Sum(metricLines(t, &out), "BatchFailures", metrics.DimStack+"=staging",
		metrics.DimFunction+"="+metrics.FunctionGenerator); got != 1 {
		t.Errorf("BatchFailures of the generator = %v, want 1", got)
	}
}
