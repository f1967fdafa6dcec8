package stack

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/store"
	"contentapi/shared/tally"
)

// drainTimeout bounds the wait for the stream to be delivered.
const drainTimeout = time.Minute

// Tally is the tally running over one test's tables.
type Tally struct {
	t      ddblocal.TestingT
	poller *lambdalocal.StreamPoller
}

// TallyTables are the record tables (names by logical ID) on db, as the
// tally function has them, on the clock now (nil: the store's).
func TallyTables(tables map[string]string, db store.DB, now func() time.Time) map[string]*store.Table {
	out := map[string]*store.Table{}
	var ledger *store.Table
	for _, r := range app.Resources {
		t := store.New(db, tables[r.Table()], r.Def)
		if now != nil {
			t.Now = now
		}
		// Spend is summed on the first generated resource's spend item,
		// the accounts' spend ledger, as the app has it.
		switch {
		case r.Def.Content == nil:
		case ledger == nil:
			ledger = t
		default:
			t.Ledger = ledger
		}
		out[t.Name()] = t
	}
	return out
}

// TallyHandler is the tally function on tables, logging warnings and worse.
func TallyHandler(tables map[string]*store.Table) app.TallyHandler {
	return (&tally.Tally{Tables: tables, Logger: warnings()}).Handle
}

// StartTally delivers the streams of a test's tables (names by logical ID,
// on the DynamoDB Local at endpoint) to fn until the test ends, and returns
// once the mappings read them: what is written after is counted.
func StartTally(t ddblocal.TestingT, db *dynamodb.Client, endpoint string, tables map[string]string, fn app.TallyHandler) *Tally {
	t.Helper()
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mappings, err := lambdalocal.StreamMappings(tmpl, tables, app.TallyFunction, nil, lambdalocal.StreamWindowHandler(fn))
	if err != nil {
		t.Fatal(err)
	}
	p := lambdalocal.NewStreamPoller(db, endpoint, warnings())
	p.Interval = 20 * time.Millisecond
	go func() { _ = p.Run(ctx, mappings...) }()
	r := &Tally{t: t, poller: p}
	r.Drain()
	return r
}

// Drain returns once every delete made before the call is counted.
func (r *Tally) Drain() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	if err := r.poller.Drained(ctx); err != nil {
		r.t.Fatalf("the tally did not catch up with the streams in %v", drainTimeout)
	}
}

// Delivered is how many stream records the tally has taken.
func (r *Tally) Delivered() int64 { return r.poller.Delivered() }

// warnings is a test's log of warnings and worse, on stderr.
func warnings() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
