package integration_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"contentapi/shared/app"
	"contentapi/shared/hookapi"
	"contentapi/shared/hookstore"
	"contentapi/shared/local/hookreceiver"
	"contentapi/shared/local/sqslocal"
	localstack "contentapi/shared/local/stack"
	"contentapi/shared/quota"
	"contentapi/shared/webhook"
)

// sceneLog is what happened, in order, at the receivers of a scene.
type sceneLog struct {
	mu     sync.Mutex
	events []string
}

func (l *sceneLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// count is how many of the events before the first until (all of them
// when until has not happened, or is "") are e.
func (l *sceneLog) count(e, until string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, got := range l.events {
		if got == until {
			break
		}
		if got == e {
			n++
		}
	}
	return n
}

// String is the log in order.
func (l *sceneLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.events)
}

// One account's receiver that never answers does not delay another
// account's deliveries. The sender runs as the template deploys it: each
// lane's mapping with its batch size and its concurrency cap, on the
// queues' own clock. Account A's events, more than the fast lane's
// invocations can take at once, go to a receiver that takes each request
// and never answers it; then one event of account B's. B's delivery is
// made while every attempt to A's receiver still waits for its answer
// (none has ended, none has timed out), and with one batch of A's in
// flight at most: one invocation, whatever A has queued. Once A's attempts
// end, failed, A's endpoint is struggling, and A's deliveries put back in
// the fast lane go to the slow lane when the clock reaches them.
func TestADeadReceiverDoesNotDelayAnotherAccountsDeliveries(t *testing.T) {
	// Today's time, stopped (the deliveries' items expire 30 days after
	// their events, which DynamoDB Local's TTL honours).
	clk := sqslocal.NewClock(time.Now().Truncate(time.Second))
	var hooks *webhooksQueue
	s := newStackWith(t, func(cfg *app.Config) {
		hooks = withWebhooks(t, clk)(cfg)
		cfg.Webhooks.Client = webhook.Options{AllowLoopback: true}
		cfg.Clock = clk.Now
	})
	fast, ok := hooks.Settings.Lane(localstack.WebhookDeliveriesQueue)
	if !ok {
		t.Fatal("no fast lane")
	}
	var log sceneLog
	dead := hookreceiver.NewHanging(func() { log.add("A attempted") }, func() { log.add("A ended") })
	t.Cleanup(dead.Close) // after the sender stops
	alive := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		log.add("B delivered")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(alive.Close)

	sealer, _ := webhook.NewSealer(hooks.cfg.Seal)
	st := &hookstore.Store{Client: s.env.Client, Table: hooks.cfg.Table, Sealer: sealer, Now: clk.Now}
	a, _, err := st.Create(t.Context(), "acct-a", hookstore.Endpoint{URL: dead.URL + "/hook", Events: app.EventTypes})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Create(t.Context(), "acct-b", hookstore.Endpoint{URL: alive.URL + "/hook", Events: app.EventTypes}); err != nil {
		t.Fatal(err)
	}
	// More of A's than every invocation of the fast lane takes at once,
	// then one of B's.
	manyOfA, err := hooks.Backlog(t.Context(), st, "acct-a", "document.generated", clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := hooks.Publish(t.Context(), st, "acct-b", "document.generated", 1, clk.Now()); err != nil {
		t.Fatal(err)
	}

	send, err := s.app.SenderEntry()
	if err != nil {
		t.Fatal(err)
	}
	hooks.runSender(t, send)
	eventually(t, "B's delivery", func() (bool, string) { return log.count("B delivered", "") > 0, log.String() })
	attempted, ended := log.count("A attempted", "B delivered"), log.count("A ended", "B delivered")
	if ended != 0 || attempted == 0 || attempted > fast.BatchSize {
		t.Fatalf("before B's delivery, %d attempts to A's receiver had started and %d ended: want B's before any of A's ended, "+
			"with at most one batch (%d) of A's started; the receivers saw %s", attempted, ended, fast.BatchSize, &log)
	}

	// A's attempts end without an answer: A's endpoint struggles, and
	// the deliveries of A's put back in the fast lane leave it for the
	// slow lane, where its retries are too.
	dead.Release()
	eventually(t, "A's attempts failed", func() (bool, string) {
		e, err := st.Get(t.Context(), "acct-a", a.ID)
		return err == nil && e.Struggling, fmt.Sprint(e, err)
	})
	clk.Advance(time.Minute)
	// A message that an invocation read before the endpoint struggled, and
	// put back in the fast lane (its account's lane held) after the clock
	// moved, waits its first deferral (a second) on the clock: move it on
	// by a second at a time, up to three, short of the slow lane's first
	// retry (5 s), so that no retry comes due meanwhile.
	moved, last := 0, time.Now()
	eventually(t, "A's deliveries in the slow lane, none in the fast one", func() (bool, string) {
		fastHolds, slowHolds := queued(t, hooks.client, hooks.URL), queued(t, hooks.client, hooks.SlowURL)
		if fastHolds > 0 && moved < 3 && time.Since(last) > time.Second {
			clk.Advance(time.Second)
			moved, last = moved+1, time.Now()
		}
		return fastHolds == 0 && slowHolds == manyOfA, fmt.Sprintf("fast lane %d, slow lane %d, want 0 and %d", fastHolds, slowHolds, manyOfA)
	})
	if attempted := log.count("A attempted", ""); attempted > fast.BatchSize+manyOfA {
		t.Errorf("%d attempts to A's receiver, want the fast lane's one batch and one each in the slow lane", attempted)
	}
}

// queued is how many messages the queue holds, visible or not.
func queued(t *testing.T, c *sqs.Client, url string) int {
	t.Helper()
	a, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	var visible, hidden int
	fmt.Sscan(a.Attributes["ApproximateNumberOfMessages"], &visible)
	fmt.Sscan(a.Attributes["ApproximateNumberOfMessagesNotVisible"], &hidden)
	return visible + hidden
}

// Deliveries are bounded like reads: each attempt counts against the
// account's monthly limit of deliveries, as usage shows it; once it is
// reached a test event is 429 quota_exceeded naming that limit, and a
// generation's event is kept in the delivery log as skipped, with its
// reason, and never sent. Answers match the document. The limit's 80%
// and 100%, both reached by the second attempt, are told, uncounted.
func TestDeliveriesStopAtTheMonthsLimit(t *testing.T) {
	d := newDeliveryStack(t, nil, func(int) int { return http.StatusNoContent })
	c := newConformance(t, d.stack)
	d.setLimits("acme", quota.Limits{quota.Deliveries: quota.Max(2)})
	test := "/api/v1/webhooks/" + d.endpoint.ID + "/test"
	c.call(202, request{method: "POST", path: test, key: d.writeKey})
	c.call(202, request{method: "POST", path: test, key: d.writeKey})
	d.wantBothSharesOnce(t)
	// sent waits for n deliveries other than the thresholds' and returns them.
	sent := func(n int) []map[string]any {
		t.Helper()
		var got []map[string]any
		eventually(t, fmt.Sprintf("%d deliveries", n), func() (bool, string) {
			got = slices.DeleteFunc(d.received(t, 0), func(b map[string]any) bool { return b["type"] == webhook.Threshold })
			return len(got) >= n, fmt.Sprint(got)
		})
		return got
	}
	sent(2)
	eventually(t, "both attempts counted", func() (bool, string) {
		r := c.get(200, app.UsagePath, d.readKey)
		used, limit := meter(t, r, "deliveries")
		return used == 2 && limit == 2, r.Raw
	})
	before := time.Now()
	refused := c.call(429, request{method: "POST", path: test, key: d.writeKey})
	expectQuota(t, refused, "deliveries", 2, before, time.Now())

	// A generation's end past the limit: its delivery is skipped.
	doc := d.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine")
	expect(t, doc, 201)
	eventually(t, "the document's delivery skipped", func() (bool, string) {
		log, err := d.store.Deliveries(t.Context(), "acme", d.endpoint.ID)
		for _, e := range log {
			if e.Type == "document.generated" {
				return e.Status == hookstore.Skipped && e.Reason != nil && e.Attempts == 0 && e.NextAttemptAt == nil &&
					strings.Contains(*e.Reason, "monthly limit of 2 deliveries"), fmt.Sprint(e, err)
			}
		}
		return false, fmt.Sprint(log, err)
	})
	logged := c.get(200, "/api/v1/webhooks/"+d.endpoint.ID+"/deliveries", d.readKey)
	if first, _ := logged.list()[0].(map[string]any); first["status"] != "skipped" || first["reason"] == nil {
		t.Errorf("the log's newest delivery: %v", first)
	}
	if got := sent(2); len(got) != 2 {
		t.Errorf("the receiver got %d deliveries, want the 2 the limit allowed", len(got))
	}
	if used, _ := meter(t, c.get(200, app.UsagePath, d.readKey), "deliveries"); used != 2 {
		t.Errorf("%d deliveries counted, want 2: a skipped one is no attempt", used)
	}

	// A retry of the skipped delivery goes through the same limit: 429
	// naming it, nothing reopened; with a higher limit it is sent once,
	// with the body its skip kept, and counted.
	skipped, _ := logged.list()[0].(map[string]any)
	retry := "/api/v1/webhooks/" + d.endpoint.ID + "/deliveries/" + fmt.Sprint(skipped["id"]) + "/retry"
	before = time.Now()
	expectQuota(t, c.call(429, request{method: "POST", path: retry, key: d.writeKey}), "deliveries", 2, before, time.Now())
	if still := d.store.Deliveries; true {
		log, err := still(t.Context(), "acme", d.endpoint.ID)
		if err != nil || log[0].Status != hookstore.Skipped {
			t.Fatalf("a refused retry changed the delivery: %+v %v", log, err)
		}
	}
	d.setLimits("acme", quota.Limits{quota.Deliveries: quota.Max(3)})
	retried := c.call(202, request{method: "POST", path: retry, key: d.writeKey})
	if retried.data()["status"] != "pending" || retried.data()["reason"] != nil {
		t.Errorf("the retry's answer: %s", retried.Raw)
	}
	got := sent(3)
	if got[2]["type"] != "document.generated" {
		t.Errorf("the retry delivered %v", got[2])
	}
	eventually(t, "the retried delivery succeeded and counted", func() (bool, string) {
		log, err := d.store.Deliveries(t.Context(), "acme", d.endpoint.ID)
		used, _ := meter(t, c.get(200, app.UsagePath, d.readKey), "deliveries")
		return err == nil && log[0].Status == hookstore.Succeeded && log[0].Attempts == 1 && used == 3, fmt.Sprint(log[0], used, err)
	})
}

// An endpoint takes TestsPerMinute test events a minute, whatever the
// account's limits: the next is 429 with Retry-After, and the next minute
// takes them again; another endpoint of the account has its own.
func TestTestEventsAreLimitedPerEndpointAndMinute(t *testing.T) {
	// Today's time, stopped: a window of the past would be gone, as
	// DynamoDB Local takes expired items away as DynamoDB's TTL does.
	clk := sqslocal.NewClock(time.Now().Truncate(time.Minute).Add(10 * time.Second))
	s := newStackWith(t, func(cfg *app.Config) {
		withWebhooks(t)(cfg)
		cfg.Clock = clk.Now
	})
	c := newConformance(t, s)
	register := func() string {
		r := c.form(201, "POST", "/api/v1/webhooks", s.writeKey, "url", "https://hooks.example.com/a")
		return r.data()["id"].(string)
	}
	first, second := register(), register()
	test := func(id string) request {
		return request{method: "POST", path: "/api/v1/webhooks/" + id + "/test", key: s.writeKey}
	}
	for range hookapi.TestsPerMinute {
		c.call(202, test(first))
	}
	over := c.call(429, test(first))
	if retry, err := strconv.Atoi(over.Header.Get("Retry-After")); err != nil || retry < 1 || retry > 50 || over.Body["code"] != nil {
		t.Errorf("past the endpoint's minute: Retry-After %q, %s", over.Header.Get("Retry-After"), over.Raw)
	}
	c.call(202, test(second))
	clk.Advance(time.Minute)
	c.call(202, test(first))
}
