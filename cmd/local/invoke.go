package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/stack"
	"contentapi/shared/tally"
)

// invoke runs the event in file through the function it is for, against
// the running local stack, and prints the response: `sam local invoke -e`
// without Docker. An API Gateway event goes to the function its route
// belongs to; a DynamoDB stream event to the generator function, or with a
// tumbling window's shard, to the tally function; a schedule's event to the
// tally function, which sweeps.
func invoke(ctx context.Context, file string, stdout, stderr io.Writer) error {
	p, err := loadProject()
	if err != nil {
		return err
	}
	endpoint, err := dynamoDBEndpoint()
	if err != nil {
		return err
	}
	if err := ping(ctx, endpoint); err != nil {
		return fmt.Errorf("no DynamoDB Local answers on %s (%v): start the local stack with `make run` first", endpoint, err)
	}
	gen, err := genConfigFromEnv()
	if err != nil {
		return err
	}
	// The stack's S3 and Bedrock stand-in, at the ports make run gave them.
	parts := stack.AttachGeneration(addr(gen.S3Port), addr(gen.BedrockPort), gen.RealBedrock, gen.BedrockRegion)
	tables := localTables(p.tmpl)
	sqs, err := sqsPort()
	if err != nil {
		return err
	}
	vars := withGeneration(ddblocal.EnvVars(p.tmpl, endpoint, tables), parts.Env(), gen.RealBedrock)
	// The webhooks' queue make run serves.
	maps.Copy(vars, webhookVars("127.0.0.1", sqs))
	if err := setEnv(vars, tables); err != nil {
		return err
	}
	a, err := localApp(ctx)
	if err != nil {
		return err
	}
	if raw, ok, err := readScheduledEvent(file); ok || err != nil {
		return invokeSchedule(ctx, p.tmpl, stderr, raw, err, a.TallyEntry)
	}
	if window, ok, err := readTallyEvent(file); ok || err != nil {
		return invokeStream(ctx, stdout, stderr, app.TallyFunction, window, window.Records, err, a.Tally,
			func(r events.DynamoDBTimeWindowEventResponse) int { return len(r.BatchItemFailures) })
	}
	if stream, ok, err := readStreamEvent(file); ok || err != nil {
		return invokeStream(ctx, stdout, stderr, app.GeneratorFunction, stream, stream.Records, err, a.GeneratorEntry,
			func(r events.DynamoDBEventResponse) int { return len(r.BatchItemFailures) })
	}
	ev, err := readEvent(file)
	if err != nil {
		return err
	}
	function, err := functionFor(p.tmpl, ev)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fns, err := a.APIEntries()
	if err != nil {
		return err
	}
	resp, err := fns[function](ctx, ev)
	if err != nil {
		return fmt.Errorf("%s returned an error (API Gateway would answer 500): %w", function, err)
	}
	fmt.Fprintf(stderr, "%s %s -> %d\n", function, ev.RouteKey, resp.StatusCode)
	return printJSON(stdout, resp)
}

// invokeStream runs a stream event (read with readErr) through the stream
// function build makes, and prints its response.
func invokeStream[E, R any, F ~func(context.Context, E) (R, error)](ctx context.Context, stdout, stderr io.Writer,
	function string, ev E, records []events.DynamoDBEventRecord, readErr error,
	build func() (F, error), failures func(R) int) error {
	if readErr != nil {
		return readErr
	}
	fn, err := build()
	if err != nil {
		return err
	}
	resp, err := fn(ctx, ev)
	if err != nil {
		return fmt.Errorf("%s returned an error (the mapping would retry the batch): %w", function, err)
	}
	fmt.Fprintf(stderr, "%s: %d records, %d failed\n", function, len(records), failures(resp))
	return printJSON(stdout, resp)
}

// invokeSchedule runs a schedule's event (read with readErr) through the
// tally function's entry point, the one function the template schedules,
// under its timeout.
func invokeSchedule(ctx context.Context, tmpl *sam.Template, stderr io.Writer, raw json.RawMessage, readErr error,
	build func() (app.TallyEntry, error)) error {
	if readErr != nil {
		return readErr
	}
	f, err := tmpl.Function(app.TallyFunction)
	if err != nil {
		return err
	}
	entry, err := build()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout())
	defer cancel()
	if _, err := entry(ctx, raw); err != nil {
		return fmt.Errorf("%s returned an error (the schedule runs it again next time): %w", app.TallyFunction, err)
	}
	fmt.Fprintf(stderr, "%s: swept\n", app.TallyFunction)
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// readStreamEvent reads file as a DynamoDB stream event without a tumbling
// window (the generator's); ok is false for any other kind of event.
func readStreamEvent(file string) (events.DynamoDBEvent, bool, error) {
	ev, ok, err := readWindowEvent(file)
	if !ok || ev.ShardID != "" {
		return events.DynamoDBEvent{}, false, err
	}
	return ev.DynamoDBEvent, true, nil
}

// readTallyEvent reads file as a DynamoDB stream event of a tumbling
// window (the tally's, which names its shard); ok is false for any other
// kind of event.
func readTallyEvent(file string) (events.DynamoDBTimeWindowEvent, bool, error) {
	ev, ok, err := readWindowEvent(file)
	if !ok || ev.ShardID == "" {
		return events.DynamoDBTimeWindowEvent{}, false, err
	}
	return ev, true, nil
}

// readScheduledEvent reads file as an EventBridge schedule's event (the
// tally's sweep); ok is false for any other kind of event.
func readScheduledEvent(file string) (json.RawMessage, bool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, false, err
	}
	var ev events.EventBridgeEvent
	if err := json.Unmarshal(b, &ev); err != nil || ev.Source != tally.ScheduleSource || ev.DetailType != tally.ScheduleDetailType {
		return nil, false, nil
	}
	return b, true, nil
}

func readWindowEvent(file string) (ev events.DynamoDBTimeWindowEvent, ok bool, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return ev, false, err
	}
	if err := json.Unmarshal(b, &ev); err != nil || len(ev.Records) == 0 || ev.Records[0].EventSource != "aws:dynamodb" {
		return events.DynamoDBTimeWindowEvent{}, false, nil
	}
	return ev, true, nil
}

func readEvent(file string) (events.APIGatewayV2HTTPRequest, error) {
	var ev events.APIGatewayV2HTTPRequest
	b, err := os.ReadFile(file)
	if err != nil {
		return ev, err
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return ev, fmt.Errorf("%s: %w", file, err)
	}
	if ev.Version != "2.0" {
		return ev, fmt.Errorf("%s: version %q: not an HTTP API payload 2.0 event", file, ev.Version)
	}
	return ev, nil
}

// functionFor is the function API Gateway would have invoked for ev: the
// one whose route has ev's routeKey. An event whose route has left the
// template is an error rather than a guess.
func functionFor(tmpl *sam.Template, ev events.APIGatewayV2HTTPRequest) (string, error) {
	for _, r := range tmpl.Routes() {
		if r.Key() == ev.RouteKey {
			return r.Function, nil
		}
	}
	return "", fmt.Errorf("routeKey %q is not a route of template.yaml", ev.RouteKey)
}

func ping(ctx context.Context, endpoint string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	client, err := ddblocal.NewClient(ctx, endpoint)
	if err != nil {
		return err
	}
	_, err = client.ListTables(ctx, &dynamodb.ListTablesInput{})
	return err
}
