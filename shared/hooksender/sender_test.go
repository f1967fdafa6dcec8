package hooksender_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"contentapi/shared/app/queue"
	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sqslocal"
	"contentapi/shared/webhook"
)

type rig struct {
	sender *hooksender.Sender
	store  *hookstore.Store
	lanes  hooksender.Lanes
	sqs    *sqs.Client // the lanes' queue's
	clk    *sqslocal.Clock
	// meter counts the store's DynamoDB calls.
	meter *ddblocal.Meter
}

func newRig(t *testing.T) *rig {
	t.Helper()
	clk := sqslocal.NewClock(time.Now().Truncate(time.Second))
	env := ddblocal.NewTestEnv(t)
	sealer, err := webhook.NewSealer(nil)
	if err != nil {
		t.Fatal(err)
	}
	metered, meter := env.Metered(t)
	store := &hookstore.Store{Client: metered, Table: env.Tables["WebhooksTable"], Sealer: sealer, Now: clk.Now}
	q, err := sqslocal.Start(sqslocal.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	client := sqs.New(sqs.Options{Region: sqslocal.Region, BaseEndpoint: aws.String(q.URL()), Credentials: credentials.NewStaticCredentialsProvider("l", "l", "")})
	lanes := hooksender.Lanes{Queue: queue.SQS{Client: client}}
	for name, lane := range map[string]*string{"fast": &lanes.Fast, "slow": &lanes.Slow} {
		out, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		*lane = *out.QueueUrl
	}
	// The local receiver is on 127.0.0.1: the make run client.
	hc := webhook.NewClient(webhook.Options{AllowLoopback: true, Now: clk.Now})
	return &rig{
		sender: &hooksender.Sender{Store: store, Client: hc, Lanes: lanes, Logger: slog.New(slog.DiscardHandler), Now: clk.Now},
		store:  store, lanes: lanes, sqs: client, clk: clk, meter: meter,
	}
}

// poll is one turn of each lane's event source mapping, the fast lane's
// first; it returns how many messages they handed the sender.
func (r *rig) poll(t *testing.T) int {
	t.Helper()
	n := 0
	for _, url := range []string{r.lanes.Fast, r.lanes.Slow} {
		m := &lambdalocal.SQSMapping{Queue: r.sqs, QueueURL: url, Handler: r.sender.Handle}
		got, err := m.Once(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		n += got
	}
	return n
}

// enqueue queues the delivery k in the fast lane, as the publisher does
// for an endpoint that answers in time.
func (r *rig) enqueue(t *testing.T, k hookstore.DeliveryKey) {
	t.Helper()
	b, _ := json.Marshal(k)
	if _, err := r.sqs.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(r.lanes.Fast), MessageBody: aws.String(string(b))}); err != nil {
		t.Fatal(err)
	}
}

type hit struct{ id, ts string }

