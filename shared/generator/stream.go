package generator

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/generation"
	"contentapi/shared/metrics"
	"contentapi/shared/store"
	"contentapi/shared/webhook"
)

// Target is a record table whose stream the generator takes.
type Target struct {
	// Resource names the table's resource ("images"); Object its records
	// ("image"), which names its events (webhook.Ended).
	Resource, Object string
	Table            *store.Table
	Content          *generation.Content
}

// Stream is the generator function: it takes batches of the record
// tables' stream events, which template.yaml's filters narrow to three
// kinds:
//
//   - a record waiting for generation (pending): claim it under a new
//     attempt, generate, write back;
//   - an image whose write-back landed (running to done): keep its picture
//     (see pictures) and delete the one it replaced;
//   - an image deleted: delete its picture.
//
// Delivery is at least once and a batch may be delivered again whole: a
// duplicate claim loses to the first (the attempt it names is gone), and
// the pictures' steps can be repeated.
type Stream struct {
	Generator *Generator
	// Targets by table name.
	Targets map[string]Target
	// WriteBudget is kept back from the invocation's deadline for the
	// write-back.
	WriteBudget time.Duration
	// Ended is told of each generation's end the stream carries (the
	// webhooks' events); nil tells no one. It may be told of one end
	// again (a record delivered twice), so it must take that as one.
	Ended func(context.Context, End) error
	// Crossed is told of each crossing of a usage threshold the stream
	// carries (store.ThresholdOf: a counter item's or a spend ledger's
	// outbox); nil tells no one. As Ended, it must take a crossing told
	// twice as one.
	Crossed func(context.Context, Crossing) error
}

// Crossing is an account's usage reaching a threshold of a limit, as the
// item that counts it recorded it.
type Crossing struct {
	// Resource and Table name the table whose item recorded it.
	Resource, Table string
	Account         string
	Threshold       store.Threshold
}

// End is a generation that ended: the write of its attempt's outcome.
type End struct {
	// Resource and Table name the record's resource and table.
	Resource, Table string
	Account         string
	ID              int64
	// Type is the event type (webhook.Ended's).
	Type string
	// State is the generation state written, Item the record as written.
	State generation.State
	Item  store.Item
}

// Handle is the generator function's entry point. A record that could not
// be handled for now (DynamoDB or S3 failing) is reported as a batch item
// failure, so the event source mapping delivers it again; a generation
// that failed is no such failure: it is written to its record.
func (s *Stream) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	failed := make([]bool, len(ev.Records))
	var wg sync.WaitGroup
	for i, rec := range ev.Records {
		wg.Go(func() {
			if err := s.record(ctx, rec); err != nil {
				s.Generator.logger().Error("stream record not handled", "event_id", rec.EventID,
					"table", store.StreamTable(rec.EventSourceArn), "error", err.Error())
				failed[i] = true
			}
		})
	}
	wg.Wait()
	var resp events.DynamoDBEventResponse
	for i, rec := range ev.Records {
		if failed[i] {
			resp.BatchItemFailures = append(resp.BatchItemFailures,
				events.DynamoDBBatchItemFailure{ItemIdentifier: rec.Change.SequenceNumber})
		}
	}
	if len(resp.BatchItemFailures) > 0 {
		s.Generator.Metrics.BatchFailure(metrics.FunctionGenerator)
	}
	return resp, nil
}

func (s *Stream) record(ctx context.Context, rec events.DynamoDBEventRecord) error {
	target, ok := s.Targets[store.StreamTable(rec.EventSourceArn)]
	if !ok {
		s.Generator.logger().Warn("stream event of a table the generator does not serve", "source", rec.EventSourceArn)
		return nil
	}
	newItem, oldItem := store.StreamItem(rec.Change.NewImage), store.StreamItem(rec.Change.OldImage)
	if th, ok := store.ThresholdOf(oldItem, newItem); ok {
		return s.crossed(ctx, target, rec, newItem, th)
	}
	// A delete leaves a tombstone (store.AttrGoneBy), so it arrives as a
	// MODIFY; a REMOVE is still a delete.
	_, tombstone := newItem[store.AttrGoneBy]
	_, wasTombstone := oldItem[store.AttrGoneBy]
	if rec.EventName == string(events.DynamoDBOperationTypeRemove) || tombstone && !wasTombstone {
		return s.removed(ctx, target, oldItem)
	}
	now, err := store.StateOf(newItem)
	if err != nil || now == nil {
		return err
	}
	before, _ := store.StateOf(oldItem)
	if typ, ended := webhook.Ended(target.Object, before, now); ended && s.Ended != nil {
		account, id, ok := keyOf(newItem)
		if !ok {
			return errors.New("generator: a stream image without a record key")
		}
		end := End{Resource: target.Resource, Table: store.StreamTable(rec.EventSourceArn), Account: account, ID: id,
			Type: typ, State: *now, Item: newItem}
		if err := s.Ended(ctx, end); err != nil {
			return err
		}
	}
	switch {
	case now.Status == generation.Pending:
		return s.pending(ctx, target, newItem, *now)
	case now.Status == generation.Done && target.Content.Picture:
		if before != nil && before.Status == generation.Running {
			return s.committed(ctx, newItem, oldItem)
		}
	}
	return nil
}

