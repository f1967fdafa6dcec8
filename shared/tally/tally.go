// Package tally is the tally function: it takes deleted records off their
// accounts' counts, and gives back what generations held of the month's
// words and did not use, from the record tables' streams. A delete is one
// write (the record becomes its tombstone), and so is a generation's end;
// their stream records, filtered by template.yaml to a live record turned
// tombstone or a change of a record whose generation holds, come here, and
// store.Table.Apply applies them to the counter item exactly once, under
// the watermark of the shard they were read from (shared/store/tally.go,
// holds.go).
//
// The event source mappings use a tumbling window only so that each
// invocation names its shard (events.DynamoDBTimeWindowEvent); the window's
// state is not used.
//
// The function also runs on a schedule (template.yaml): Sweep settles the
// count changes that an outage left open on accounts that write no more
// (shared/store/sweep.go), so every total is exact again within minutes
// whether or not its account writes.
package tally

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/metrics"
	"contentapi/shared/store"
)

// maxConcurrentWrites bounds the counter writes one invocation has in
// flight (one per account of the batch).
const maxConcurrentWrites = 16

// ErrNoShard is the answer to a batch that names no shard: its mapping has
// no tumbling window, and without the shard no watermark can tell a record
// delivered again from a new one.
var ErrNoShard = errors.New("tally: the batch names no shard (the event source mapping needs TumblingWindowInSeconds)")

// Tally is the function's handler.
type Tally struct {
	// Tables are the record tables by name.
	Tables map[string]*store.Table
	Logger *slog.Logger
	// Metrics counts the batches not handled whole; nil counts none.
	Metrics *metrics.Emitter
}

// Invoke is the function's entry point, what lambda.Start receives: a
// batch of a table's stream (Handle), or the schedule's event (Sweep), told
// apart by the event's source and type.
func (t *Tally) Invoke(ctx context.Context, raw json.RawMessage) (any, error) {
	var kind struct {
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
	}
	if err := json.Unmarshal(raw, &kind); err != nil {
		return nil, err
	}
	if kind.Source == ScheduleSource && kind.DetailType == ScheduleDetailType {
		var ev events.EventBridgeEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, err
		}
		return nil, t.Sweep(ctx, ev)
	}
	var ev events.DynamoDBTimeWindowEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, err
	}
	return t.Handle(ctx, ev)
}

// What an EventBridge schedule sends: a Scheduled Event from aws.events.
const (
	ScheduleSource     = "aws.events"
	ScheduleDetailType = "Scheduled Event"
)

// Sweep is the scheduled run: on every table, the counters whose intents
// an outage left open are settled (store.Table.Sweep). A table it could
// not sweep whole is an error, after the others are swept; the next run
// takes up what is left either way.
func (t *Tally) Sweep(ctx context.Context, _ events.EventBridgeEvent) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(t.Tables)) {
		swept, err := t.Tables[name].Sweep(ctx)
		if swept.Settled > 0 || swept.Left > 0 {
			t.Logger.Info("tally: sweep settled open count changes", "table", name,
				"counters", swept.Counters, "settled", swept.Settled, "left", swept.Left)
		}
		if err != nil {
			t.Logger.Error("tally: sweep incomplete, the next one goes on", "table", name, "error", err.Error())
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// account is one account's removals in a batch, from one table.
type account struct {
	table *store.Table
	name  string
	// first is the index in the batch of its first record.
	first int
	cs    []store.Change
}

// Handle is the tally function's entry point. Records it cannot apply now
// (DynamoDB failing) are reported from the first of them, so the mapping
// delivers them, and everything after them in the shard, again; records
// it can never apply (no record's delete) are logged and skipped.
func (t *Tally) Handle(ctx context.Context, ev events.DynamoDBTimeWindowEvent) (events.DynamoDBTimeWindowEventResponse, error) {
	resp := events.DynamoDBTimeWindowEventResponse{
		TimeWindowEventResponseProperties: events.TimeWindowEventResponseProperties{State: map[string]string{}},
	}
	if len(ev.Records) == 0 {
		return resp, nil // a window's closing call
	}
	if ev.ShardID == "" {
		t.Metrics.BatchFailure(metrics.FunctionTally)
		return resp, ErrNoShard
	}
	accounts := t.group(ev.Records)
	failed := make([]bool, len(accounts))
	sem := make(chan struct{}, maxConcurrentWrites)
	var wg sync.WaitGroup
	for i, a := range accounts {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := a.table.Apply(ctx, ev.ShardID, a.name, a.cs); err != nil {
				t.Logger.Error("tally: counts not taken down, delivered again", "table", a.table.Name(),
					"shard", ev.ShardID, "records", len(a.cs), "error", err.Error())
				failed[i] = true
			}
		})
	}
	wg.Wait()
	first := -1
	for i, a := range accounts {
		if failed[i] && (first < 0 || a.first < first) {
			first = a.first
		}
	}
	if first >= 0 {
		t.Metrics.BatchFailure(metrics.FunctionTally)
		resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: ev.Records[first].Change.SequenceNumber}}
	}
	return resp, nil
}

// group sorts a batch's changes (deletes, generations' ends) by table and
// account, in stream order.
func (t *Tally) group(recs []events.DynamoDBEventRecord) []*account {
	type key struct{ table, account string }
	byKey := map[key]*account{}
	var out []*account
	for i, rec := range recs {
		name := store.StreamTable(rec.EventSourceArn)
		table := t.Tables[name]
		if table == nil {
			t.skip("a table the tally does not serve", name, rec)
			continue
		}
		old := store.StreamItem(rec.Change.OldImage)
		acct, c, ok := table.Changed(rec.EventName, old, store.StreamItem(rec.Change.NewImage))
		if !ok {
			if store.Holding(old) {
				continue // a step of a generation that keeps its hold
			}
			t.skip("neither a delete nor a generation's end", name, rec)
			continue
		}
		if !store.ValidSeq(rec.Change.SequenceNumber) {
			t.skip("no sequence number to count it once by", name, rec)
			continue
		}
		k := key{name, acct}
		a := byKey[k]
		if a == nil {
			a = &account{table: table, name: acct, first: i}
			byKey[k] = a
			out = append(out, a)
		}
		c.Seq, c.At = rec.Change.SequenceNumber, rec.Change.ApproximateCreationDateTime.Time
		a.cs = append(a.cs, c)
	}
	return out
}

// skip logs a record that can never be applied, by its position only:
// nothing of its content.
func (t *Tally) skip(why, table string, rec events.DynamoDBEventRecord) {
	t.Logger.Error("tally: stream record skipped: "+why, "table", table,
		"event_id", rec.EventID, "sequence", rec.Change.SequenceNumber)
}
