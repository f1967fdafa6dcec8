package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"contentapi/shared/app"
	"contentapi/shared/hookstore"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sqslocal"
	localstack "contentapi/shared/local/stack"
	"contentapi/shared/quota"
	"contentapi/shared/webhook"
	"contentapi/shared/webhook/webhooktest"
)

// webhooksQueue is a test stack's deliveries queues, in process
// (sqslocal), as the template sets them: the two lanes and the sender's
// mappings on them.
type webhooksQueue struct {
	*localstack.WebhookQueue
	client *sqs.Client
	cfg    app.WebhooksConfig
}

// withWebhooks gives a stack's configuration the webhooks: the template's
// table, queues of its own, and a client that resolves by publicResolver.
// The queues run on clock when one is given.
func withWebhooks(t testing.TB, clock ...*sqslocal.Clock) func(*app.Config) *webhooksQueue {
	return func(cfg *app.Config) *webhooksQueue {
		settings, err := localstack.WebhookQueueSettingsFrom(loadTemplate(t))
		if err != nil {
			t.Fatal(err)
		}
		var opts localstack.WebhookQueueOptions
		for _, c := range clock {
			opts.Now = c.Now
		}
		q, err := localstack.StartWebhookQueue(context.Background(), "", settings, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		cfg.Webhooks = app.WebhooksConfig{Table: cfg.Tables["WebhooksTable"], QueueURL: q.URL, SlowQueueURL: q.SlowURL, SQSEndpoint: q.Server.URL(),
			Client: webhook.Options{Resolver: webhooktest.Resolver{}}}
		return &webhooksQueue{WebhookQueue: q, client: q.Client, cfg: cfg.Webhooks}
	}
}

// runSender feeds send from the queues as the template's mappings do,
// until the test ends.
func (q *webhooksQueue) runSender(t testing.TB, send app.SenderEntry) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.Run(ctx, send, 5*time.Millisecond, nil); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// A document generated in the request reaches its account's endpoint,
// through the generator's stream mapping, the queue and the sender, as one
// signed document.generated holding the record as GET shows it, logged
// as succeeded after one attempt.
//
// deliveryStack is a generating stack with webhooks, its sender fed from
// the queues as the mappings feed it, and a receiver on 127.0.0.1
// registered for every event of account acme.
type deliveryStack struct {
	*genStack
	hooks    *webhooksQueue
	store    *hookstore.Store
	endpoint hookstore.Endpoint
	mu       sync.Mutex
	bodies   []map[string]any
	raw      [][]byte // the bodies as they came
	headers  []http.Header
	secret   string // the endpoint's, as registered
}

// newDeliveryStack starts it; status answers the receiver's nth call
// (from 1), on the schedule given (nil: the contract's).
func newDeliveryStack(t *testing.T, schedule webhook.Schedule, status func(n int) int) *deliveryStack {
	return newDeliveryStackWith(t, schedule, status, nil)
}

// newDeliveryStackWith is newDeliveryStack with configure, when not nil,
// changing the configuration further.
func newDeliveryStackWith(t *testing.T, schedule webhook.Schedule, status func(n int) int, configure func(*app.Config)) *deliveryStack {
	var hooks *webhooksQueue
	g := newGenStack(t, genOptions{configure: func(cfg *app.Config) {
		hooks = withWebhooks(t)(cfg)
		cfg.Webhooks.Client = webhook.Options{AllowLoopback: true}
		cfg.Webhooks.Schedule = schedule
		if configure != nil {
			configure(cfg)
		}
	}})
	d := &deliveryStack{genStack: g, hooks: hooks}
	var verifier *standardwebhooks.Webhook
	contract := contractValidator(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		d.mu.Lock()
		defer d.mu.Unlock()
		if err := verifier.Verify(body, r.Header); err != nil {
			t.Errorf("delivery does not verify: %v", err)
		}
		// Every delivery is what the document's webhooks section says
		// of its event type: headers and body.
		if err := contract.ValidateWebhook(r.Header, body); err != nil {
			t.Errorf("delivery %s does not match the document: %v", body, err)
		}
		var b map[string]any
		_ = json.Unmarshal(body, &b)
		d.bodies = append(d.bodies, b)
		d.raw = append(d.raw, body)
		d.headers = append(d.headers, r.Header.Clone())
		w.WriteHeader(status(len(d.bodies)))
	}))
	t.Cleanup(srv.Close)
	sealer, _ := webhook.NewSealer(hooks.cfg.Seal)
	d.store = &hookstore.Store{Client: g.env.Client, Table: hooks.cfg.Table, Sealer: sealer}
	endpoint, secret, err := d.store.Create(t.Context(), "acme", hookstore.Endpoint{URL: srv.URL + "/hook", Events: app.EventTypes})
	if err != nil {
		t.Fatal(err)
	}
	d.endpoint, d.secret = endpoint, secret
	verifier, _ = standardwebhooks.NewWebhook(secret)
	send, err := g.app.SenderEntry()
	if err != nil {
		t.Fatal(err)
	}
	hooks.runSender(t, send)
	return d
}

