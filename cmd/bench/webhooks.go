package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/app"
	"contentapi/shared/documents"
	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/sqslocal"
	"contentapi/shared/local/stack"
	"contentapi/shared/webhook"
)

// Webhooks' figures: a create to its delivery's 2xx, what a delivery
// costs in DynamoDB, and the sender's bootstrap and cold start.

// webhookRuns are the creates ms_webhook_local is the median of.
const webhookRuns = 11

// webhookEnv is the functions' environment for the local queue, which
// lambdaEnv adds to the template's.
var webhookEnv map[string]string

// webhooksConfig is the webhooks' part of the functions' configuration:
// the template's table and the local queues. The receivers are on
// 127.0.0.1, as WEBHOOKS_ALLOW_LOOPBACK=1 make run allows.
func webhooksConfig(q *stack.WebhookQueue, tables map[string]string) app.WebhooksConfig {
	return app.WebhooksConfig{Table: tables["WebhooksTable"], QueueURL: q.URL, SlowQueueURL: q.SlowURL, SQSEndpoint: q.Server.URL(),
		Client: webhook.Options{AllowLoopback: true}}
}

// receiver is a webhook endpoint on 127.0.0.1 that answers 204 and tells
// of each delivery's record id.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string]chan struct{}
}

func newReceiver() *receiver {
	r := &receiver{got: map[string]chan struct{}{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev struct{ Data struct{ ID json.Number } }
		body, _ := io.ReadAll(req.Body)
		_ = json.Unmarshal(body, &ev)
		w.WriteHeader(http.StatusNoContent)
		r.arrived(ev.Data.ID.String())
	}))
	return r
}

// wait is closed when the delivery of record id arrives.
func (r *receiver) wait(id string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got[id] == nil {
		r.got[id] = make(chan struct{})
	}
	return r.got[id]
}

