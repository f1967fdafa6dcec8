package lambdalocal_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/tally"
)

// What the local schedule hands a function is what its EventBridge rule
// sends, which the tally's entry point takes for its sweep, under the
// function's timeout.
func TestInvokeSendsAScheduledEvent(t *testing.T) {
	s := sam.Schedule{Function: "TallyFunction", Event: "SettleSweep", Every: time.Minute}
	at := time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC)
	var got events.EventBridgeEvent
	var deadline time.Time
	err := lambdalocal.InvokeSchedule(context.Background(), s, at, 10*time.Second, func(ctx context.Context, raw json.RawMessage) (any, error) {
		deadline, _ = ctx.Deadline()
		return nil, json.Unmarshal(raw, &got)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != tally.ScheduleSource || got.DetailType != tally.ScheduleDetailType || !got.Time.Equal(at) || len(got.Resources) != 1 {
		t.Errorf("event %+v", got)
	}
	if left := time.Until(deadline); left <= 0 || left > 10*time.Second {
		t.Errorf("the invocation has %v left, want the function's 10 s timeout", left)
	}
}

// The project's template schedules the tally's sweep, at a rate the local
// stack can keep.
func TestProjectSchedules(t *testing.T) {
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	all, err := tmpl.Schedules()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Function != "TallyFunction" || all[0].Every != time.Minute {
		t.Errorf("schedules %+v, want the tally's sweep every minute", all)
	}
}