// received waits for n deliveries and returns them.
func (d *deliveryStack) received(t *testing.T, n int) []map[string]any {
	eventually(t, fmt.Sprintf("%d deliveries", n), func() (bool, string) {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.bodies) >= n, fmt.Sprint(d.bodies)
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.bodies)
}

// Each event type the sender builds is delivered as the document's webhooks
// section declares it (the receiver of newDeliveryStack checks every
// delivery against it): both ends of each generating resource's
// generation, the usage reaching its thresholds (the second image reaches
// the images limit: 80% and 100% at once), and the test event.
func TestEveryEventTypeIsDeliveredAsTheDocumentSays(t *testing.T) {
	d := newDeliveryStack(t, nil, func(int) int { return http.StatusNoContent })
	d.setLimits("acme", quota.Limits{quota.Images: quota.Max(2)})
	expect(t, d.form("POST", "/api/v1/images", "name", "Cliff", "description", "A lighthouse", "resolution", "256x256"), 201)
	expect(t, d.form("POST", "/api/v1/images", "name", "Refused", "description", "d [standin:filter]", "resolution", "256x256"), 201)
	expect(t, d.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine"), 201)
	expect(t, d.form("POST", "/api/v1/documents", "name", "Refused", "prompt", "Something [standin:filter]"), 201)
	expect(t, d.do(request{method: "POST", path: "/api/v1/webhooks/" + d.endpoint.ID + "/test", key: d.writeKey}), 202)
	var types []string
	for _, b := range d.received(t, len(app.EventTypes)+1) {
		types = append(types, fmt.Sprint(b["type"]))
	}
	if slices.Sort(types); !slices.Equal(slices.Compact(types), slices.Sorted(slices.Values(app.EventTypes))) {
		t.Errorf("delivered %v, the event types are %v", types, app.EventTypes)
	}
	if !slices.Equal(contractValidator(t).Webhooks(), slices.Sorted(slices.Values(app.EventTypes))) {
		t.Errorf("the document's webhooks are %v", contractValidator(t).Webhooks())
	}
}

func TestGeneratedDocumentIsDelivered(t *testing.T) {
	d := newDeliveryStack(t, nil, func(int) int { return http.StatusNoContent })
	r := d.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine", "template_id", "33")
	expect(t, r, 201)
	b := d.received(t, 1)[0]
	data, _ := b["data"].(map[string]any)
	if b["type"] != "document.generated" || fmt.Sprint(data["id"]) != fmt.Sprint(r.data()["id"]) || data["result"] != r.data()["result"] {
		t.Errorf("delivered %v", b)
	}
	// The sender records the attempt once the receiver has answered.
	eventually(t, "the delivery logged as succeeded after one attempt", func() (bool, string) {
		log, err := d.store.Deliveries(t.Context(), "acme", d.endpoint.ID)
		return err == nil && len(log) == 1 && log[0].Status == hookstore.Succeeded && log[0].Attempts == 1, fmt.Sprintf("%+v %v", log, err)
	})
}

// An image event carries a url presigned for its attempt, as GET does for
// each read: the stored delivery keeps none (one made at the event would
// have expired by the later retries), and each attempt's opens the
// picture.
func TestImageEventsCarryAURLMadeForEachAttempt(t *testing.T) {
	d := newDeliveryStack(t, webhook.Schedule{0, 0}, func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	r := d.form("POST", "/api/v1/images", "name", "Cliff", "description", "A lighthouse", "resolution", "256x256")
	expect(t, r, 201)
	attempts := d.received(t, 2)
	shown := d.get("/api/v1/images/" + fmt.Sprint(r.data()["id"]))
	expect(t, shown, 200)
	for i, b := range attempts {
		data, _ := b["data"].(map[string]any)
		u, _ := data["url"].(string)
		if b["type"] != "image.generated" || data["result"] != r.data()["result"] || u == "" {
			t.Fatalf("attempt %d delivered %v", i+1, b)
		}
		// Built as every event's body is: type, timestamp, data, and the
		// record's keys in the order GET shows them.
		d.mu.Lock()
		raw := d.raw[i]
		d.mu.Unlock()
		var ev struct{ Data json.RawMessage }
		_ = json.Unmarshal(raw, &ev)
		if got := keyOrder(t, raw); !slices.Equal(got, []string{"type", "timestamp", "data"}) {
			t.Errorf("attempt %d's body has its keys in the order %v", i+1, got)
		}
		var get struct{ Data json.RawMessage }
		_ = json.Unmarshal([]byte(shown.Raw), &get)
		if got, want := keyOrder(t, ev.Data), keyOrder(t, get.Data); !slices.Equal(got, want) {
			t.Errorf("attempt %d's record has its keys in the order %v, GET's %v", i+1, got, want)
		}
		pic, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		pic.Body.Close()
		if pic.StatusCode != 200 || pic.Header.Get("Content-Type") != "image/png" {
			t.Errorf("attempt %d's url: %d %s", i+1, pic.StatusCode, pic.Header.Get("Content-Type"))
		}
	}
	out, err := d.env.Client.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(d.store.Table)})
	if err != nil {
		t.Fatal(err)
	}
	// The event travels in the queue's message, its url made at each
	// attempt: the one delivery item keeps neither the body nor a url.
	deliveries := 0
	for _, item := range out.Items {
		if sk, ok := item["sk"].(*types.AttributeValueMemberS); !ok || !strings.HasPrefix(sk.Value, "dl#") {
			continue
		}
		deliveries++
		if body, ok := item["body"].(*types.AttributeValueMemberB); ok {
			t.Errorf("the delivery item keeps the event's body: %s", body.Value)
		}
		var kept map[string]any
		if err := attributevalue.UnmarshalMap(item, &kept); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(fmt.Sprint(kept), "X-Amz-Signature") {
			t.Errorf("the delivery item keeps a presigned url: %v", kept)
		}
	}
	if deliveries != 1 {
		t.Errorf("%d deliveries stored, want the image's", deliveries)
	}
}