// arrived tells of a delivery; a second one of the same record (at least
// once) tells nothing more.
func (r *receiver) arrived(id string) {
	ch := r.wait(id)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// measureWebhooks reports the webhooks' figures: ms_webhook_local, a
// document created with the stand-in model (generated in the request)
// to its delivery's 2xx at a receiver registered for it, through the
// generator's stream mapping, the queue and the sender as make run runs
// them; then calls and WRU of one delivery (its publishing by the
// generator and one successful attempt by the sender); then the sender's
// bootstrap and cold start.
func measureWebhooks(ctx context.Context, b *bench.Board, meter *ddblocal.Meter, metered, plain *dynamodb.Client, cfg app.Config,
	parts *stack.Generation, q *stack.WebhookQueue, tmpl *sam.Template, endpoint string, tables map[string]string, builds *artifacts) error {
	logf("webhooks: creates to their delivery")
	cfg.Generation = parts.Config()
	a := app.New(cfg, plain)
	c, err := newAccountClient(ctx, a, plain, tables["ApiKeysTable"], "bench-webhooks")
	if err != nil {
		return err
	}
	rcv := newReceiver()
	defer rcv.srv.Close()
	if ans := c.Do("POST", "/api/v1/webhooks", url.Values{"url": {rcv.srv.URL + "/hook"}}, nil); ans.Status != 201 {
		b.Missing(fmt.Sprintf("register: %d %.300s", ans.Status, ans.Raw), "ms_webhook_local", "calls_webhook_delivery", "rru_webhook_delivery", "wru_webhook_delivery")
		return nil
	}
	stream, err := a.GeneratorEntry()
	if err != nil {
		return err
	}
	send, err := a.SenderEntry()
	if err != nil {
		return err
	}
	run, stop := context.WithCancel(ctx)
	defer stop()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := stack.DeliverGenerator(run, plain, endpoint, tmpl, tables, stream, quiet); err != nil {
		return err
	}
	go q.Run(run, send, 10*time.Millisecond, nil)

	document := url.Values{"name": {"Launch post"}, "prompt": {"Announce our new espresso machine."}, "template_id": {"9"}}
	var took []time.Duration
	for range webhookRuns {
		start := time.Now()
		ans := c.Do("POST", "/api/v1/documents", document, nil)
		if problem := generated(ans); problem != "" {
			b.Missing(problem, "ms_webhook_local")
			took = nil
			break
		}
		select {
		case <-rcv.wait(fmt.Sprint(ans.ID())):
			took = append(took, time.Since(start))
		case <-time.After(time.Minute):
			b.Missing("no delivery within a minute", "ms_webhook_local")
			took = nil
		}
		if took == nil {
			break
		}
	}
	stop()
	if took != nil {
		b.Add(bench.Figure{Name: "ms_webhook_local", Value: ms(bench.Percentile(took, 50)), Unit: "ms"})
	}

	if err := measureDelivery(ctx, b, meter, metered, cfg, q, tables, rcv); err != nil {
		return err
	}
	if builds == nil {
		return nil // -quick: nothing built
	}
	return measureSenderBuilt(ctx, b, builds, tmpl, endpoint, tables)
}

// measureDelivery adds calls, rru and wru_webhook_delivery: a ~5 KB
// document's event published to one endpoint (the account's endpoints read, the
// delivery recorded) and its one successful attempt (the delivery and the
// endpoint read, the attempt claimed, recorded, the endpoint's health
// kept), through the metered client.
func measureDelivery(ctx context.Context, b *bench.Board, meter *ddblocal.Meter, metered *dynamodb.Client, cfg app.Config,
	q *stack.WebhookQueue, tables map[string]string, rcv *receiver) error {
	names := []string{"calls_webhook_delivery", "rru_webhook_delivery", "wru_webhook_delivery"}
	sealer, err := webhook.NewSealer(cfg.Webhooks.Seal)
	if err != nil {
		return err
	}
	st := &hookstore.Store{Client: metered, Table: tables["WebhooksTable"], Sealer: sealer}
	const account = "bench-delivery"
	if _, _, err := st.Create(ctx, account, hookstore.Endpoint{URL: rcv.srv.URL + "/hook", Events: app.EventTypes}); err != nil {
		return err
	}
	p := &hooksender.Publisher{Store: st, Lanes: hooksender.Lanes{Queue: q.Client, Fast: q.URL, Slow: q.SlowURL}}
	// A document as GET shows it, with a result of the seed's size (~5
	// KB): the queue's message carries the event, so that the delivery's
	// writes do not grow with it.
	data, err := json.Marshal(map[string]any{"id": 1, "name": "Launch post", "result": strings.Repeat("x", bench.SeededResultBytes)})
	if err != nil {
		return err
	}
	ev := hooksender.Event{Account: account, Type: webhook.Generated(documents.Resource.Object), At: time.Now(), Data: data,
		Identity: []string{"bench", account, "1"}}
	var publishErr error
	published := meter.Measure(func() { publishErr = p.Publish(ctx, ev) })
	if publishErr != nil {
		b.Missing(publishErr.Error(), names...)
		return nil
	}
	out, err := q.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 1})
	if err != nil || len(out.Messages) != 1 {
		b.Missing(fmt.Sprintf("the published event is not queued: %v", err), names...)
		return nil
	}
	m := out.Messages[0]
	send, err := app.New(cfg, metered).SenderEntry()
	if err != nil {
		return err
	}
	var resp events.SQSEventResponse
	sent := meter.Measure(func() {
		resp, err = send(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: *m.MessageId,
			ReceiptHandle: *m.ReceiptHandle, Body: *m.Body}}})
	})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		b.Missing(fmt.Sprintf("the sender did not deliver: %v %+v", err, resp), names...)
		return nil
	}
	t := ddblocal.SumMetered(append(published, sent...))
	b.Add(bench.Figure{Name: "calls_webhook_delivery", Value: float64(t.RoundTrips), Unit: "calls"})
	b.Add(bench.Figure{Name: "rru_webhook_delivery", Value: t.Reads, Unit: "rru"})
	b.Add(bench.Figure{Name: "wru_webhook_delivery", Value: t.Writes, Unit: "wru"})
	return nil
}

// measureSenderBuilt adds the sender's bootstrap size and its cold start:
// exec to its answer to a message naming a delivery that is no more
// (expired), which it reads and lets go: the init and one read, as each
// run finds the same.
func measureSenderBuilt(ctx context.Context, b *bench.Board, builds *artifacts, tmpl *sam.Template, endpoint string,
	tables map[string]string) error {
	if err := addSize(ctx, b, builds, "bytes_bootstrap_sender", "sender-arm64"); err != nil {
		return err
	}
	body, _ := json.Marshal(hookstore.DeliveryKey{Account: "bench-delivery", SK: "dl#none"})
	ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "bench", ReceiptHandle: "bench", Body: string(body),
		EventSourceARN: sqslocal.ARN(stack.WebhookDeliveriesQueue)}}}
	return coldStartStream(ctx, b, builds, tmpl, endpoint, tables, app.SenderFunction, "sender-amd64", "ms_cold_start_sender", ev,
		func(r events.SQSEventResponse) int { return len(r.BatchItemFailures) })
}
