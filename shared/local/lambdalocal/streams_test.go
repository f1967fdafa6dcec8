package lambdalocal_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/store"
)

// recorder is a stream function that keeps what it was given and fails
// as told.
type recorder struct {
	mu      sync.Mutex
	batches [][]string // event names and ids
	fail    func(batch []events.DynamoDBEventRecord) (events.DynamoDBEventResponse, error)
}

func (r *recorder) handle(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	r.mu.Lock()
	var ids []string
	for _, rec := range ev.Records {
		ids = append(ids, rec.EventName+" "+rec.Change.Keys["id"].Number())
	}
	r.batches = append(r.batches, ids)
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		return fail(ev.Records)
	}
	return events.DynamoDBEventResponse{}, nil
}

func (r *recorder) seen() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]string(nil), r.batches...)
}

func put(t *testing.T, env *ddblocal.TestEnv, id string, status string) {
	t.Helper()
	item := map[string]types.AttributeValue{
		"account": &types.AttributeValueMemberS{Value: "acme"},
		"id":      &types.AttributeValueMemberN{Value: id},
		"generation": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"status": &types.AttributeValueMemberS{Value: status},
		}},
	}
	if _, err := env.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(env.Tables["ImagesTable"]), Item: item}); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func run(t *testing.T, env *ddblocal.TestEnv, m lambdalocal.StreamMapping) *lambdalocal.StreamPoller {
	t.Helper()
	p := lambdalocal.NewStreamPoller(env.Client, env.Endpoint, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	p.Interval = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go p.Run(ctx, m)
	return p
}

const pendingOnly = `{"eventName":["INSERT","MODIFY"],"dynamodb":{"NewImage":{"generation":{"M":{"status":{"S":["pending"]}}}}}}`

// Records written before and after the poller starts are delivered in
// order, the filter drops the rest, and batches hold at most Batch.
func TestDeliversWhatTheFilterPasses(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	put(t, env, "1", "pending")
	put(t, env, "2", "running")
	f, err := lambdalocal.ParseStreamFilter([]string{pendingOnly})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	p := run(t, env, lambdalocal.StreamMapping{Table: env.Tables["ImagesTable"], Filter: f, Handler: rec.handle, Batch: 2, MaxRetries: 1, FromStart: true})
	for _, id := range []string{"3", "4", "5"} {
		put(t, env, id, "pending")
	}
	waitFor(t, "five deliveries", func() bool { return p.Delivered() == 4 })
	var all []string
	for _, b := range rec.seen() {
		if len(b) > 2 {
			t.Errorf("a batch of %d", len(b))
		}
		all = append(all, b...)
	}
	want := []string{"INSERT 1", "INSERT 3", "INSERT 4", "INSERT 5"}
	if len(all) != len(want) {
		t.Fatalf("delivered %v, want %v", all, want)
	}
	for i := range want {
		if all[i] != want[i] {
			t.Fatalf("delivered %v, want %v", all, want)
		}
	}
}

// A record the function reports failed is delivered again from there,
// as often as the mapping retries, then goes to the on-failure
// destination; a batch the function failed is split.
func TestRetriesAndGivesUp(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	rec := &recorder{}
	rec.fail = func(batch []events.DynamoDBEventRecord) (events.DynamoDBEventResponse, error) {
		for _, r := range batch {
			if r.Change.Keys["id"].Number() == "2" {
				return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: r.Change.SequenceNumber}}}, nil
			}
			if r.Change.Keys["id"].Number() == "9" && len(batch) > 1 {
				return events.DynamoDBEventResponse{}, errors.New("the function failed")
			}
		}
		return events.DynamoDBEventResponse{}, nil
	}
	f, _ := lambdalocal.ParseStreamFilter(nil)
	for _, id := range []string{"1", "2", "3"} {
		put(t, env, id, "pending")
	}
	p := run(t, env, lambdalocal.StreamMapping{Table: env.Tables["ImagesTable"], Filter: f, Handler: rec.handle, Batch: 10, MaxRetries: 2, Bisect: true, FromStart: true})
	waitFor(t, "the failed records given up", func() bool { return p.Failed() == 2 })
	seen := rec.seen()
	// 1,2,3 fails at 2; 2,3 twice more; then 2 and 3 go to the destination.
	if len(seen) != 3 || len(seen[0]) != 3 || len(seen[1]) != 2 || len(seen[2]) != 2 || p.Delivered() != 1 {
		t.Fatalf("batches %v, delivered %d", seen, p.Delivered())
	}
	put(t, env, "8", "pending")
	put(t, env, "9", "pending")
	waitFor(t, "the split batch delivered", func() bool { return p.Delivered() == 3 })
}

func TestFilterRefusesWhatItCannotRead(t *testing.T) {
	for _, bad := range []string{`{"a":["x"],`, `{"a":[{"numeric":[">",1]}]}`, `{"a":"x"}`, `{"a":[{"exists":"yes"}]}`} {
		if _, err := lambdalocal.ParseStreamFilter([]string{bad}); err == nil {
			t.Errorf("ParseFilter(%s) accepted it", bad)
		}
	}
}

// A stream read from its start while still empty (a fresh table, as in
// the tests and a first make run) delivers what is written after.
func TestEmptyStreamAtStart(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	f, _ := lambdalocal.ParseStreamFilter(nil)
	rec := &recorder{}
	p := run(t, env, lambdalocal.StreamMapping{Table: env.Tables["ImagesTable"], Filter: f, Handler: rec.handle, Batch: 10, MaxRetries: 1, FromStart: true})
	put(t, env, "1", "pending")
	waitFor(t, "the delivery", func() bool { return p.Delivered() == 1 })
}

// A stream image read back into an item is the item: the generator reads
// what the stream shows as the store reads what the table holds.
func TestImageRoundTrip(t *testing.T) {
	item := map[string]types.AttributeValue{
		"s": &types.AttributeValueMemberS{Value: "text"}, "n": &types.AttributeValueMemberN{Value: "12.5"},
		"b": &types.AttributeValueMemberBOOL{Value: true}, "null": &types.AttributeValueMemberNULL{Value: true},
		"bin": &types.AttributeValueMemberB{Value: []byte{1, 2}}, "ss": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1"}}, "bs": &types.AttributeValueMemberBS{Value: [][]byte{{3}}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberN{Value: "1"}}},
	}
	if back := store.StreamItem(lambdalocal.StreamImage(item)); !reflect.DeepEqual(back, item) {
		t.Fatalf("round trip:\n%#v\n%#v", back, item)
	}
}
