package app

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/store"
	"contentapi/shared/tally"
)

// TallyFunction is the logical ID in template.yaml of the function that
// takes deleted records off the counts, fed by the record tables' streams
// (functions/tally).
const TallyFunction = "TallyFunction"

// TallyHandler is the tally function's entry point: exactly what
// lambda.Start receives.
type TallyHandler func(context.Context, events.DynamoDBTimeWindowEvent) (events.DynamoDBTimeWindowEventResponse, error)

// Tally is the tally function's entry point: every resource's table, by the
// name the configuration gives it. It exists whether generation is on or
// off.
func (a *App) Tally() (TallyHandler, error) {
	t := &tally.Tally{Tables: map[string]*store.Table{}, Logger: a.logger, Metrics: a.metrics}
	for _, r := range Resources {
		table, err := a.table(r)
		if err != nil {
			return nil, err
		}
		t.Tables[table.Name()] = table
	}
	return t.Handle, nil
}

// MustTally is what the tally function's main starts, configured from the
// environment; a misconfigured function stops here, at init.
func MustTally(ctx context.Context) TallyHandler { return must(ctx, (*App).Tally) }
