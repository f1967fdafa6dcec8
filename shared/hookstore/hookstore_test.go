package hookstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"contentapi/shared/hookstore"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
	"contentapi/shared/records"
	"contentapi/shared/webhook"
)

func newStore(t *testing.T) *hookstore.Store {
	t.Helper()
	env := ddblocal.NewTestEnv(t)
	sealer, err := webhook.NewSealer([]byte("test secret"))
	if err != nil {
		t.Fatal(err)
	}
	return &hookstore.Store{Client: env.Client, Table: env.Tables["WebhooksTable"], Sealer: sealer}
}

// An endpoint is registered with a secret shown once; the table holds its
// key only sealed, and the key it opens signs what the secret verifies.
func TestCreateGetListDelete(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	e, secret, err := s.Create(ctx, "acct-1", hookstore.Endpoint{URL: "https://hooks.example.com/a", Events: []string{"image.generated"}, Description: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.ID, "wh_") || !e.Enabled || e.DisabledReason != nil || e.CreatedAt.IsZero() {
		t.Errorf("created %+v", e)
	}
	got, err := s.Get(ctx, "acct-1", e.ID)
	if err != nil || got.URL != e.URL || got.Description != "mine" || len(got.Events) != 1 || !got.CreatedAt.Equal(e.CreatedAt) {
		t.Errorf("get: %+v %v", got, err)
	}
	_, keys, err := s.SigningKeys(ctx, "acct-1", e.ID)
	if err != nil || len(keys) != 1 {
		t.Fatalf("%d keys, %v; want the one", len(keys), err)
	}
	h, _ := webhook.Sign(keys[0], "msg_x", time.Now(), []byte("{}"))
	verifier, _ := standardwebhooks.NewWebhook(secret)
	if err := verifier.Verify([]byte("{}"), h); err != nil {
		t.Errorf("the stored key does not sign what the shown secret verifies: %v", err)
	}
	raw, err := s.Client.GetItem(ctx, getInput(s.Table, "acct-1", "wh#"+e.ID))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprint(raw.Item), strings.TrimPrefix(secret, "whsec_")) {
		t.Error("the item holds the secret in clear")
	}
	if _, err := s.Get(ctx, "acct-2", e.ID); !errors.Is(err, hookstore.ErrNotFound) {
		t.Errorf("another account reads it: %v", err)
	}
	if err := s.Delete(ctx, "acct-2", e.ID); !errors.Is(err, hookstore.ErrNotFound) {
		t.Errorf("another account deletes it: %v", err)
	}
	list, err := s.List(ctx, "acct-1")
	if err != nil || len(list) != 1 || list[0].ID != e.ID {
		t.Errorf("list %+v %v", list, err)
	}
	if err := s.Delete(ctx, "acct-1", e.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "acct-1", e.ID); !errors.Is(err, hookstore.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if list, _ := s.List(ctx, "acct-1"); len(list) != 0 {
		t.Errorf("after delete: %+v", list)
	}
}

// Ten endpoints per account; a delete makes room again, and another
// account's count is its own.
func TestAtMostTenEndpoints(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	var ids []string
	for i := range hookstore.MaxEndpoints {
		e, _, err := s.Create(ctx, "acct-1", hookstore.Endpoint{URL: fmt.Sprintf("https://hooks.example.com/%d", i)})
		if err != nil {
			t.Fatalf("endpoint %d: %v", i+1, err)
		}
		ids = append(ids, e.ID)
	}
	if _, _, err := s.Create(ctx, "acct-1", hookstore.Endpoint{URL: "https://hooks.example.com/11"}); !errors.Is(err, hookstore.ErrTooMany) {
		t.Fatalf("11th: %v, want ErrTooMany", err)
	}
	if _, _, err := s.Create(ctx, "acct-2", hookstore.Endpoint{URL: "https://hooks.example.com/other"}); err != nil {
		t.Errorf("another account: %v", err)
	}
	list, err := s.List(ctx, "acct-1")
	if err != nil || len(list) != hookstore.MaxEndpoints {
		t.Fatalf("list: %d %v", len(list), err)
	}
	if err := s.Delete(ctx, "acct-1", ids[3]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Create(ctx, "acct-1", hookstore.Endpoint{URL: "https://hooks.example.com/again"}); err != nil {
		t.Errorf("after a delete: %v", err)
	}
}

// One event met twice is one delivery; the log lists the newest first and
// only the endpoint's own.
func TestDeliveriesAreAddedOnceAndListedNewestFirst(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	e, _, err := s.Create(ctx, "acct-1", hookstore.Endpoint{URL: "https://hooks.example.com/a"})
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := s.Create(ctx, "acct-1", hookstore.Endpoint{URL: "https://hooks.example.com/b"})
	base := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		id := webhook.EventID(e.ID, "DocumentsTable", "acct-1", fmt.Sprint(i), "attempt")
		k, created, err := s.AddDelivery(ctx, "acct-1", e.ID, id, "document.generated", base.Add(time.Duration(i)*time.Minute), []byte(`{}`))
		if err != nil || !created {
			t.Fatalf("add %d: %v %v", i, created, err)
		}
		again, created, err := s.AddDelivery(ctx, "acct-1", e.ID, id, "document.generated", base.Add(time.Duration(i)*time.Minute), []byte(`{}`))
		if err != nil || created || again != k {
			t.Fatalf("the same event again: %v %v %+v", created, err, again)
		}
	}
	if _, _, err := s.AddDelivery(ctx, "acct-1", other.ID, "msg_other", "image.failed", base, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	log, err := s.Deliveries(ctx, "acct-1", e.ID)
	if err != nil || len(log) != 3 {
		t.Fatalf("log %+v %v", log, err)
	}
	if log[0].ID != webhook.EventID(e.ID, "DocumentsTable", "acct-1", "2", "attempt") || log[0].Status != hookstore.Pending || log[0].Attempts != 0 {
		t.Errorf("newest first: %+v", log[0])
	}
	if _, err := s.Deliveries(ctx, "acct-2", e.ID); !errors.Is(err, hookstore.ErrNotFound) {
		t.Errorf("another account's log: %v", err)
	}
}

// An id of another shape is no endpoint: not found, never a DynamoDB error
// (a key over its 1,024 bytes would be one, and answer 500).
func TestIllFormedIDsAreNotFound(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	for _, id := range []string{"", "wh_", "wh_zz", "7", "wh_" + strings.Repeat("a", 2000), "wh_ABCDEF0123456789abcdef01", "wh_0123456789abcdef01234567#x"} {
		if _, err := s.Get(ctx, "acct-1", id); !errors.Is(err, hookstore.ErrNotFound) {
			t.Errorf("get %.40q: %v", id, err)
		}
		if err := s.Delete(ctx, "acct-1", id); !errors.Is(err, hookstore.ErrNotFound) {
			t.Errorf("delete %.40q: %v", id, err)
		}
		if _, err := s.Deliveries(ctx, "acct-1", id); !errors.Is(err, hookstore.ErrNotFound) {
			t.Errorf("deliveries %.40q: %v", id, err)
		}
	}
}

// A delivery whose body travels in the queue's message says so in its
// item, as a string where a kept body is bytes: this release reads it as
// no body, and a sender of a release that read every body from the item
// (its item shape below: a rollback, or a deploy updating it last) fails
// to decode it, so the message is retried rather than sent empty.
func TestADeliveryWhoseBodyIsInTheMessageIsNoItemTheEarlierSenderCanSend(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	e, _, err := s.Create(ctx, "acct-1", hookstore.Endpoint{URL: "https://hooks.example.com/a"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	carried, _, err := s.AddDelivery(ctx, "acct-1", e.ID, "msg_carried", "document.generated", at, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept, _, err := s.AddDelivery(ctx, "acct-1", e.ID, "msg_kept", "document.generated", at, []byte(`{"big":true}`))
	if err != nil {
		t.Fatal(err)
	}
	type earlierItem struct {
		Body []byte `dynamodbav:"body,omitempty"`
	}
	for _, c := range []struct {
		key          hookstore.DeliveryKey
		body         string
		earlierFails bool
	}{{carried, "", true}, {kept, `{"big":true}`, false}} {
		d, err := s.GetDelivery(ctx, c.key)
		if err != nil || string(d.Body) != c.body {
			t.Errorf("%s: body %q (%v), want %q", c.key.SK, d.Body, err, c.body)
		}
		out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: c.key.Account}, "sk": &types.AttributeValueMemberS{Value: c.key.SK}}})
		if err != nil {
			t.Fatal(err)
		}
		var earlier earlierItem
		if err := attributevalue.UnmarshalMap(out.Item, &earlier); (err != nil) != c.earlierFails {
			t.Errorf("%s: the earlier sender's read: %v (body %q), want failing %v", c.key.SK, err, earlier.Body, c.earlierFails)
		}
	}
}

// deliveriesUsed is the account acct's deliveries of now's month.
func deliveriesUsed(t *testing.T, s *hookstore.Store, now time.Time) int64 {
	t.Helper()
	m, err := s.Usage(t.Context(), "acct", quota.PeriodOf(now))
	if err != nil {
		t.Fatal(err)
	}
	return m[quota.Deliveries].Used
}

// Admit counts an attempt against the account's deliveries in the one write
// that takes its lane: past the limit it is a QuotaError and writes
// nothing; while another invocation holds the lane it is ErrBusy, until
// that one releases it or its lease lapses; an event type that is not
// metered takes the lane without counting. Usage and limits read back as
// the usage endpoint and make limits see them.
func TestAdmitCountsAndLeases(t *testing.T) {
	s := newStore(t)
	s.Quota = quota.Policy{Counts: quota.Deliveries, Defaults: quota.Limits{quota.Deliveries: quota.Max(3)}}
	ctx := t.Context()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	mine := &hookstore.Lease{Lane: "fast", Owner: "inv-1", Until: now.Add(15 * time.Second)}
	theirs := &hookstore.Lease{Lane: "fast", Owner: "inv-2", Until: now.Add(15 * time.Second)}
	used := func() int64 { t.Helper(); return deliveriesUsed(t, s, now) }
	if _, err := s.Admit(ctx, "acct", true, mine, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(ctx, "acct", true, mine, now); err != nil {
		t.Fatalf("the lease's own owner: %v", err)
	}
	if _, err := s.Admit(ctx, "acct", true, theirs, now); !errors.Is(err, hookstore.ErrBusy) {
		t.Fatalf("another invocation while the lane is held: %v, want ErrBusy", err)
	}
	if _, err := s.Admit(ctx, "other", true, theirs, now); err != nil {
		t.Fatalf("another account's lane: %v", err)
	}
	if _, err := s.Admit(ctx, "acct", false, mine, now); err != nil || used() != 2 {
		t.Fatalf("an unmetered attempt: %v, %d counted, want 2", err, used())
	}
	// Lapsed, the lease is anyone's.
	if _, err := s.Admit(ctx, "acct", true, theirs, now.Add(16*time.Second)); err != nil {
		t.Fatalf("after the lease lapsed: %v", err)
	}
	var over *records.QuotaError
	if _, err := s.Admit(ctx, "acct", true, theirs, now); !errors.As(err, &over) || over.Kind != "deliveries" || over.Limit != 3 {
		t.Fatalf("past the limit: %v, want the deliveries limit of 3", err)
	}
	if used() != 3 {
		t.Fatalf("%d counted, want 3: a refused attempt counts nothing", used())
	}
	if err := s.Refund(ctx, "acct", now); err != nil || used() != 2 {
		t.Fatalf("refund: %v, %d counted, want 2", err, used())
	}
	// Released, the lane is free for the next invocation; a release by
	// one that does not hold it changes nothing.
	if err := s.Release(ctx, "acct", *mine); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(ctx, "acct", false, mine, now); !errors.Is(err, hookstore.ErrBusy) {
		t.Fatalf("a release by another owner freed the lane: %v", err)
	}
	if err := s.Release(ctx, "acct", *theirs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(ctx, "acct", false, mine, now); err != nil {
		t.Fatalf("after the release: %v", err)
	}
	own, err := s.SetLimits(ctx, "acct", quota.Limits{quota.Deliveries: quota.Unlimited}, nil)
	if err != nil || own[quota.Deliveries] != quota.Unlimited {
		t.Fatalf("set unlimited: %v %v", own, err)
	}
	if _, err := s.Admit(ctx, "acct", true, mine, now); err != nil || used() != 3 {
		t.Fatalf("unlimited: %v, %d counted", err, used())
	}
	if own, err := s.SetLimits(ctx, "acct", nil, []quota.Kind{quota.Deliveries}); err != nil || len(own) != 0 {
		t.Fatalf("reset: %v %v", own, err)
	}
	if _, err := s.SetLimits(ctx, "acct", quota.Limits{quota.Images: quota.Max(1)}, nil); err == nil {
		t.Error("the webhooks' table took a limit of images")
	}
}

// Skip ends a pending delivery with its reason, never one already over.
func TestSkip(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	e, _, d := pendingTestDelivery(t, s, "s")
	now := time.Now()
	if err := s.Skip(ctx, d, now, "Not sent: over."); err != nil {
		t.Fatal(err)
	}
	if err := s.Skip(ctx, d, now, "again"); err != nil {
		t.Fatal(err)
	}
	log, err := s.Deliveries(ctx, "acct", e.ID)
	if err != nil || len(log) != 1 || log[0].Status != hookstore.Skipped || log[0].Reason == nil || *log[0].Reason != "Not sent: over." ||
		log[0].NextAttemptAt != nil || log[0].Attempts != 0 {
		t.Errorf("log %+v %v", log, err)
	}
}

// Admit's write with its answer lost: the SDK retries it, the retry finds
// its own token and is taken as applied, so the attempt counts once and
// its lease is held; a write the database never applied (dropped) counts
// when retried; with DynamoDB down, Admit fails and counts nothing.
func TestAdmitWithItsAnswerLostCountsOnce(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	proxy := ddblocal.NewFaultProxy(env.Endpoint)
	t.Cleanup(proxy.Close)
	db, err := ddblocal.NewClient(t.Context(), proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	s := &hookstore.Store{Client: db, Table: env.Tables["WebhooksTable"],
		Quota: quota.Policy{Counts: quota.Deliveries, Defaults: quota.Limits{quota.Deliveries: quota.Max(10)}}}
	ctx := t.Context()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	used := func() int64 { t.Helper(); return deliveriesUsed(t, s, now) }
	mine := &hookstore.Lease{Lane: "fast", Owner: "inv-1", Until: now.Add(15 * time.Second)}
	admit := ddblocal.MatchOp("UpdateItem", `"admitted"`)

	proxy.Inject(admit, ddblocal.LoseAnswer, 1)
	if _, err := s.Admit(ctx, "acct", true, mine, now); err != nil {
		t.Fatalf("answer lost, retried: %v", err)
	}
	if got := used(); got != 1 {
		t.Fatalf("%d counted after a write whose answer was lost, want 1", got)
	}
	theirs := &hookstore.Lease{Lane: "fast", Owner: "inv-2", Until: now.Add(15 * time.Second)}
	if _, err := s.Admit(ctx, "acct", true, theirs, now); !errors.Is(err, hookstore.ErrBusy) {
		t.Fatalf("the lease taken by the write whose answer was lost: %v, want ErrBusy for another owner", err)
	}

	proxy.Inject(admit, ddblocal.DropCall, 1)
	if _, err := s.Admit(ctx, "acct", true, mine, now); err != nil {
		t.Fatalf("dropped, retried: %v", err)
	}
	if got := used(); got != 2 {
		t.Fatalf("%d counted after a dropped write and its retry, want 2", got)
	}

	proxy.Down(ddblocal.FailCall)
	_, err = s.Admit(ctx, "acct", true, mine, now)
	proxy.Up()
	if err == nil || errors.Is(err, hookstore.ErrBusy) {
		t.Fatalf("DynamoDB down: %v, want its error", err)
	}
	if got := used(); got != 2 {
		t.Fatalf("%d counted after a failed write, want 2", got)
	}
}

// A claim whose answer is lost is retried by the SDK and found applied:
// the attempt is the caller's to make, not another copy's (ErrLost), which
// would drop its message and leave the delivery pending with nothing
// queued. A second copy of the message, which read the same attempts, still
// loses.
func TestAClaimWithItsAnswerLostIsTheCallers(t *testing.T) {
	s, proxy, _ := faultyStore(t)
	ctx := t.Context()
	_, k, d := pendingTestDelivery(t, s, "lost")
	proxy.Inject(ddblocal.MatchOp("UpdateItem", `"claim"`), ddblocal.LoseAnswer, 1)
	if err := s.Claim(ctx, d); err != nil {
		t.Fatalf("a claim whose answer was lost: %v, want it the caller's", err)
	}
	if after, err := s.GetDelivery(ctx, k); err != nil || after.Attempts != 1 {
		t.Fatalf("attempts %d (%v), want 1: one claim", after.Attempts, err)
	}
	if err := s.Claim(ctx, d); !errors.Is(err, hookstore.ErrLost) {
		t.Fatalf("another copy's claim of the same attempt: %v, want ErrLost", err)
	}
}

// faultyStore is a store whose calls pass a fault proxy, the proxy, and
// the test tables beside it.
func faultyStore(t *testing.T) (*hookstore.Store, *ddblocal.FaultProxy, *ddblocal.TestEnv) {
	t.Helper()
	env := ddblocal.NewTestEnv(t)
	proxy := ddblocal.NewFaultProxy(env.Endpoint)
	t.Cleanup(proxy.Close)
	db, err := ddblocal.NewClient(t.Context(), proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := webhook.NewSealer([]byte("test secret"))
	if err != nil {
		t.Fatal(err)
	}
	return &hookstore.Store{Client: db, Table: env.Tables["WebhooksTable"], Sealer: sealer}, proxy, env
}

// pendingTestDelivery is a new endpoint of acct's and a test event's
// delivery to it, pending, as its key and as read back.
func pendingTestDelivery(t *testing.T, s *hookstore.Store, event string) (hookstore.Endpoint, hookstore.DeliveryKey, hookstore.PendingDelivery) {
	t.Helper()
	ctx := t.Context()
	e, _, err := s.Create(ctx, "acct", hookstore.Endpoint{URL: "https://hooks.example.com/a"})
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := s.AddDelivery(ctx, "acct", e.ID, webhook.EventID(e.ID, event), webhook.Test, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.GetDelivery(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	return e, k, d
}

// Update is one conditional write of values: with its answer lost the
// SDK's retry writes the same again, with DynamoDB stalled it changes
// nothing, and throttled it is retried. Enabling an endpoint the service
// disabled clears what disabled it, and a disabling decided before that
// enable, landing after it, does not undo it.
func TestUpdateThroughFaults(t *testing.T) {
	s, proxy, env := faultyStore(t)
	ctx := t.Context()
	e, _, d := pendingTestDelivery(t, s, "update")
	item := func() map[string]types.AttributeValue {
		t.Helper()
		in := getInput(s.Table, "acct", "wh#"+e.ID)
		in.ConsistentRead = aws.Bool(true)
		out, err := env.Client.GetItem(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	// Failing for six days: the next failure disables it.
	if _, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.Table),
		Key: getInput(s.Table, "acct", "wh#"+e.ID).Key, UpdateExpression: aws.String("SET failing_since = :t, struggling = :s"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":t": &types.AttributeValueMemberN{Value: fmt.Sprint(time.Now().Add(-6 * 24 * time.Hour).Unix())},
			":s": &types.AttributeValueMemberBOOL{Value: true}}}); err != nil {
		t.Fatal(err)
	}
	// The failure's disabling write is held until the account has enabled
	// the endpoint again.
	disabling := proxy.Inject(ddblocal.MatchOp("UpdateItem", "Every delivery failed"), ddblocal.HoldCall, 1)
	recorded := make(chan error, 1)
	go func() {
		_, err := s.Record(ctx, d, hookstore.Outcome{Status: 500, At: time.Now(), Next: time.Now().Add(time.Minute)})
		recorded <- err
	}()
	<-disabling.Held()
	on := true
	proxy.Inject(ddblocal.MatchOp("UpdateItem", `"disabled_reason"`), ddblocal.LoseAnswer, 1)
	got, err := s.Update(ctx, "acct", e.ID, hookstore.Change{Enabled: &on})
	if err != nil || !got.Enabled || got.DisabledReason != nil {
		t.Fatalf("enable with its answer lost: %+v %v", got, err)
	}
	disabling.Release()
	if err := <-recorded; err != nil {
		t.Fatal(err)
	}
	it := item()
	if _, failing := it["failing_since"]; failing || it["struggling"] != nil || it["enabled"].(*types.AttributeValueMemberBOOL).Value != true {
		t.Fatalf("after the enable and the stale disabling: %v, want enabled afresh", it)
	}

	description := "stalled"
	stall, cancel := context.WithTimeout(ctx, time.Second)
	proxy.Down(ddblocal.HangCall)
	_, err = s.Update(stall, "acct", e.ID, hookstore.Change{Description: &description})
	proxy.Up()
	cancel()
	if err == nil {
		t.Fatal("an update with DynamoDB stalled succeeded")
	}
	if after, _ := s.Get(ctx, "acct", e.ID); after.Description == description {
		t.Errorf("an update with DynamoDB stalled changed the endpoint: %+v", after)
	}

	proxy.Inject(ddblocal.MatchOp("UpdateItem", `"description"`), ddblocal.ThrottleCall, 2)
	description = "retried"
	if got, err := s.Update(ctx, "acct", e.ID, hookstore.Change{Description: &description}); err != nil || got.Description != description {
		t.Fatalf("throttled twice, retried: %+v %v", got, err)
	}
	if _, err := s.Update(ctx, "other", e.ID, hookstore.Change{Description: &description}); !errors.Is(err, hookstore.ErrNotFound) {
		t.Errorf("another account's update: %v, want ErrNotFound", err)
	}
}

// A rotation gives a new secret whose key signs first, the replaced key
// after it for RotationGrace, then no more. Its write is conditional on
// the key it replaces: with its answer lost, the SDK's retry finds its own
// key in place and it rotates once; with DynamoDB stalled it changes
// nothing; throttled, it is retried; a rotation that lost the race to
// another rotates on top of it. Past MaxSigningKeys in force it waits.
func TestRotateSecretThroughFaults(t *testing.T) {
	s, proxy, _ := faultyStore(t)
	ctx := t.Context()
	clock := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return clock }
	e, first, err := s.Create(ctx, "acct", hookstore.Endpoint{URL: "https://hooks.example.com/a"})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":"webhook.test"}`)
	// verifies says which of the secrets verify a delivery signed now, and
	// that the newest's signature comes first.
	verifies := func(secrets ...string) []bool {
		t.Helper()
		_, keys, err := s.SigningKeys(ctx, "acct", e.ID)
		if err != nil {
			t.Fatal(err)
		}
		h, err := webhook.Sign(keys[0], "msg_rot", time.Now(), body, keys[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		alone, _ := webhook.Sign(keys[0], "msg_rot", time.Now(), body)
		if got := h.Get("webhook-signature"); !strings.HasPrefix(got, alone.Get("webhook-signature")) || strings.Count(got, "v1,") != len(keys) {
			t.Errorf("webhook-signature %q: want %d entries, the current key's first", got, len(keys))
		}
		out := make([]bool, len(secrets))
		for i, secret := range secrets {
			v, _ := standardwebhooks.NewWebhook(secret)
			out[i] = v.Verify(body, h) == nil
		}
		return out
	}
	rotated := ddblocal.MatchOp("UpdateItem", `"previous_keys"`)

	proxy.Inject(rotated, ddblocal.LoseAnswer, 1)
	_, second, err := s.RotateSecret(ctx, "acct", e.ID)
	if err != nil || !strings.HasPrefix(second, "whsec_") || second == first {
		t.Fatalf("a rotation with its answer lost: %q %v", second, err)
	}
	if got := verifies(second, first); !got[0] || !got[1] {
		t.Fatalf("after one rotation (its answer lost) the new and the old secret verify: %v", got)
	}
	if _, keys, _ := s.SigningKeys(ctx, "acct", e.ID); len(keys) != 2 {
		t.Fatalf("%d keys sign after one rotation whose answer was lost, want 2: it rotated twice", len(keys))
	}

	stall, cancel := context.WithTimeout(ctx, time.Second)
	proxy.Down(ddblocal.HangCall)
	_, _, err = s.RotateSecret(stall, "acct", e.ID)
	proxy.Up()
	cancel()
	if err == nil {
		t.Fatal("a rotation with DynamoDB stalled succeeded")
	}
	if got := verifies(second, first); !got[0] || !got[1] {
		t.Fatalf("a stalled rotation changed the keys: %v", got)
	}

	proxy.Inject(rotated, ddblocal.ThrottleCall, 2)
	clock = clock.Add(time.Hour)
	_, third, err := s.RotateSecret(ctx, "acct", e.ID)
	if err != nil {
		t.Fatalf("throttled twice, retried: %v", err)
	}
	if got := verifies(third, second, first); !got[0] || !got[1] || !got[2] {
		t.Fatalf("three secrets within a day: %v, want all verifying", got)
	}

	// A rotation held while another is made rotates on top of it: both
	// secrets still sign, the held one's first.
	held := proxy.Inject(rotated, ddblocal.HoldCall, 1)
	late := make(chan string, 1)
	go func() {
		_, secret, err := s.RotateSecret(ctx, "acct", e.ID)
		if err != nil {
			t.Error(err)
		}
		late <- secret
	}()
	<-held.Held()
	_, early, err := s.RotateSecret(ctx, "acct", e.ID)
	if err != nil {
		t.Fatal(err)
	}
	held.Release()
	fourth := <-late
	if _, keys, _ := s.SigningKeys(ctx, "acct", e.ID); len(keys) != hookstore.MaxSigningKeys {
		t.Fatalf("%d keys after 4 rotations in a day, want 5", len(keys))
	}
	var tooOften *hookstore.ErrRotatedTooOften
	if _, _, err := s.RotateSecret(ctx, "acct", e.ID); !errors.As(err, &tooOften) || tooOften.RetryAfter != 23*time.Hour {
		t.Fatalf("a fifth rotation within a day: %v, want ErrRotatedTooOften until the first secret stops (in 23 h)", err)
	}
	if got := verifies(fourth, early, third, second, first); slices.Contains(got, false) {
		t.Fatalf("the refused rotation changed the keys: %v", got)
	}

	clock = clock.Add(hookstore.RotationGrace)
	if got := verifies(fourth, early, first); !got[0] || got[1] || got[2] {
		t.Fatalf("a day after the rotations only the newest verifies: %v", got)
	}
	if _, _, err := s.RotateSecret(ctx, "acct", e.ID); err != nil {
		t.Fatalf("a rotation once the older keys lapsed: %v", err)
	}
	if _, keys, _ := s.SigningKeys(ctx, "acct", e.ID); len(keys) != 2 {
		t.Fatalf("%d keys, want the new and the one it replaced", len(keys))
	}
	if _, _, err := s.RotateSecret(ctx, "other", e.ID); !errors.Is(err, hookstore.ErrNotFound) {
		t.Errorf("another account's rotation: %v, want ErrNotFound", err)
	}
	if _, _, err := s.RotateSecret(ctx, "acct", "wh_nope"); !errors.Is(err, hookstore.ErrNotFound) {
		t.Errorf("an ill-formed id's rotation: %v, want ErrNotFound", err)
	}
}

// endDelivery makes the pending delivery d's next attempt and ends it
// failed, as the sender does after the last one, keeping its body.
func endDelivery(t *testing.T, s *hookstore.Store, d hookstore.PendingDelivery, body []byte) hookstore.PendingDelivery {
	t.Helper()
	ctx := t.Context()
	if err := s.Claim(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := s.KeepBody(ctx, d, body); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, d, hookstore.Outcome{Status: 500, At: time.Now(), Final: hookstore.Failed}); err != nil {
		t.Fatal(err)
	}
	ended, err := s.GetDelivery(ctx, d.Key)
	if err != nil || ended.Status != hookstore.Failed {
		t.Fatalf("ended: %+v %v", ended, err)
	}
	return ended
}

// A retry reopens an ended delivery for one numbered attempt, with the
// body its end kept, in one write conditional on the delivery as read:
// with its answer lost the SDK's retry finds it reopened for that attempt
// and goes on (one attempt, not two); a call retried while it is reopened
// gets it as it is; with DynamoDB stalled nothing changes; throttled, it
// is retried; of two at once, both get the one reopened attempt. A
// pending, succeeded or bodiless delivery is not retried, and another
// account's or an unknown one is not found.
func TestRetryThroughFaults(t *testing.T) {
	s, proxy, _ := faultyStore(t)
	ctx := t.Context()
	e, k, d := pendingTestDelivery(t, s, "retried")
	body := []byte(`{"type":"webhook.test","data":{}}`)
	// Keeping the body writes values: with its answer lost the SDK's
	// retry writes the same; with DynamoDB stalled it fails, so the sender
	// leaves the message to come again.
	kept := ddblocal.MatchOp("PutItem", `"dlb#`)
	proxy.Inject(kept, ddblocal.LoseAnswer, 1)
	if err := s.KeepBody(ctx, d, body); err != nil {
		t.Fatalf("keeping a body, its answer lost: %v", err)
	}
	if n := len(slices.DeleteFunc(proxy.Calls(), func(c ddblocal.ProxiedCall) bool { return !kept(c) })); n != 2 {
		t.Fatalf("%d writes of the body, want the one whose answer was lost and the SDK's retry", n)
	}
	stalled, cancelStall := context.WithTimeout(ctx, time.Second)
	proxy.Down(ddblocal.HangCall)
	err := s.KeepBody(stalled, d, body)
	proxy.Up()
	cancelStall()
	if err == nil {
		t.Fatal("keeping a body with DynamoDB stalled succeeded")
	}
	d = endDelivery(t, s, d, body)
	reopen := ddblocal.MatchOp("UpdateItem", `"manual"`)

	proxy.Inject(reopen, ddblocal.LoseAnswer, 1)
	got, err := s.Retry(ctx, d, time.Now())
	if err != nil || got.Status != hookstore.Pending || got.Manual != 2 || string(got.Body) != string(body) {
		t.Fatalf("a retry with its answer lost: %+v %v", got, err)
	}
	again, err := s.Retry(ctx, d, time.Now()) // the call retried, holding the delivery as it read it
	if err != nil || again.Manual != 2 || string(again.Body) != string(body) {
		t.Fatalf("the call retried while reopened: %+v %v, want the same attempt", again, err)
	}
	if now, _ := s.GetDelivery(ctx, k); now.Status != hookstore.Pending || now.Manual != 2 || now.Attempts != 1 {
		t.Fatalf("reopened: %+v", now)
	}
	reread, err := s.GetDelivery(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	d = endDelivery(t, s, reread, body) // the retry's attempt made, failed

	stall, cancel := context.WithTimeout(ctx, time.Second)
	proxy.Down(ddblocal.HangCall)
	_, err = s.Retry(stall, d, time.Now())
	proxy.Up()
	cancel()
	if err == nil {
		t.Fatal("a retry with DynamoDB stalled succeeded")
	}
	if now, _ := s.GetDelivery(ctx, k); now.Status != hookstore.Failed || now.Manual != 2 {
		t.Fatalf("a stalled retry changed the delivery: %+v", now)
	}

	proxy.Inject(reopen, ddblocal.ThrottleCall, 2)
	if got, err := s.Retry(ctx, d, time.Now()); err != nil || got.Manual != 3 {
		t.Fatalf("throttled twice, retried: %+v %v", got, err)
	}
	reread, _ = s.GetDelivery(ctx, k)
	d = endDelivery(t, s, reread, body)

	held := proxy.Inject(reopen, ddblocal.HoldCall, 1)
	late := make(chan hookstore.PendingDelivery, 1)
	go func() {
		got, err := s.Retry(ctx, d, time.Now())
		if err != nil {
			t.Error(err)
		}
		late <- got
	}()
	<-held.Held()
	early, err := s.Retry(ctx, d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	held.Release()
	if other := <-late; other.Manual != 4 || early.Manual != 4 {
		t.Fatalf("two retries at once: attempts %d and %d, want both the one reopened, 4", early.Manual, other.Manual)
	}
	if _, err := s.Retry(ctx, early, time.Now()); err != nil {
		t.Fatalf("a retry of a reopened delivery: %v, want it as it is", err)
	}

	_, pendingKey, pending := pendingTestDelivery(t, s, "scheduled")
	if _, err := s.Retry(ctx, pending, time.Now()); !errors.Is(err, hookstore.ErrRetryPending) {
		t.Errorf("a retry of a pending delivery: %v, want ErrRetryPending", err)
	}
	if err := s.Claim(ctx, pending); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, pending, hookstore.Outcome{Status: 204, At: time.Now(), Final: hookstore.Succeeded}); err != nil {
		t.Fatal(err)
	}
	succeeded, _ := s.GetDelivery(ctx, pendingKey)
	if _, err := s.Retry(ctx, succeeded, time.Now()); !errors.Is(err, hookstore.ErrNotKept) {
		t.Errorf("a retry of a succeeded delivery: %v, want ErrNotKept", err)
	}
	_, _, bodiless := pendingTestDelivery(t, s, "bodiless")
	if err := s.Claim(ctx, bodiless); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, bodiless, hookstore.Outcome{Status: 500, At: time.Now(), Final: hookstore.Failed}); err != nil {
		t.Fatal(err)
	}
	bodiless, _ = s.GetDelivery(ctx, bodiless.Key)
	if _, err := s.Retry(ctx, bodiless, time.Now()); !errors.Is(err, hookstore.ErrNotKept) {
		t.Errorf("a retry of a failed delivery whose body was not kept: %v, want ErrNotKept", err)
	}

	if _, found, err := s.FindDelivery(ctx, "acct", e.ID, d.ID); err != nil || found.Key != k {
		t.Errorf("found %+v %v, want %v", found.Key, err, k)
	}
	for _, c := range []struct{ account, endpoint, id string }{
		{"other", e.ID, d.ID}, {"acct", e.ID, webhook.EventID(e.ID, "never")}, {"acct", e.ID, "msg_x"}, {"acct", "wh_x", d.ID},
	} {
		if _, _, err := s.FindDelivery(ctx, c.account, c.endpoint, c.id); !errors.Is(err, hookstore.ErrNotFound) {
			t.Errorf("FindDelivery(%q, %q, %q): %v, want ErrNotFound", c.account, c.endpoint, c.id, err)
		}
	}
}

// The deliveries of an ended month move off the counter item to the
// history item with the first attempt after it, once, whatever write of the
// move fails: each month reads the same all along, with its limit, and a
// later attempt finishes the move.
func TestEarlierMonthsOfDeliveriesAreKept(t *testing.T) {
	s, proxy, env := faultyStore(t)
	s.Quota = quota.Policy{Counts: quota.Deliveries, History: true, Defaults: quota.Limits{quota.Deliveries: quota.Max(10)}}
	ctx := t.Context()
	admit := func(at time.Time, n int) {
		t.Helper()
		for range n {
			if _, err := s.Admit(ctx, "acct", true, nil, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	usedIn := func(month time.Time) quota.Meter {
		t.Helper()
		m, err := s.UsageIn(ctx, "acct", quota.PeriodOf(month))
		if err != nil {
			t.Fatal(err)
		}
		return m[quota.Deliveries]
	}
	month := time.Date(2026, 10, 15, 12, 0, 0, 0, time.UTC)
	admit(month, 3)
	var months []time.Time
	for _, step := range []struct {
		name  string
		write func(ddblocal.ProxiedCall) bool
		fault ddblocal.Fault
	}{
		{"the apply's answer lost", ddblocal.MatchOp("UpdateItem", `"moves_`), ddblocal.LoseAnswer},
		{"the claim failing", ddblocal.MatchOp("UpdateItem", `"moving_`, `"used_deliveries_`), ddblocal.FailCall},
		{"the apply failing", ddblocal.MatchOp("UpdateItem", `"moves_`), ddblocal.FailCall},
		{"the release failing", func(c ddblocal.ProxiedCall) bool {
			return c.Op == "UpdateItem" && c.Has(`"moving_`) && !c.Has(`"used_`)
		}, ddblocal.FailCall},
	} {
		months = append(months, month)
		month = month.AddDate(0, 1, 0)
		proxy.Inject(step.write, step.fault, 100)
		admit(month, 3)
		proxy.Reset()
		proxy.Wait()
		for _, m := range months {
			if got := usedIn(m); got.Used != 3 || got.Limit != quota.Max(10) {
				t.Fatalf("%s: %s reads %+v, want 3 of 10", step.name, m.Format("2006-01"), got)
			}
		}
	}
	admit(month.AddDate(0, 1, 0), 1)
	out, err := env.Client.GetItem(ctx, getInput(s.Table, "acct", "count"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range out.Item {
		if strings.HasPrefix(name, "moving_") || strings.HasPrefix(name, "used_") && !strings.HasSuffix(name, month.AddDate(0, 1, 0).Format("2006_01")) {
			t.Errorf("left on the counter: %s", name)
		}
	}
	for _, m := range append(months, month) {
		if got := usedIn(m); got.Used != 3 {
			t.Errorf("%s once moved: %d, want 3", m.Format("2006-01"), got.Used)
		}
	}
	// Two months on, the limit changes: the last month used and the one
	// with no use keep the limit they ended with.
	last := month.AddDate(0, 1, 0)
	s.Now = func() time.Time { return last.AddDate(0, 2, 0) }
	if _, err := s.SetLimits(ctx, "acct", quota.Limits{quota.Deliveries: quota.Max(4)}, nil); err != nil {
		t.Fatal(err)
	}
	for m, want := range map[time.Time]quota.Meter{last: {Used: 1, Limit: quota.Max(10)}, last.AddDate(0, 1, 0): {Limit: quota.Max(10)}} {
		if got := usedIn(m); got != want {
			t.Errorf("%s after the limit changed: %+v, want %+v", m.Format("2006-01"), got, want)
		}
	}
}
