package tally_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/documents"
	"contentapi/shared/generation"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/metrics"
	"contentapi/shared/metrics/metricstest"
	"contentapi/shared/quota"
	"contentapi/shared/records"
	"contentapi/shared/store"
	"contentapi/shared/tally"
)

// rig is the documents table, written directly, and the tally on it
// through a fault proxy, by the service's own DynamoDB client.
type rig struct {
	t     *testing.T
	env   *ddblocal.TestEnv
	docs  *store.Table
	proxy *ddblocal.FaultProxy
	tally *tally.Tally
	seq   int
	// metrics is where the tally's metric lines go.
	metrics *bytes.Buffer
}

func newRig(t *testing.T) *rig {
	env := ddblocal.NewTestEnv(t)
	proxy := ddblocal.NewFaultProxy(env.Endpoint)
	t.Cleanup(proxy.Close)
	db, err := app.NewDynamoDB(context.Background(), app.Config{Region: ddblocal.Region, DynamoDBEndpoint: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	name := env.Tables["DocumentsTable"]
	out := &bytes.Buffer{}
	return &rig{
		t: t, env: env, proxy: proxy, metrics: out,
		docs: store.New(env.Client, name, documents.Resource),
		tally: &tally.Tally{
			Tables:  map[string]*store.Table{name: store.New(db, name, documents.Resource)},
			Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Metrics: metrics.New(out, "test"),
		},
	}
}

// wantBatchFailures checks the batches the tally counted as failed.
func (r *rig) wantBatchFailures(want float64) {
	r.t.Helper()
	lines, err := metricstest.Parse(r.metrics.Bytes())
	if err != nil {
		r.t.Fatal(err)
	}
	if got := metricstest.Sum(lines, "BatchFailures", "Function=tally", "Stack=test"); got != want {
		r.t.Errorf("BatchFailures = %v, want %v", got, want)
	}
}

func document(name string, template int64) records.Values {
	return records.Values{"name": name, "prompt": "p", "creativity": 0.5, "template_id": template, "words": int64(0)}
}

// deleted creates a document and deletes it, and returns the stream
// record of its delete, with the next sequence number of the shard.
func (r *rig) deleted(account string, template int64) events.DynamoDBEventRecord {
	r.t.Helper()
	ctx := context.Background()
	live, err := r.docs.Create(ctx, account, document("d", template), nil)
	if err != nil {
		r.t.Fatal(err)
	}
	id, _ := store.IntAttr(live, store.AttrID)
	if err := r.docs.Delete(ctx, account, id, store.Precondition{}); err != nil {
		r.t.Fatal(err)
	}
	out, err := r.env.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(r.docs.Name()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: account}, "id": &types.AttributeValueMemberN{Value: fmt.Sprint(id)}},
	})
	if err != nil {
		r.t.Fatal(err)
	}
	r.seq++
	return events.DynamoDBEventRecord{
		EventID: fmt.Sprint(r.seq), EventName: "MODIFY", EventSource: "aws:dynamodb",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + r.docs.Name() + "/stream/2026-01-01T00:00:00.000",
		Change: events.DynamoDBStreamRecord{
			OldImage: lambdalocal.StreamImage(live), NewImage: lambdalocal.StreamImage(out.Item),
			SequenceNumber:              fmt.Sprintf("%021d", 100+r.seq),
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()},
		},
	}
}

// deliver hands the tally a batch of one shard, as a windowed mapping does,
// through the function's entry point.
func (r *rig) deliver(shard string, recs ...events.DynamoDBEventRecord) events.DynamoDBTimeWindowEventResponse {
	r.t.Helper()
	out, err := r.invoke(events.DynamoDBTimeWindowEvent{
		DynamoDBEvent:        events.DynamoDBEvent{Records: recs},
		TimeWindowProperties: events.TimeWindowProperties{ShardID: shard, State: map[string]string{}},
	}, 2*time.Second)
	if err != nil {
		r.t.Fatal(err)
	}
	resp, ok := out.(events.DynamoDBTimeWindowEventResponse)
	if !ok {
		r.t.Fatalf("a stream batch answered with %T", out)
	}
	if resp.State == nil {
		r.t.Fatal("a windowed function's answer without a state: Lambda refuses it")
	}
	return resp
}

// invoke gives the function's entry point an event as Lambda does: JSON,
// with timeout left.
func (r *rig) invoke(ev any, timeout time.Duration) (any, error) {
	r.t.Helper()
	raw, err := json.Marshal(ev)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return r.tally.Invoke(ctx, raw)
}