// A registration's or a rotation's secret is shown once and kept only
// sealed: those paths take no Idempotency-Key, so a retry with one
// registers (or rotates) again, with another secret, and no answer holding
// a secret is kept in the idempotency table to be replayed.
func TestWebhookSecretsAreNeverReplayed(t *testing.T) {
	logs := &lambdalocal.LogBuffer{}
	s := newStackWith(t, func(cfg *app.Config) {
		withWebhooks(t)(cfg)
		cfg.LogOutput, cfg.LogLevel = logs, -4 // debug: everything that is ever logged
	})
	register := request{method: "POST", path: "/api/v1/webhooks", key: s.writeKey, contentType: "application/x-www-form-urlencoded",
		body: "url=https%3A%2F%2Fhooks.example.com%2Fa", header: map[string]string{"Idempotency-Key": "hook-1"}}
	first, second := s.do(register), s.do(register)
	expect(t, first, 201)
	expect(t, second, 201)
	if first.data()["id"] == second.data()["id"] || first.data()["secret"] == second.data()["secret"] || second.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the retry was replayed: %v then %v", first.Raw, second.Raw)
	}
	out, err := s.env.Client.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(s.env.Tables["IdempotencyTable"])})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 0 {
		t.Errorf("the idempotency table keeps %d answers", out.Count)
	}
	// A malformed key is a client's bug, 400 here as on every path, and
	// registers nothing.
	for _, bad := range []string{"not visible ASCII", "a,b", strings.Repeat("k", 256)} {
		badKey := register
		badKey.header = map[string]string{"Idempotency-Key": bad}
		expect(t, s.do(badKey), 400)
	}
	list := s.do(request{method: "GET", path: "/api/v1/webhooks", key: s.writeKey})
	if n := len(list.list()); n != 2 {
		t.Errorf("%d endpoints after the malformed keys' requests, want the 2 registered before", n)
	}
	// A rotation retried with the same key rotates again rather than
	// replay a secret: each answer shows its own, nothing is kept to
	// replay, and no secret reaches the logs, even at debug level.
	rotate := request{method: "POST", path: "/api/v1/webhooks/" + fmt.Sprint(first.data()["id"]) + "/rotate-secret", key: s.writeKey,
		header: map[string]string{"Idempotency-Key": "rotate-1"}}
	one, two := s.do(rotate), s.do(rotate)
	expect(t, one, 200)
	expect(t, two, 200)
	if one.data()["secret"] == two.data()["secret"] || two.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the rotation's retry was replayed: %v then %v", one.Raw, two.Raw)
	}
	if out, err := s.env.Client.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(s.env.Tables["IdempotencyTable"])}); err != nil || out.Count != 0 {
		t.Errorf("the idempotency table keeps %v answers (%v)", out, err)
	}
	for _, r := range []response{first, second, one, two} {
		if secret, _ := r.data()["secret"].(string); secret == "" || strings.Contains(logs.String(), strings.TrimPrefix(secret, "whsec_")) {
			t.Errorf("a secret %q is missing from its answer or is in the logs", secret)
		}
	}
	if !strings.Contains(logs.String(), "rotate-secret") {
		t.Errorf("the logs have no line of the rotations, so the check above checked nothing: %s", logs.String())
	}
}

