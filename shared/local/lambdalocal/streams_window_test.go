package lambdalocal_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
)

// windowRecorder is a windowed function that counts its calls in the
// window's state, fails its first calls, and keeps what it was given.
type windowRecorder struct {
	mu       sync.Mutex
	failures int
	shards   []string
	states   []string
	ids      []string
	seq      string
}

func (w *windowRecorder) lastSeq() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

func (w *windowRecorder) handle(_ context.Context, ev events.DynamoDBTimeWindowEvent) (events.DynamoDBTimeWindowEventResponse, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.shards = append(w.shards, ev.ShardID+" "+ev.EventSourceARN)
	w.states = append(w.states, ev.State["calls"])
	if w.failures > 0 {
		w.failures--
		if w.failures%2 == 0 {
			// Lambda refuses a windowed answer without a state.
			return events.DynamoDBTimeWindowEventResponse{}, nil
		}
		return events.DynamoDBTimeWindowEventResponse{}, errors.New("failed")
	}
	for _, r := range ev.Records {
		w.ids = append(w.ids, r.Change.Keys["id"].Number())
		w.seq = r.Change.SequenceNumber
	}
	n, _ := strconv.Atoi(ev.State["calls"])
	return events.DynamoDBTimeWindowEventResponse{
		TimeWindowEventResponseProperties: events.TimeWindowEventResponseProperties{State: map[string]string{"calls": strconv.Itoa(n + 1)}},
	}, nil
}

func (w *windowRecorder) seen() (ids, shards, states []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.ids...), append([]string(nil), w.shards...), append([]string(nil), w.states...)
}

// A mapping with a tumbling window delivers window events naming the shard
// and its stream, with the state the function last answered; with
// MaximumRetryAttempts -1 it retries a failed batch (an error, or an
// answer without a state) until it is taken. Starting from now (LATEST),
// it passes over what was written before, and Drained says when all that
// was written is delivered.
func TestWindowedMapping(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	put(t, env, "1", "pending") // before: passed over
	f, _ := lambdalocal.ParseStreamFilter(nil)
	w := &windowRecorder{failures: 4}
	p := lambdalocal.NewStreamPoller(env.Client, env.Endpoint, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	p.Interval = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := lambdalocal.StreamMapping{Table: env.Tables["ImagesTable"], Filter: f, WindowHandler: w.handle, Window: time.Hour, Batch: 1, MaxRetries: -1}
	go func() { _ = p.Run(ctx, m) }()
	drained := func() {
		t.Helper()
		dctx, dcancel := context.WithTimeout(ctx, 30*time.Second)
		defer dcancel()
		if err := p.Drained(dctx); err != nil {
			t.Fatal("not drained")
		}
	}
	drained()
	put(t, env, "2", "pending")
	put(t, env, "3", "pending")
	drained()
	ids, shards, states := w.seen()
	if strings.Join(ids, " ") != "2 3" {
		t.Fatalf("delivered %v, want 2 and 3 only", ids)
	}
	for _, s := range shards {
		if !strings.HasPrefix(s, "shardId-") || !strings.Contains(s, ":table/"+env.Tables["ImagesTable"]+"/stream/") {
			t.Fatalf("events name %q, want the shard and its stream", s)
		}
	}
	// Four failed calls, then 2 with a fresh state, then 3 with 2's.
	if strings.Join(states, ",") != ",,,,,1" {
		t.Fatalf("states %q", states)
	}
	if p.Failed() != 0 || p.Delivered() != 2 {
		t.Fatalf("delivered %d, failed %d", p.Delivered(), p.Failed())
	}
	// What a caught-up mapping has delivered last, read off the stream.
	last, err := lambdalocal.LastSequenceNumbers(ctx, env.Client, env.Endpoint, env.Tables["ImagesTable"], func(r events.DynamoDBEventRecord) bool {
		return r.Change.Keys["id"].Number() != "3"
	})
	if err != nil || len(last) != 1 {
		t.Fatalf("last %v, %v", last, err)
	}
	for _, seq := range last {
		if seq == "" || seq >= w.lastSeq() {
			t.Fatalf("last kept %q, want before record 3's %q", seq, w.lastSeq())
		}
	}
}

// A mapping whose function takes the other kind of event is refused.
func TestWindowedMappingNeedsAWindowHandler(t *testing.T) {
	f, _ := lambdalocal.ParseStreamFilter(nil)
	h := func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return events.DynamoDBEventResponse{}, nil
	}
	env := ddblocal.NewTestEnv(t)
	p := lambdalocal.NewStreamPoller(env.Client, env.Endpoint, slog.Default())
	if err := p.Run(context.Background(), lambdalocal.StreamMapping{Table: env.Tables["ImagesTable"], Filter: f, Handler: h, Window: time.Minute}); err == nil {
		t.Fatal("a windowed mapping ran a plain handler")
	}
}