// total is the account's count of a template, as lists show it.
func (r *rig) total(account string, template int64) int64 {
	r.t.Helper()
	p, err := r.docs.List(context.Background(), account, records.ListQuery{Scope: template, SortBy: "id", PerPage: 10, Page: 1})
	if err != nil {
		r.t.Fatal(err)
	}
	return p.Total
}

func (r *rig) wantTotal(account string, template, want int64) {
	r.t.Helper()
	if got := r.total(account, template); got != want {
		r.t.Fatalf("%s, template %d: total %d, want %d", account, template, got, want)
	}
}

func (r *rig) counter(account string) store.Item { return r.item(account, "0") }

// item is the account's item id, as stored.
func (r *rig) item(account, id string) store.Item {
	r.t.Helper()
	out, err := r.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(r.docs.Name()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: account}, "id": &types.AttributeValueMemberN{Value: id}},
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return out.Item
}

func marks(counter store.Item) []string {
	var out []string
	for name := range counter {
		if strings.HasPrefix(name, "sq_") {
			out = append(out, name)
		}
	}
	return out
}

// Each delete comes down once, on the template the record had, however
// often and in whatever order its record is delivered again.
func TestEachDeleteCountsOnce(t *testing.T) {
	r := newRig(t)
	var recs []events.DynamoDBEventRecord
	for i := range 6 {
		recs = append(recs, r.deleted("acme", []int64{1, 4}[i%2]))
	}
	r.wantTotal("acme", 1, 3)
	if resp := r.deliver("shard-1", recs[:4]...); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
	r.wantTotal("acme", 1, 1)
	r.wantTotal("acme", 4, 1)
	// The same batch again, part of it, then a batch overlapping it.
	r.deliver("shard-1", recs[:4]...)
	r.deliver("shard-1", recs[1], recs[2])
	r.deliver("shard-1", recs[2:]...)
	r.wantTotal("acme", 1, 0)
	r.wantTotal("acme", 4, 0)
	// An old record delivered after newer ones changes nothing.
	r.deliver("shard-1", recs[0])
	r.wantTotal("acme", 1, 0)
	counter := r.counter("acme")
	if n := len(marks(counter)); n != 1 {
		t.Fatalf("%d watermarks for one shard", n)
	}
	if !store.Counted(counter, "shard-1", recs[5].Change.SequenceNumber) || store.Counted(counter, "shard-1", "999999999999999999999") ||
		store.Counted(counter, "shard-2", recs[0].Change.SequenceNumber) {
		t.Fatal("Counted does not read the watermark")
	}
}

// A batch is grouped by account: an account whose write fails is reported
// from its first record, the others are applied, and the batch delivered
// again from there counts every delete once.
func TestPartialBatchIsDeliveredAgainFromTheFirstFailure(t *testing.T) {
	r := newRig(t)
	a1, b1, a2, b2 := r.deleted("acme", 1), r.deleted("globex", 1), r.deleted("acme", 1), r.deleted("globex", 1)
	r.proxy.Inject(ddblocal.MatchOp("UpdateItem", `"globex"`), ddblocal.FailCall, 100)
	resp := r.deliver("shard-1", a1, b1, a2, b2)
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != b1.Change.SequenceNumber {
		t.Fatalf("failures %v, want globex's first record", resp.BatchItemFailures)
	}
	r.wantTotal("acme", 1, 0)
	r.wantTotal("globex", 1, 2)
	r.wantBatchFailures(1)
	r.proxy.Reset()
	r.proxy.Wait()
	if resp := r.deliver("shard-1", b1, a2, b2); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
	r.wantTotal("acme", 1, 0)
	r.wantTotal("globex", 1, 0)
	r.wantBatchFailures(1)
}