// crossed tells of the crossing that the write of item put into its outbox,
// then clears the outbox, so that the item's later writes no longer pass
// the stream's filter. Told but not cleared (DynamoDB failing), the record
// comes again and is told again, which Crossed takes as one.
func (s *Stream) crossed(ctx context.Context, target Target, rec events.DynamoDBEventRecord, item store.Item, th store.Threshold) error {
	account, id, ok := keyOf(item)
	if !ok {
		return errors.New("generator: a stream image without an item key")
	}
	if s.Crossed != nil {
		c := Crossing{Resource: target.Resource, Table: store.StreamTable(rec.EventSourceArn), Account: account, Threshold: th}
		if err := s.Crossed(ctx, c); err != nil {
			return err
		}
	}
	return target.Table.ClearThreshold(ctx, account, id, th)
}

// pending claims a record waiting for generation and runs it. A state
// that failed tries before is taken up after its backoff.
func (s *Stream) pending(ctx context.Context, target Target, item store.Item, state generation.State) error {
	g := s.Generator
	account, id, ok := keyOf(item)
	if !ok {
		return errors.New("generator: a stream image without a record key")
	}
	if state.Tries > 0 {
		if err := sleep(ctx, g.backoff(state.Tries)); err != nil {
			return err
		}
	}
	if !state.InFlight(g.now()) {
		// Past its deadline: it reads as failed already. Written so, its
		// hold on the month's quota is given back (the tally reads it).
		if err := target.Table.Expire(ctx, account, id, state); !errors.Is(err, generation.ErrSuperseded) {
			return err
		}
		return nil
	}
	claim := state.Claim(g.now())
	current, err := target.Table.Transition(ctx, account, id, state.Attempt, generation.Pending, claim, nil)
	if errors.Is(err, generation.ErrSuperseded) {
		return nil // a duplicate delivery, or the record moved on since
	}
	if err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	if d, ok := ctx.Deadline(); ok {
		deadline = d.Add(-s.WriteBudget)
	}
	_, err = g.Run(ctx, Job{
		Table:    target.Table,
		Content:  target.Content,
		Record:   Record{Resource: target.Resource, Account: account, ID: id, Item: current, State: claim},
		Deadline: deadline,
	})
	return err
}

// committed keeps the picture a write-back put on a record and deletes
// the one it replaced.
func (s *Stream) committed(ctx context.Context, newItem, oldItem store.Item) error {
	name, before := resultOf(newItem), resultOf(oldItem)
	if generation.IsPictureName(name) {
		if err := s.Generator.Pictures.Keep(ctx, name); err != nil {
			return err
		}
	}
	if generation.IsPictureName(before) && before != name {
		return s.Generator.Pictures.Delete(ctx, before)
	}
	return nil
}

// removed deletes a deleted record's picture.
func (s *Stream) removed(ctx context.Context, target Target, oldItem store.Item) error {
	if name := resultOf(oldItem); target.Content.Picture && generation.IsPictureName(name) {
		return s.Generator.Pictures.Delete(ctx, name)
	}
	return nil
}

func keyOf(item store.Item) (string, int64, bool) {
	account := store.StrAttr(item, store.AttrAccount)
	id, ok := store.IntAttr(item, store.AttrID)
	return account, id, ok && account != ""
}

func resultOf(item store.Item) string { return store.StrAttr(item, "result") }

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
