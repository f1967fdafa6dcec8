package main

import (
	"context"
	"fmt"
	"time"

	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/stack"
)

// loadRun is what the load run saw.
type loadRun struct {
	*bench.LoadResult
	SeedTime time.Duration
	// CPU seconds used during the run by the gateway and by its DynamoDB
	// Local (its child processes).
	CPUGateway, CPUDynamoDB float64
}

// measureLoad runs the local stack (cmd/local, built) as a subprocess on
// its own DynamoDB Local, seeds the same account there, and drives it with
// concurrent clients: requests/s, p99 latency, errors and the gateway's
// peak RSS.
func measureLoad(ctx context.Context, b *bench.Board, a *artifacts, tmpl *sam.Template, root string, o options, rep *report) error {
	missing := func(why string) {
		b.Missing(why, "rps_local", "ms_p99_local", "errors_local", "mb_rss_local")
		logf("load run skipped: %s", why)
	}
	binary, err := a.path(ctx, "local")
	if err != nil {
		missing("the local gateway (cmd/local) does not build: " + err.Error())
		return nil
	}
	g, err := stack.StartProcess(ctx, binary, root,
		// Why, the report's Method says (Load through the local gateway).
		"RATE_LIMIT_PER_MINUTE=100000000", "REQUEST_TIMEOUT_SECONDS=60", "FUNCTION_TIMEOUT=60s")
	if err != nil {
		missing(err.Error())
		return nil
	}
	defer g.Stop()
	db, err := ddblocal.NewClient(ctx, g.DynamoDB)
	if err != nil {
		return err
	}
	tables := map[string]string{}
	for _, id := range tmpl.ResourcesOfType(sam.TableType) {
		tables[id] = id // the local stack names tables by logical ID
	}
	s, err := seedAccount(ctx, db, tables)
	if err != nil {
		missing(fmt.Sprintf("seeding the gateway's DynamoDB Local: %v", err))
		return nil
	}
	logf("load: %d clients for %s through %s", o.clients, o.duration, g.API)
	gateway0, dynamoDB0 := g.CPUSeconds()
	res := &loadRun{LoadResult: bench.DriveLoad(ctx, g.API, s, o.clients, o.duration), SeedTime: s.Took}
	gateway1, dynamoDB1 := g.CPUSeconds()
	res.CPUGateway, res.CPUDynamoDB = gateway1-gateway0, dynamoDB1-dynamoDB0
	rep.Load = res
	rss, err := g.PeakRSSMB()
	if err != nil {
		logf("load: could not read the gateway's VmHWM: %v", err)
	}
	b.Add(bench.Figure{Name: "rps_local", Value: float64(res.Requests) / res.Elapsed.Seconds(), Unit: "rps"})
	b.Add(bench.Figure{Name: "ms_p99_local", Value: float64(res.P99.Microseconds()) / 1000, Unit: "ms"})
	b.Add(bench.Figure{Name: "errors_local", Value: float64(res.Errors), Unit: "errors"})
	b.Add(bench.Figure{Name: "mb_rss_local", Value: rss, Unit: "MB"})
	return nil
}