// A count write whose answer is lost is retried by the SDK, which finds
// the watermark moved: counted once. One held past the invocation's
// deadline is reported failed; when it lands after all, the batch
// delivered again counts nothing twice.
func TestLostAndLateCountWritesCountOnce(t *testing.T) {
	r := newRig(t)
	recs := []events.DynamoDBEventRecord{r.deleted("acme", 1), r.deleted("acme", 1), r.deleted("acme", 1)}
	r.proxy.Inject(ddblocal.MatchOp("UpdateItem", `"sq_`), ddblocal.LoseAnswer, 1)
	if resp := r.deliver("shard-1", recs[0]); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
	r.wantTotal("acme", 1, 2)

	held := r.proxy.Inject(ddblocal.MatchOp("UpdateItem", `"sq_`), ddblocal.HoldCall, 100) // every SDK attempt
	if resp := r.deliver("shard-1", recs[1:]...); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("failures %v, want the held write's", resp.BatchItemFailures)
	}
	<-held.Held()
	held.Release()
	r.proxy.Reset()
	r.proxy.Wait()
	r.deliver("shard-1", recs[1:]...)
	r.wantTotal("acme", 1, 0)

	// The database down: every delivery fails, none counts, and the first
	// after it is back counts each delete once.
	more := []events.DynamoDBEventRecord{r.deleted("acme", 4), r.deleted("acme", 4)}
	r.proxy.Down(ddblocal.HangCall)
	for range 2 {
		if resp := r.deliver("shard-1", more...); len(resp.BatchItemFailures) != 1 {
			t.Fatalf("failures %v", resp.BatchItemFailures)
		}
	}
	r.proxy.Up()
	r.proxy.Wait()
	r.deliver("shard-1", more...)
	r.wantTotal("acme", 4, 0)
}

// Shards have watermarks of their own: a record of a new shard (after a
// split, or the stream's next shard) is not taken for one already counted.
// Watermarks older than the stream's retention are removed.
func TestWatermarksByShardArePruned(t *testing.T) {
	r := newRig(t)
	old := r.deleted("acme", 1)
	old.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: time.Now().Add(-26 * time.Hour)}
	r.deliver("shard-old", old)
	recent := r.deleted("acme", 1)
	recent.Change.SequenceNumber = "1" // lower than the old shard's
	r.deliver("shard-new", recent)
	r.wantTotal("acme", 1, 0)
	if m := marks(r.counter("acme")); len(m) != 1 {
		t.Fatalf("watermarks %v, want the new shard's alone", m)
	}
}

// A record that can never be applied (no record's image) is skipped, and
// does not hold up the shard; a batch that names no shard is refused whole.
func TestWhatCannotBeCountedIsSkipped(t *testing.T) {
	r := newRig(t)
	good := r.deleted("acme", 1)
	bad := good
	bad.Change.OldImage = map[string]events.DynamoDBAttributeValue{"id": events.NewNumberAttribute("3")}
	bad.Change.SequenceNumber = "99"
	notDelete := good
	notDelete.Change.NewImage = good.Change.OldImage
	if resp := r.deliver("shard-1", bad, notDelete, good); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
	r.wantTotal("acme", 1, 0)
	r.wantBatchFailures(0) // skipped, not failed: nothing comes of delivering them again
	_, err := r.tally.Handle(context.Background(), events.DynamoDBTimeWindowEvent{DynamoDBEvent: events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{good}}})
	if !errors.Is(err, tally.ErrNoShard) {
		t.Fatalf("a batch without its shard: %v", err)
	}
	r.wantBatchFailures(1)
}

// The schedule's event runs the sweep: a create that crashed between its
// steps, on an account that writes no more, is settled (its id voided, its
// count reversed) and the counter leaves the index of unsettled ones.
func TestScheduledEventSweeps(t *testing.T) {
	r := newRig(t)
	token := store.NewToken(time.Now().Add(-time.Hour))
	at, _ := store.TokenTime(token)
	_, err := r.env.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(r.docs.Name()),
		Key:       map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: "quiet"}, "id": &types.AttributeValueMemberN{Value: "0"}},
		// What the crashed create's counter write left: the id, its count,
		// its intent.
		UpdateExpression:         aws.String("SET next_id = :id, #i = :id, #u = :at, last_intent = :token ADD count_1 :one"),
		ExpressionAttributeNames: map[string]string{"#i": "op_c1_" + token, "#u": store.AttrUnsettled},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":id": &types.AttributeValueMemberN{Value: "1"}, ":one": &types.AttributeValueMemberN{Value: "1"},
			":at": &types.AttributeValueMemberN{Value: fmt.Sprint(at.Unix())}, ":token": &types.AttributeValueMemberS{Value: token},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.wantTotal("quiet", 1, 1)
	if _, err := r.invoke(events.EventBridgeEvent{
		Version: "0", ID: "sweep", DetailType: tally.ScheduleDetailType, Source: tally.ScheduleSource,
		Time: time.Now(), Resources: []string{"arn:aws:events:us-east-1:000000000000:rule/sweep"}, Detail: json.RawMessage("{}"),
	}, 10*time.Second); err != nil { // the function's timeout in template.yaml
		t.Fatal(err)
	}
	r.wantTotal("quiet", 1, 0)
	counter := r.counter("quiet")
	for name := range counter {
		if strings.HasPrefix(name, "op_") || name == store.AttrUnsettled {
			t.Errorf("the counter still has %s after the sweep", name)
		}
	}
}