// A rotated secret is shown once, in the rotation's 200, and from then on
// every delivery carries two signatures in webhook-signature, the new
// secret's first and the old one's after it, so receivers holding either
// verify (the receiver here checks every delivery with the old one). The
// rotation takes the write scope, and another account's endpoint is a
// 404 that rotates nothing.
func TestARotatedSecretSignsFirstBesideTheOld(t *testing.T) {
	d := newDeliveryStack(t, nil, func(int) int { return http.StatusNoContent })
	path := "/api/v1/webhooks/" + d.endpoint.ID + "/rotate-secret"
	expect(t, d.do(request{method: "POST", path: path, key: d.otherKey}), 404)
	expect(t, d.do(request{method: "POST", path: path, key: d.readKey}), 403)
	expect(t, d.form("POST", "/api/v1/webhooks/"+d.endpoint.ID+"/test"), 202)
	before := d.received(t, 1)
	r := d.form("POST", path)
	expect(t, r, 200)
	secret, _ := r.data()["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || secret == d.secret || r.data()["id"] != d.endpoint.ID || r.data()["url"] != d.endpoint.URL {
		t.Fatalf("rotated: %s", r.Raw)
	}
	if shown := d.get("/api/v1/webhooks/" + d.endpoint.ID); strings.Contains(shown.Raw, secret) || shown.data()["secret"] != nil {
		t.Errorf("the endpoint shows its secret again: %s", shown.Raw)
	}
	expect(t, d.form("POST", "/api/v1/webhooks/"+d.endpoint.ID+"/test"), 202)
	d.received(t, len(before)+1)
	d.mu.Lock()
	first, last := d.headers[0], d.headers[len(d.headers)-1]
	body := d.raw[len(d.raw)-1]
	d.mu.Unlock()
	if n := len(strings.Fields(first.Get("webhook-signature"))); n != 1 {
		t.Errorf("before the rotation a delivery carries %d signatures, want 1", n)
	}
	sigs := strings.Fields(last.Get("webhook-signature"))
	if len(sigs) != 2 {
		t.Fatalf("after the rotation webhook-signature is %q, want two signatures", last.Get("webhook-signature"))
	}
	// Each entry on its own: the new secret's first, the old one's second.
	for i, secret := range []string{secret, d.secret} {
		alone := last.Clone()
		alone.Set("webhook-signature", sigs[i])
		v, _ := standardwebhooks.NewWebhook(secret)
		if err := v.Verify(body, alone); err != nil {
			t.Errorf("signature %d of %q does not verify with the secret it should: %v", i+1, sigs, err)
		}
	}
	others := d.do(request{method: "GET", path: "/api/v1/webhooks/" + d.endpoint.ID, key: d.otherKey})
	expect(t, others, 404)
}

