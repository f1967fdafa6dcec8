package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/stack"
)

// Generation's figures: create to done with the Bedrock stand-in, what a
// generation's writes cost, and the other functions' bootstraps.

// generationRuns are the creates each ms_generate_* figure is the median of.
const (
	documentRuns = 21
	imageRuns    = 11
)

// generationEnv is the functions' environment for generation's local
// parts, which lambdaEnv adds to the template's.
var generationEnv map[string]string

// measureGeneration reports generation's figures. parts are the local
// stand-ins the functions' environment (genEnv) points at.
func measureGeneration(ctx context.Context, b *bench.Board, meter *ddblocal.Meter, logs *bench.LogMeter, db *dynamodb.Client, plain *dynamodb.Client, cfg app.Config,
	parts *stack.Generation, tmpl *sam.Template, endpoint string, tables map[string]string, builds *artifacts) error {
	logf("generation: creates to done with the Bedrock stand-in")
	cfg.Generation = parts.Config()
	a := app.New(cfg, db, stack.Parts)
	c, err := bench.NewAccountCaller(ctx, a, plain, tables["ApiKeysTable"], "bench-generation")
	if err != nil {
		return err
	}
	document := url.Values{"name": {"Launch post"}, "prompt": {"Announce our new espresso machine, which brews barista-quality coffee at home."},
		"template_id": {"9"}, "creativity": {"0.75"}}
	picture := url.Values{"name": {"Lighthouse"}, "description": {"A red lighthouse on a cliff at dusk, waves below"},
		"resolution": {"512x512"}, "style": {"digital_art"}, "filter": {"sepia"}}
	// Three texts of one brief: three model calls at once, one record.
	variants := url.Values{"variants": {"3"}}
	for k, v := range document {
		variants[k] = v
	}

	creates := []struct {
		name, path string
		form       url.Values
		runs       int
	}{{"doc", "/api/v1/documents", document, documentRuns}, {"image", "/api/v1/images", picture, imageRuns},
		{"doc_variants3", "/api/v1/documents", variants, documentRuns}}
	for _, m := range creates {
		figure := "ms_generate_" + m.name + "_local"
		var took []time.Duration
		for range m.runs {
			start := time.Now()
			ans := c.Do("POST", m.path, m.form, nil)
			took = append(took, time.Since(start))
			if problem := bench.Generated(ans); problem != "" {
				b.Missing(problem, figure)
				took = nil
				break
			}
		}
		if took != nil {
			b.Add(bench.Figure{Name: figure, Value: ms(bench.Percentile(took, 50)), Unit: "ms"})
		}
	}

	// What a create that generates costs in DynamoDB: the create's own
	// writes, and the write-back of the content (the last call); and
	// what it writes to CloudWatch Logs (its generation's line and
	// metrics among them).
	for _, m := range creates {
		var ans bench.Answer
		asked := parts.Bedrock.Calls()
		logs.Mark()
		start := time.Now()
		calls := meter.Measure(func() { ans = c.Do("POST", m.path, m.form, nil) })
		if _, err := logs.Request("generate_"+m.name, "POST", m.path, ans, time.Since(start)); err != nil {
			return err
		}
		own := slices.DeleteFunc(calls, func(call ddblocal.MeteredCall) bool { return call.Purpose != "" })
		if problem := bench.Generated(ans); problem != "" || len(own) == 0 {
			b.Missing(problem, "calls_generate_"+m.name, "wru_writeback_"+m.name)
			continue
		}
		b.Add(bench.Figure{Name: "calls_generate_" + m.name, Value: float64(ddblocal.SumMetered(own).RoundTrips), Unit: "calls"})
		b.Add(bench.Figure{Name: "wru_writeback_" + m.name, Value: own[len(own)-1].Units, Unit: "wru"})
		if m.name == "doc_variants3" {
			// The cost table's row: every write, the model's calls, the
			// answer with its three texts.
			b.Add(bench.Figure{Name: "wru_generate_" + m.name, Value: ddblocal.SumMetered(own).Writes, Unit: "wru"})
			b.Add(bench.Figure{Name: "calls_model_" + m.name, Value: float64(parts.Bedrock.Calls() - asked), Unit: "calls"})
			b.Add(bench.Figure{Name: "bytes_generate_" + m.name, Value: float64(ans.Wire), Unit: "bytes"})
		}
	}

	bench.AddSpendCost(ctx, b, bench.SpendCost{Config: cfg, Plain: plain, Endpoint: endpoint, Template: tmpl, Tables: tables, Meter: meter, Caller: c, Account: "bench-generation"}, document)

	// The generator function's path: a record left pending, claimed and
	// written back from its stream event.
	stream, err := a.GeneratorEntry()
	if err != nil {
		return err
	}
	ev, err := bench.PendingEvent(ctx, c, plain, tables["DocumentsTable"], "bench-generation", document)
	if err != nil {
		return err
	}
	var resp events.DynamoDBEventResponse
	calls := meter.Measure(func() { resp, err = stream(ctx, ev) })
	if err != nil || len(resp.BatchItemFailures) != 0 {
		b.Missing(fmt.Sprintf("the generator failed the event: %v %+v", err, resp), "calls_generator_doc", "wru_generator_doc")
	} else {
		t := ddblocal.SumMetered(calls)
		b.Add(bench.Figure{Name: "calls_generator_doc", Value: float64(t.RoundTrips), Unit: "calls"})
		b.Add(bench.Figure{Name: "wru_generator_doc", Value: t.Writes, Unit: "wru"})
	}

	if builds == nil {
		return nil // -quick: nothing built
	}
	logf("waiting for the other bootstraps")
	if err := addSize(ctx, b, builds, "bytes_bootstrap_images", "images-arm64"); err != nil {
		return err
	}
	if err := addSize(ctx, b, builds, "bytes_bootstrap_generator", "generator-arm64"); err != nil {
		return err
	}
	ev, err = bench.PendingEvent(ctx, c, plain, tables["DocumentsTable"], "bench-generation", document)
	if err != nil {
		return err
	}
	return coldStartStream(ctx, b, builds, tmpl, endpoint, tables, "GeneratorFunction", "generator-amd64", "ms_cold_start_generator", ev,
		func(r events.DynamoDBEventResponse) int { return len(r.BatchItemFailures) })
}

// coldStartStream measures a stream function's cold start: its amd64
// bootstrap (built as bootstrap), exec to the answer to ev, whose failed
// records (failures) must be none.
func coldStartStream[E, R any](ctx context.Context, b *bench.Board, builds *artifacts, tmpl *sam.Template, endpoint string,
	tables map[string]string, function, bootstrap, figure string, ev E, failures func(R) int) error {
	path, err := builds.path(ctx, bootstrap)
	if err != nil {
		b.Missing(err.Error(), figure)
		return nil
	}
	logf("%s cold start: %d runs", function, coldStartRuns)
	event, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	env := lambdaEnv(tmpl, endpoint, tables, function, filepath.Dir(path))
	runs, failed, err := lambdalocal.ColdStarts(ctx, path, env, event, coldStartRuns, func(response []byte) error {
		var resp R
		if err := json.Unmarshal(response, &resp); err != nil || failures(resp) != 0 {
			return fmt.Errorf("unexpected response %.300s", response)
		}
		return nil
	})
	logFailedRuns(function, failed)
	if err != nil {
		b.Missing(err.Error(), figure)
		return nil
	}
	var total []time.Duration
	for _, r := range runs {
		total = append(total, r.Total)
	}
	b.Add(bench.Figure{Name: figure, Value: ms(bench.Percentile(total, 50)), Unit: "ms"})
	return nil
}