// change is the stream record of a record's change from old to new, with
// the next sequence number of the shard.
func (r *rig) change(old, new store.Item) events.DynamoDBEventRecord {
	r.seq++
	return events.DynamoDBEventRecord{
		EventID: fmt.Sprint(r.seq), EventName: "MODIFY", EventSource: "aws:dynamodb",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + r.docs.Name() + "/stream/2026-01-01T00:00:00.000",
		Change: events.DynamoDBStreamRecord{
			OldImage: lambdalocal.StreamImage(old), NewImage: lambdalocal.StreamImage(new),
			SequenceNumber:              fmt.Sprintf("%021d", 100+r.seq),
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()},
		},
	}
}

// A generation's hold comes back once, less what it used, when the write
// that ends it is read, however often that is delivered, and even when
// the answer of the count write is lost; its claim moves nothing. A hold
// taken away by a delete comes back whole, with the delete's count.
func TestHoldsComeBackOnce(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	const words = "used_words_2026_11"
	step := r.step
	held := func() (int64, generation.State, store.Item) {
		t.Helper()
		gen := generation.Request("m", time.Now())
		item, err := r.docs.Create(ctx, "acme", document("d", 1), &gen)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := store.IntAttr(item, store.AttrID)
		holding := gen.Requeue(false)
		holding.Hold = &generation.Hold{ID: gen.Attempt, Usage: words, Held: 4096}
		return id, holding, step(id, gen, holding)
	}

	id, pending, waiting := held()
	running := pending.Claim(time.Now())
	claimed := step(id, pending, running)
	ended := step(id, running, running.Finish("m", generation.Usage{Counted: 5000}, time.Now()))
	claim, end := r.change(waiting, claimed), r.change(claimed, ended)
	r.proxy.Inject(ddblocal.MatchOp("UpdateItem", `"sq_`), ddblocal.LoseAnswer, 1)
	r.deliver("shard-1", claim, end)
	r.deliver("shard-1", claim, end)
	r.deliver("shard-1", end)
	if got, _ := store.IntAttr(r.counter("acme"), words); got != 0 {
		t.Fatalf("%s = %d after a generation that used more than its hold: want 0 (it counts the hold, no more)", words, got)
	}

	id, _, waiting = held()
	if err := r.docs.Delete(ctx, "acme", id, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	out, err := r.env.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(r.docs.Name()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: "acme"}, "id": &types.AttributeValueMemberN{Value: fmt.Sprint(id)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	del := r.change(waiting, out.Item)
	r.deliver("shard-1", del)
	r.deliver("shard-1", end, del)
	if got, _ := store.IntAttr(r.counter("acme"), words); got != -4096 {
		t.Fatalf("%s = %d after a held record was deleted: want -4096, given back once", words, got)
	}
	r.wantTotal("acme", 1, 1)
}

// step writes acme's record id from one generation state to the next, as
// the generator does.
func (r *rig) step(id int64, from, to generation.State) store.Item {
	r.t.Helper()
	item, err := r.docs.Transition(context.Background(), "acme", id, from.Attempt, from.Status, to, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return item
}

// twoTries runs the generation gen of acme's record id, created as
// created, in two tries: the first spends 100 and hands back, the second
// spends 50 more and ends. It returns the stream's records of the four
// writes: claim, hand-back, claim, end.
func (r *rig) twoTries(id int64, gen generation.State, created store.Item) (claim, back, claim2, end events.DynamoDBEventRecord) {
	r.t.Helper()
	now := time.Now()
	first := gen.Claim(now)
	claimed := r.step(id, gen, first)
	again := first.Requeue(true).Spend(100)
	handedBack := r.step(id, first, again)
	second := again.Claim(now)
	reclaimed := r.step(id, again, second)
	ended := r.step(id, second, second.Finish("m", generation.Usage{}, now).Spend(50))
	return r.change(created, claimed), r.change(claimed, handedBack), r.change(handedBack, reclaimed), r.change(reclaimed, ended)
}

// spendItem is the account's spend item (id -1), as stored.
func (r *rig) spendItem(account string) store.Item { return r.item(account, "-1") }

// What each write-back of a generation adds to its cost is summed on the
// account's spend item, by month and by day, once: whether the write that
// sums it loses its answer, is held past the SDK's retries until the
// batch fails, or meets the database down; a claim spends nothing, and
// nothing of it lands on the counter item.
func TestSpendCountsOnce(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	now := time.Now()
	month, day := quota.UsedAttr(quota.Spend, quota.PeriodOf(now)), quota.DayAttr(quota.Spend, now)
	// A generation of two tries: the first spends 100 and hands back, the
	// second spends 50 more and ends.
	gen := generation.Request("m", now)
	created, err := r.docs.Create(ctx, "acme", document("d", 1), &gen)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := store.IntAttr(created, store.AttrID)
	claim, back, claim2, end := r.twoTries(id, gen, created)
	want := func(n int64) {
		t.Helper()
		item := r.spendItem("acme")
		if m, _ := store.IntAttr(item, month); m != n {
			t.Fatalf("%s = %d, want %d", month, m, n)
		}
		if d, _ := store.IntAttr(item, day); d != n {
			t.Fatalf("%s = %d, want %d", day, d, n)
		}
		if _, ok := r.counter("acme")[month]; ok {
			t.Fatal("the counter item counts spend")
		}
	}

	r.proxy.Inject(ddblocal.MatchOp("UpdateItem", `"sq_`), ddblocal.LoseAnswer, 1)
	r.deliver("shard-1", claim, back)
	r.deliver("shard-1", claim, back)
	want(100)

	held := r.proxy.Inject(ddblocal.MatchOp("UpdateItem", `"sq_`), ddblocal.HoldCall, 100) // every SDK attempt
	if resp := r.deliver("shard-1", claim2, end); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("failures %v, want the held write's", resp.BatchItemFailures)
	}
	<-held.Held()
	held.Release()
	r.proxy.Reset()
	r.proxy.Wait()
	r.proxy.Down(ddblocal.HangCall)
	if resp := r.deliver("shard-1", claim2, end); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("failures %v with the database down", resp.BatchItemFailures)
	}
	r.proxy.Up()
	r.proxy.Wait()
	r.deliver("shard-1", back, claim2, end)
	want(150)
}

// Under a spend limit, a generation's worst case held on the ledger is
// settled to what it cost in all when the write that ends it is read (a
// hand-back keeps it held): the hold taken off, the cost added and its
// mark removed, once however often the write is delivered, its answer
// lost or not. A hold taken away by a delete is given back, less what the
// generation spent.
func TestSpendHoldSettledOnce(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	now := time.Now()
	const worst = 300
	r.docs.Cap = store.SpendCap{Default: quota.Max(1000), Worst: func(n int64) generation.USD { return worst * generation.USD(n) }}
	committedAttr := quota.CommittedAttr(quota.PeriodOf(now))
	create := func() (int64, generation.State, store.Item) {
		t.Helper()
		gen := generation.Request("m", now)
		item, err := r.docs.Create(ctx, "acme", document("d", 1), &gen)
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.StateOf(item)
		if err != nil || s.SpendHold == nil {
			t.Fatalf("the record holds no spend: %v %v", s, err)
		}
		id, _ := store.IntAttr(item, store.AttrID)
		return id, *s, item
	}
	want := func(step string, committed, holds int64) {
		t.Helper()
		item := r.item("acme", "-2") // the ledger
		n, _ := store.IntAttr(item, committedAttr)
		var marks int64
		for name := range item {
			if strings.HasPrefix(name, "hd_") {
				marks++
			}
		}
		if n != committed || marks != holds {
			t.Fatalf("%s: %d committed in %d holds, want %d in %d", step, n, marks, committed, holds)
		}
	}

	id, gen, created := create()
	want("held", worst, 1)
	claim, back, claim2, end := r.twoTries(id, gen, created)

	r.proxy.Inject(ddblocal.MatchOp("UpdateItem", `"sq_`), ddblocal.LoseAnswer, 1)
	r.deliver("shard-1", claim, back)
	want("handed back, the hold kept", worst, 1)
	r.proxy.Inject(ddblocal.MatchOp("UpdateItem", `"sq_`), ddblocal.LoseAnswer, 1)
	r.deliver("shard-1", claim2, end)
	want("ended", 150, 0)
	r.deliver("shard-1", claim, back, claim2, end)
	r.deliver("shard-1", end)
	want("delivered again", 150, 0)
	if used, _ := store.IntAttr(r.spendItem("acme"), quota.UsedAttr(quota.Spend, quota.PeriodOf(now))); used != 150 {
		t.Fatalf("spent %d, want 150", used)
	}

	id, _, created = create()
	want("held again", 150+worst, 1)
	if err := r.docs.Delete(ctx, "acme", id, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	del := r.change(created, r.item("acme", fmt.Sprint(id)))
	r.deliver("shard-1", del)
	r.deliver("shard-1", del)
	want("deleted", 150, 0)
}
