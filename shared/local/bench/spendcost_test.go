package bench_test

import (
	"context"
	"io"
	"net/url"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/stack"
)

// The cost bookkeeping's figures, measured as make bench measures them
// (the template's tally mappings delivering the creates' records): without
// a spend limit a create pays for the tally's sum on the account's spend
// item alone, one write for each create made after the one before ended
// (each one's end is a batch of its own); under a limit the request's hold
// and the tally's settle of it on the ledger add theirs, a write each
// (a create's own writes vary by a unit or so between the two runs, so
// the test holds them to one and a half).
// `go test ./shared/local/bench -run TestSpendCostFigures -v` prints them.
func TestSpendCostFigures(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	ctx := context.Background()
	parts, err := stack.StartGeneration(stack.GenerationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(parts.Close)
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	db, meter := env.Metered(t)
	cfg := app.Config{
		Region: ddblocal.Region, DynamoDBEndpoint: env.Endpoint, Tables: env.Tables, KeysTable: env.Tables["ApiKeysTable"],
		AuthCacheTTL: time.Minute, RequestTimeout: time.Minute, LogLevel: 8, LogOutput: io.Discard,
		Generation: parts.Config(),
	}
	c, err := bench.NewAccountCaller(ctx, app.New(cfg, db, stack.Parts), env.Client, env.Tables["ApiKeysTable"], "bench-generation")
	if err != nil {
		t.Fatal(err)
	}
	b := &bench.Board{}
	bench.AddSpendCost(ctx, b, bench.SpendCost{Config: cfg, Plain: env.Client, Endpoint: env.Endpoint, Template: tmpl,
		Tables: env.Tables, Meter: meter, Caller: c, Account: "bench-generation"},
		url.Values{"name": {"Launch post"}, "prompt": {"Announce our new espresso machine."}, "template_id": {"9"}})
	plain, limited := b.Get("wru_cost_create"), b.Get("wru_cost_create_limited")
	t.Log(plain.Line())
	t.Log(limited.Line())
	if plain.Missing != "" || limited.Missing != "" {
		t.Fatalf("not measured: %q, %q", plain.Missing, limited.Missing)
	}
	if plain.Value <= 0 || plain.Value > 1 || limited.Value < plain.Value+1.5 {
		t.Errorf("%s and %s: the spend item's sum is a write at most, shared by a batch, and the hold and its settle a write each", plain.Line(), limited.Line())
	}
}
