package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/app"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/sam"
)

// measureTallyBuilt adds the tally function's bootstrap size and its cold
// start, taking the last delete measured again: the watermark has it, so
// each run is the tally's one conditional write finding it counted.
func measureTallyBuilt(ctx context.Context, b *bench.Board, builds *artifacts, tmpl *sam.Template, endpoint string,
	tables map[string]string, t *bench.Tallier) error {
	if err := addSize(ctx, b, builds, "bytes_bootstrap_tally", "tally-arm64"); err != nil {
		return err
	}
	if len(t.Last.Records) == 0 {
		b.Missing("no delete was tallied", "ms_cold_start_tally")
		return nil
	}
	return coldStartStream(ctx, b, builds, tmpl, endpoint, tables, app.TallyFunction, "tally-amd64", "ms_cold_start_tally", t.Last,
		func(r events.DynamoDBTimeWindowEventResponse) int { return len(r.BatchItemFailures) })
}
