// Package tallytest runs the tally function over a test's tables, as the
// template's event source mappings deliver it, so that a test can wait for
// deletes' counts to come down (Drain) instead of sleeping.
package tallytest

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal/ddbtest"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/store"
	"contentapi/shared/tally"
)

// drainTimeout bounds the wait for the stream to be delivered.
const drainTimeout = time.Minute

// Run is the tally running over one test's tables.
type Run struct {
	t      testing.TB
	poller *lambdalocal.StreamPoller
}

// Tables are the record tables of env on db, as the tally function has
// them, on the clock now (nil: the store's).
func Tables(env *ddbtest.Env, db store.DB, now func() time.Time) map[string]*store.Table {
	out := map[string]*store.Table{}
	for _, r := range app.Resources {
		t := store.New(db, env.Tables[r.Table()], r.Def)
		if now != nil {
			t.Now = now
		}
		out[t.Name()] = t
	}
	return out
}

// Handler is the tally function on tables, logging warnings and worse.
func Handler(tables map[string]*store.Table) app.TallyHandler {
	return (&tally.Tally{Tables: tables, Logger: warnings()}).Handle
}

// Start delivers env's tables' streams to fn until the test ends, and
// returns once the mappings read them: what is written after is counted.
func Start(t testing.TB, env *ddbtest.Env, fn app.TallyHandler) *Run {
	t.Helper()
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mappings, err := lambdalocal.StreamMappings(tmpl, env.Tables, app.TallyFunction, nil, lambdalocal.StreamWindowHandler(fn))
	if err != nil {
		t.Fatal(err)
	}
	p := lambdalocal.NewStreamPoller(env.Client, env.Endpoint, warnings())
	p.Interval = 20 * time.Millisecond
	go func() { _ = p.Run(ctx, mappings...) }()
	r := &Run{t: t, poller: p}
	r.Drain()
	return r
}

// Drain returns once every delete made before the call is counted.
func (r *Run) Drain() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	if err := r.poller.Drained(ctx); err != nil {
		r.t.Fatalf("the tally did not catch up with the streams in %v", drainTimeout)
	}
}

// Delivered is how many stream records the tally has taken.
func (r *Run) Delivered() int64 { return r.poller.Delivered() }

// warnings is a test's log of warnings and worse, on stderr.
func warnings() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
