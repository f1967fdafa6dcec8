// The schedules: RunSchedules keeps a function's Schedule events of template.yaml on
// this machine, as their EventBridge rules do in AWS: at the template's
// rate, the function's entry point gets a Scheduled Event, under the
// function's timeout.

package lambdalocal

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/local/sam"
	"contentapi/shared/tally"
)

// Entry is a function's entry point, as lambda.Start receives it.
type Entry func(context.Context, json.RawMessage) (any, error)

// RunSchedules invokes fn at each Schedule event the template gives function, until
// ctx ends, and returns the schedules it keeps (none is not an error).
func RunSchedules(ctx context.Context, tmpl *sam.Template, function string, fn Entry, logger *slog.Logger) ([]sam.Schedule, error) {
	all, err := tmpl.Schedules()
	if err != nil {
		return nil, err
	}
	f, err := tmpl.Function(function)
	if err != nil {
		return nil, err
	}
	var kept []sam.Schedule
	for _, s := range all {
		if s.Function != function {
			continue
		}
		kept = append(kept, s)
		go keep(ctx, s, f.Timeout(), fn, logger)
	}
	return kept, nil
}

// keep invokes fn every s.Every until ctx ends; a run still going when the
// next is due makes that one wait.
func keep(ctx context.Context, s sam.Schedule, timeout time.Duration, fn Entry, logger *slog.Logger) {
	tick := time.NewTicker(s.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case at := <-tick.C:
			if err := InvokeSchedule(ctx, s, at, timeout, fn); err != nil && ctx.Err() == nil {
				logger.Error("schedule: the function returned an error", "function", s.Function, "event", s.Event, "error", err.Error())
			}
		}
	}
}

// InvokeSchedule gives fn the event s's rule sends at a time, under the
// function's timeout.
func InvokeSchedule(ctx context.Context, s sam.Schedule, at time.Time, timeout time.Duration, fn Entry) error {
	ev := events.EventBridgeEvent{
		Version: "0", ID: rand.Text(), DetailType: tally.ScheduleDetailType, Source: tally.ScheduleSource,
		Time: at.UTC(), Resources: []string{"local:rule/" + s.Function + "-" + s.Event}, Detail: json.RawMessage("{}"),
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := fn(ctx, raw); err != nil {
		return fmt.Errorf("%s.%s: %w", s.Function, s.Event, err)
	}
	return nil
}