// A delivery that failed is retried by its account: one more attempt now,
// the same event (webhook-id and body) signed afresh, logged as an attempt
// of the delivery and never retried on the schedule. A call retried with
// its Idempotency-Key (its answer lost) is replayed and sends nothing
// more. A delivery that succeeded, one of a disabled endpoint, another
// account's and an unknown one are not retried.
func TestARetryMakesOneMoreAttemptNow(t *testing.T) {
	d := newDeliveryStack(t, webhook.Schedule{}, func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable // the only scheduled attempt
		}
		return http.StatusNoContent
	})
	c := newConformance(t, d.stack) // every answer checked against the document
	hook := "/api/v1/webhooks/" + d.endpoint.ID
	expect(t, d.form("POST", hook+"/test"), 202)
	first := d.received(t, 1)
	failed := d.newestEnds(t, "failed", 1)
	retry := hook + "/deliveries/" + fmt.Sprint(failed["id"]) + "/retry"
	expect(t, d.do(request{method: "POST", path: retry, key: d.otherKey}), 404)
	expect(t, d.do(request{method: "POST", path: hook + "/deliveries/msg_AAAAAAAAAAAAAAAAAAAAAA/retry", key: d.writeKey}), 404)
	expect(t, d.do(request{method: "POST", path: retry, key: d.readKey}), 403)

	call := request{method: "POST", path: retry, key: d.writeKey, header: map[string]string{"Idempotency-Key": "retry-1"}}
	r := c.call(202, call)
	if r.data()["id"] != failed["id"] || r.data()["status"] != "pending" || r.data()["attempts"] != float64(1) {
		t.Errorf("the retry's answer: %s", r.Raw)
	}
	got := d.received(t, 2)
	eventually(t, "the retry logged", func() (bool, string) {
		log, err := d.store.Deliveries(t.Context(), "acme", d.endpoint.ID)
		return err == nil && len(log) == 1 && log[0].Status == hookstore.Succeeded && log[0].Attempts == 2, fmt.Sprint(log, err)
	})
	replayed := d.do(call) // the same call, its answer lost
	expect(t, replayed, 202)
	if replayed.Header.Get("Idempotent-Replayed") != "true" || replayed.Raw != r.Raw {
		t.Errorf("the retried call was not replayed: %s %v", replayed.Raw, replayed.Header)
	}
	d.mu.Lock()
	sent, ids := len(d.bodies), []string{d.headers[0].Get("webhook-id"), d.headers[1].Get("webhook-id")}
	raw := slices.Clone(d.raw)
	d.mu.Unlock()
	if sent != 2 || ids[0] != ids[1] || ids[0] != failed["id"] || !bytes.Equal(raw[0], raw[1]) || got[1]["type"] != first[0]["type"] {
		t.Errorf("%d sent, webhook-ids %v; want the one event sent again once, as it was", sent, ids)
	}
	c.refusedForState(409, request{method: "POST", path: retry, key: d.writeKey})

	// A disabled endpoint's delivery: 409 until it is enabled again.
	expect(t, d.form("PATCH", hook, "enabled", "false"), 200)
	expect(t, d.form("POST", hook+"/test"), 202)
	unsent := d.newestEnds(t, "failed", 0) // unattempted
	again := hook + "/deliveries/" + fmt.Sprint(unsent["id"]) + "/retry"
	c.refusedForState(409, request{method: "POST", path: again, key: d.writeKey})
	expect(t, d.form("PATCH", hook, "enabled", "true"), 200)
	expect(t, d.do(request{method: "POST", path: again, key: d.writeKey}), 202)
	d.received(t, 3)
}

