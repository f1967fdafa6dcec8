package lambdalocal_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/local/lambdalocal"
)

func jobEvent(status string) events.EventBridgeEvent {
	return events.EventBridgeEvent{
		Version: "0", ID: status, Source: "aws.bedrock", DetailType: "Batch Inference Job State Change",
		Detail: json.RawMessage(`{"status":"` + status + `","batchJobArn":"arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abcdefghijkl"}`),
	}
}

// A rule hands its function the events its pattern matches, whole, and no
// other; Put does not wait for the function, Drained does.
func TestEventBusRuleDeliversWhatItsPatternMatches(t *testing.T) {
	bus := lambdalocal.NewEventBus(slog.New(slog.NewTextHandler(io.Discard, nil)))
	release := make(chan struct{})
	var mu sync.Mutex
	var got []events.EventBridgeEvent
	var deadline time.Time
	err := bus.Rule("JobEnded", `{"source":["aws.bedrock"],"detail-type":["Batch Inference Job State Change"],"detail":{"status":["Completed","Failed"]}}`,
		time.Minute, func(ctx context.Context, raw json.RawMessage) (any, error) {
			<-release
			var ev events.EventBridgeEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			got = append(got, ev)
			deadline, _ = ctx.Deadline()
			return nil, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, status := range []string{"Submitted", "InProgress", "Completed", "Failed"} {
		bus.Put(ctx, jobEvent(status))
	}
	other := jobEvent("Completed")
	other.Source = "aws.s3"
	bus.Put(ctx, other)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := bus.Drained(short); err == nil {
		t.Fatal("Drained returned while the function was still running")
	}
	close(release)
	if err := bus.Drained(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	statuses := map[string]bool{}
	for _, ev := range got {
		var d struct{ Status string }
		json.Unmarshal(ev.Detail, &d)
		statuses[d.Status] = true
		if ev.Source != "aws.bedrock" || ev.DetailType != "Batch Inference Job State Change" {
			t.Errorf("delivered %+v", ev)
		}
	}
	if len(got) != 2 || !statuses["Completed"] || !statuses["Failed"] {
		t.Errorf("delivered %d events, statuses %v; want Completed and Failed from aws.bedrock", len(got), statuses)
	}
	if remaining := time.Until(deadline); remaining <= 0 || remaining > time.Minute {
		t.Errorf("the invocation's deadline is %v away, want within the rule's minute", remaining)
	}
	if bus.Invoked() != 2 || bus.Failed() != 0 {
		t.Errorf("invoked %d, failed %d; want 2 and 0", bus.Invoked(), bus.Failed())
	}
}

// An invocation that returns an error is retried twice, as Lambda retries
// an asynchronous invocation, and the event is then dropped; one that
// succeeds on a retry is not retried again.
func TestEventBusRetriesAsLambdaRetriesAsynchronousInvocations(t *testing.T) {
	bus := lambdalocal.NewEventBus(slog.New(slog.NewTextHandler(io.Discard, nil)))
	var mu sync.Mutex
	calls := map[string]int{}
	err := bus.Rule("Flaky", `{"source":["aws.bedrock"]}`, time.Minute, func(ctx context.Context, raw json.RawMessage) (any, error) {
		var ev events.EventBridgeEvent
		json.Unmarshal(raw, &ev)
		mu.Lock()
		defer mu.Unlock()
		calls[ev.ID]++
		if ev.ID == "Failed" || calls[ev.ID] == 1 {
			return nil, errors.New("the function failed")
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bus.Put(ctx, jobEvent("Failed"))    // fails every time
	bus.Put(ctx, jobEvent("Completed")) // fails once
	if err := bus.Drained(ctx); err != nil {
		t.Fatal(err)
	}
	if calls["Failed"] != 3 || calls["Completed"] != 2 {
		t.Errorf("calls %v; want Failed 3 (the first and two retries), Completed 2", calls)
	}
	if bus.Invoked() != 5 || bus.Failed() != 4 || bus.Dropped() != 1 {
		t.Errorf("invoked %d, failed %d, dropped %d; want 5, 4, 1", bus.Invoked(), bus.Failed(), bus.Dropped())
	}
}

// A rule's pattern is refused where the bus would misread it.
func TestEventBusRefusesPatternsItCannotRead(t *testing.T) {
	bus := lambdalocal.NewEventBus(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, bad := range []string{`{"source":`, `{"detail":{"status":[{"anything-but":"Completed"}]}}`, `{"source":"aws.bedrock"}`} {
		if err := bus.Rule("Bad", bad, time.Minute, nil); err == nil {
			t.Errorf("pattern %s was taken", bad)
		}
	}
}