// A delivery that fails twice is retried on the schedule, by the message's
// visibility alone, and succeeds on its third attempt: the receiver sees
// one webhook-id, three timestamps, each verified by the specification's
// library; the log says succeeded after 3 attempts.
func TestRetriedOnTheScheduleUntilItSucceeds(t *testing.T) {
	r := newRig(t)
	var mu sync.Mutex
	var hits []hit
	var verifier *standardwebhooks.Webhook
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mu.Lock()
		defer mu.Unlock()
		if err := verifier.VerifyIgnoringTimestamp(body, req.Header); err != nil {
			t.Errorf("delivery does not verify: %v", err)
		}
		hits = append(hits, hit{req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp")})
		if len(hits) < 3 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	e, secret, err := r.store.Create(t.Context(), "acct", hookstore.Endpoint{URL: srv.URL + "/hook", Events: webhook.Types("document", "image")})
	if err != nil {
		t.Fatal(err)
	}
	verifier, _ = standardwebhooks.NewWebhook(secret)
	id := webhook.EventID(e.ID, "test")
	k, _, err := r.store.AddDelivery(t.Context(), "acct", e.ID, id, webhook.Test, r.clk.Now(), []byte(`{"type":"webhook.test"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.enqueue(t, k)

	if n := r.poll(t); n != 1 {
		t.Fatalf("first poll got %d messages", n)
	}
	if n := r.poll(t); n != 0 {
		t.Fatalf("the message came back before its retry was due (%d)", n)
	}
	r.clk.Advance(5 * time.Second) // the first retry's wait
	r.poll(t)
	r.clk.Advance(5*time.Minute - time.Second)
	if n := r.poll(t); n != 0 {
		t.Fatal("the second retry came early")
	}
	r.clk.Advance(time.Second)
	r.poll(t)
	r.clk.Advance(24 * time.Hour)
	if n := r.poll(t); n != 0 {
		t.Fatal("a succeeded delivery's message is still in the queue")
	}

	if len(hits) != 3 || hits[0].id != id || hits[1].id != id || hits[2].id != id ||
		hits[0].ts == hits[1].ts || hits[1].ts == hits[2].ts {
		t.Errorf("attempts %+v", hits)
	}
	log, err := r.store.Deliveries(t.Context(), "acct", e.ID)
	if err != nil || len(log) != 1 {
		t.Fatalf("log %+v %v", log, err)
	}
	if d := log[0]; d.Status != hookstore.Succeeded || d.Attempts != 3 || d.LastResponseStatus == nil || *d.LastResponseStatus != 204 || d.NextAttemptAt != nil {
		t.Errorf("log %+v", d)
	}
}

// The same delivery's message sent twice (the event met twice) makes one
// attempt, not two.
func TestTwoCopiesOfAMessageMakeOneAttempt(t *testing.T) {
	r := newRig(t)
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	e, _, err := r.store.Create(t.Context(), "acct", hookstore.Endpoint{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := r.store.AddDelivery(t.Context(), "acct", e.ID, webhook.EventID(e.ID, "x"), webhook.Test, r.clk.Now(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	r.enqueue(t, k)
	r.enqueue(t, k)
	r.poll(t)
	r.clk.Advance(time.Hour)
	r.poll(t)
	if hits != 1 {
		t.Errorf("%d attempts, want 1", hits)
	}
}

// Past the schedule the delivery is failed and its message gone; an
// endpoint failing for 5 days is disabled.
func TestGivenUpAfterTheScheduleAndDisabledAfterFiveDays(t *testing.T) {
	r := newRig(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	e, _, err := r.store.Create(t.Context(), "acct", hookstore.Endpoint{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := r.store.AddDelivery(t.Context(), "acct", e.ID, webhook.EventID(e.ID, "y"), webhook.Test, r.clk.Now(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	r.enqueue(t, k)
	r.poll(t)
	for _, wait := range webhook.DefaultSchedule {
		r.clk.Advance(wait)
		if n := r.poll(t); n != 1 {
			t.Fatalf("after %v: %d messages", wait, n)
		}
	}
	r.clk.Advance(24 * time.Hour)
	if n := r.poll(t); n != 0 {
		t.Fatal("a failed delivery's message is still in the queue")
	}
	log, _ := r.store.Deliveries(t.Context(), "acct", e.ID)
	if len(log) != 1 || log[0].Status != hookstore.Failed || log[0].Attempts != 8 || *log[0].LastResponseStatus != 503 {
		t.Fatalf("log %+v", log)
	}
	if got, _ := r.store.Get(t.Context(), "acct", e.ID); !got.Enabled {
		t.Fatal("disabled after 28 hours of failures, want 5 days")
	}
	// Days later, another event fails too: the endpoint has failed for 5 days.
	r.clk.Advance(4 * 24 * time.Hour)
	k2, _, _ := r.store.AddDelivery(t.Context(), "acct", e.ID, webhook.EventID(e.ID, "z"), webhook.Test, r.clk.Now(), []byte(`{}`))
	r.enqueue(t, k2)
	r.poll(t)
	got, _ := r.store.Get(t.Context(), "acct", e.ID)
	if got.Enabled || got.DisabledReason == nil {
		t.Errorf("after 5 days of failures: %+v", got)
	}
}

// A failed attempt's log line names the endpoint by its id and host, never
// by its URL: the query and user information, where a receiver may keep a
// token or a password, and the path stay out of the log.
func TestAFailedAttemptsLogKeepsNoPartOfTheURLButItsHost(t *testing.T) {
	r := newRig(t)
	var logged bytes.Buffer
	r.sender.Logger = slog.New(slog.NewJSONHandler(&logged, nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// No answer: the connection is closed under the request.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	secretURL := strings.Replace(srv.URL, "http://", "http://hookuser:hookpassword@", 1) + "/private-path?token=querysecret"
	e, _, err := r.store.Create(t.Context(), "acct", hookstore.Endpoint{URL: secretURL})
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := r.store.AddDelivery(t.Context(), "acct", e.ID, webhook.EventID(e.ID, "t"), webhook.Test, r.clk.Now(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	r.enqueue(t, k)
	r.poll(t)
	line := logged.String()
	if !strings.Contains(line, "webhook attempt without answer") || !strings.Contains(line, `"endpoint":"`+e.ID+`"`) ||
		!strings.Contains(line, `"host":"127.0.0.1"`) {
		t.Fatalf("the failed attempt's log does not name the endpoint and its host: %s", line)
	}
	for _, secret := range []string{"querysecret", "token", "hookuser", "hookpassword", "private-path"} {
		if strings.Contains(line, secret) {
			t.Errorf("the log holds %q of the URL: %s", secret, line)
		}
	}
}

// An account's retry of an ended delivery is one attempt, made with the
// body its end kept: in its endpoint's lane (the slow one while it
// struggles), never retried on the schedule when it fails, and in the fast
// lane only under the account's lease, as every attempt there: while
// another invocation holds it the message waits its turn. Its message
// queued twice (the call retried) still makes one attempt.
func TestARetryIsOneAttemptAdmittedAsAnyOther(t *testing.T) {
	r := newRig(t)
	r.sender.Schedule = webhook.Schedule{} // no retries: the first failure ends it
	var mu sync.Mutex
	var hits []string
	answer := http.StatusServiceUnavailable
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		hits = append(hits, req.Header.Get("webhook-id"))
		w.WriteHeader(answer)
	}))
	t.Cleanup(srv.Close)
	ctx := t.Context()
	e, _, err := r.store.Create(ctx, "acct", hookstore.Endpoint{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	p := &hooksender.Publisher{Store: r.store, Lanes: r.lanes}
	if err := p.Publish(ctx, hooksender.Event{Account: "acct", Type: webhook.Test, At: r.clk.Now(), Data: []byte(`{}`), Identity: []string{"t"}}, e.ID); err != nil {
		t.Fatal(err)
	}
	r.poll(t)
	logged := func() hookstore.Delivery {
		t.Helper()
		log, err := r.store.Deliveries(ctx, "acct", e.ID)
		if err != nil || len(log) != 1 {
			t.Fatalf("log %+v %v", log, err)
		}
		return log[0]
	}
	if d := logged(); d.Status != hookstore.Failed || d.Attempts != 1 {
		t.Fatalf("after its one scheduled attempt: %+v", d)
	}
	retry := func() {
		t.Helper()
		endpoint, d, err := r.store.FindDelivery(ctx, "acct", e.ID, logged().ID)
		if err != nil {
			t.Fatal(err)
		}
		reopened, err := r.store.Retry(ctx, d, r.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the call retried: its message queued twice
			if err := p.Redeliver(ctx, endpoint, reopened); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Struggling after its failure: the retry goes to the slow lane, fails,
	// and is not retried.
	retry()
	r.poll(t)
	r.clk.Advance(time.Hour)
	r.poll(t)
	if d := logged(); len(hits) != 2 || d.Status != hookstore.Failed || d.Attempts != 2 || d.NextAttemptAt != nil {
		t.Fatalf("a failed retry: %d attempts sent, log %+v; want 2 sent, failed after 2, none due", len(hits), d)
	}

	// Enabled afresh (fast lane) while another invocation holds the
	// account's lane: the retry waits for it, then goes once.
	on := true
	if _, err := r.store.Update(ctx, "acct", e.ID, hookstore.Change{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	theirs := hookstore.Lease{Lane: "fast", Owner: "another invocation", Until: r.clk.Now().Add(time.Minute)}
	if _, err := r.store.Admit(ctx, "acct", false, &theirs, r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	answer = http.StatusNoContent
	mu.Unlock()
	retry()
	r.poll(t)
	if len(hits) != 2 {
		t.Fatalf("the retry was sent while another invocation held the account's lane (%d attempts)", len(hits))
	}
	if err := r.store.Release(ctx, "acct", theirs); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		r.clk.Advance(20 * time.Second)
		r.poll(t)
	}
	if d := logged(); len(hits) != 3 || d.Status != hookstore.Succeeded || d.Attempts != 3 || hits[2] != hits[0] {
		t.Fatalf("the retry once the lane was free: %v sent, log %+v; want a third attempt, the same webhook-id, succeeded", hits, d)
	}
}