// newestEnds waits until the newest delivery in the endpoint's log, as
// the API shows it, has the status after the attempts, and returns it.
func (d *deliveryStack) newestEnds(t *testing.T, status string, attempts int) map[string]any {
	t.Helper()
	var newest map[string]any
	eventually(t, fmt.Sprintf("the newest delivery %s after %d attempts", status, attempts), func() (bool, string) {
		r := d.get("/api/v1/webhooks/" + d.endpoint.ID + "/deliveries")
		newest, _ = r.list()[0].(map[string]any)
		return newest["status"] == status && newest["attempts"] == float64(attempts), r.Raw
	})
	return newest
}

// failDelivery ends the account's pending delivery id to the endpoint as
// the sender ends one after its last attempt failed, its body kept, in a
// stack that runs no sender.
func failDelivery(t *testing.T, s *stack, account, endpoint, id string) {
	t.Helper()
	st := &hookstore.Store{Client: s.env.Client, Table: s.env.Tables["WebhooksTable"]}
	_, d, err := st.FindDelivery(t.Context(), account, endpoint, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Claim(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if err := st.KeepBody(t.Context(), d, []byte(`{"type":"webhook.test","timestamp":"2026-11-28T07:00:00Z","data":{}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Record(t.Context(), d, hookstore.Outcome{Status: 503, At: time.Now(), Final: hookstore.Failed}); err != nil {
		t.Fatal(err)
	}
}

// A generation's end met again (the stream's record delivered twice, a
// batch retried) makes no second event: its delivery is the same item,
// already succeeded, and the receiver hears of it once.
func TestAGenerationsEndMetAgainIsDeliveredOnce(t *testing.T) {
	d := newDeliveryStack(t, nil, func(int) int { return http.StatusNoContent })
	r := d.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine")
	expect(t, r, 201)
	d.received(t, 1)
	table := d.env.Tables["DocumentsTable"]
	out, err := d.env.Client.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"account": stringAV("acme"), "id": numberAV(num(r.data()["id"]))},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The write that ended it, as the stream carries it: running to done.
	after := lambdalocal.StreamImage(out.Item)
	before := maps.Clone(after)
	gen := maps.Clone(after["generation"].Map())
	gen["status"] = events.NewStringAttribute("running")
	before["generation"] = events.NewMapAttribute(gen)
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
		EventName: "MODIFY", EventSourceArn: lambdalocal.StreamInsert(table, out.Item).Records[0].EventSourceArn,
		Change: events.DynamoDBStreamRecord{OldImage: before, NewImage: after, SequenceNumber: "2"},
	}}}
	for range 2 {
		if resp, err := d.stream(t.Context(), ev); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("the generator: %v %+v", err, resp)
		}
	}
	// The copies the generator queued again are taken and let go.
	eventually(t, "the queue drained", func() (bool, string) {
		a, err := d.hooks.client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(d.hooks.cfg.QueueURL),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
				sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
		if err != nil {
			return false, err.Error()
		}
		return a.Attributes["ApproximateNumberOfMessages"] == "0" && a.Attributes["ApproximateNumberOfMessagesNotVisible"] == "0", fmt.Sprint(a.Attributes)
	})
	if got := d.received(t, 1); len(got) != 1 {
		t.Errorf("%d deliveries of one generation's end: %v", len(got), got)
	}
	log, err := d.store.Deliveries(t.Context(), "acme", d.endpoint.ID)
	if err != nil || len(log) != 1 || log[0].Attempts != 1 || log[0].Status != hookstore.Succeeded {
		t.Errorf("log %+v %v", log, err)
	}
}

// keyOrder is the keys of a JSON object, in the order they came.
func keyOrder(t *testing.T, obj []byte) []string {
	t.Helper()
	var keys []string
	dec := json.NewDecoder(strings.NewReader(string(obj)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", obj)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
