package app

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/store"
	"contentapi/shared/tally"
)

// TallyFunction is the logical ID in template.yaml of the function that
// takes deleted records off the counts, fed by the record tables' streams
// (functions/tally), and settles, on a schedule, what an outage left open.
const TallyFunction = "TallyFunction"

// TallyHandler is the tally function on a batch of a table's stream.
type TallyHandler func(context.Context, events.DynamoDBTimeWindowEvent) (events.DynamoDBTimeWindowEventResponse, error)

// SweepHandler is the tally function on its schedule's event.
type SweepHandler func(context.Context, events.EventBridgeEvent) error

// TallyEntry is the tally function's entry point, exactly what lambda.Start
// receives: a stream batch or the schedule's event.
type TallyEntry func(context.Context, json.RawMessage) (any, error)

// tally is the tally function on every resource's table, by the name the
// configuration gives it. It exists whether generation is on or off.
func (a *App) tally() (*tally.Tally, error) {
	t := &tally.Tally{Tables: map[string]*store.Table{}, Logger: a.logger, Metrics: a.metrics}
	for _, r := range a.resources() {
		table, err := a.table(r)
		if err != nil {
			return nil, err
		}
		t.Tables[table.Name()] = table
	}
	return t, nil
}

// Tally is the tally function's handler of stream batches.
func (a *App) Tally() (TallyHandler, error) {
	t, err := a.tally()
	if err != nil {
		return nil, err
	}
	return t.Handle, nil
}

// Sweep is the tally function's handler of its schedule's event.
func (a *App) Sweep() (SweepHandler, error) {
	t, err := a.tally()
	if err != nil {
		return nil, err
	}
	return t.Sweep, nil
}

// TallyEntry is the tally function's entry point.
func (a *App) TallyEntry() (TallyEntry, error) {
	t, err := a.tally()
	if err != nil {
		return nil, err
	}
	return t.Invoke, nil
}

// MustTally is what the tally function's main starts, configured from the
// environment; a misconfigured function stops here, at init.
func MustTally(ctx context.Context) TallyEntry { return must(ctx, Parts{}, (*App).TallyEntry) }
