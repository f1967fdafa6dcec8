package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/documents"
	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/hookreceiver"
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

// measureWebhooks reports the webhooks' figures: ms_webhook_local, a
// document created with the stand-in model (generated in the request)
// to its delivery's 2xx at a receiver registered for it, through the
// generator's stream mapping, the queue and the sender as make run runs
// them; then calls and WRU of one delivery (its publishing by the
// generator and one successful attempt by the sender); then the sender's
// bootstrap and cold start.
func measureWebhooks(ctx context.Context, b *bench.Board, meter *ddblocal.Meter, logs *bench.LogMeter, metered, plain *dynamodb.Client, cfg app.Config,
	parts *stack.Generation, q *stack.WebhookQueue, tmpl *sam.Template, endpoint string, tables map[string]string, builds *artifacts) error {
	logf("webhooks: creates to their delivery")
	cfg.Generation = parts.Config()
	a := app.New(cfg, plain, stack.Parts)
	c, err := bench.NewAccountCaller(ctx, a, plain, tables["ApiKeysTable"], "bench-webhooks")
	if err != nil {
		return err
	}
	rcv := hookreceiver.NewRecorder()
	defer rcv.Close()
	if ans := c.Do("POST", "/api/v1/webhooks", url.Values{"url": {rcv.URL + "/hook"}}, nil); ans.Status != 201 {
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
		if problem := bench.Generated(ans); problem != "" {
			b.Missing(problem, "ms_webhook_local")
			took = nil
			break
		}
		select {
		case <-rcv.Wait(fmt.Sprint(ans.ID())):
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

	if err := measureDelivery(ctx, b, meter, logs, metered, cfg, q, tables, rcv); err != nil {
		return err
	}
	if err := measureBesideDeadEndpoint(ctx, b, a, plain, cfg, q, tables); err != nil {
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
// kept), through the metered client; and keeps in logs what the two
// invocations wrote to CloudWatch Logs, as deliveryCost, and what the
// sender writes for an attempt without answer, as worstAttempt.
func measureDelivery(ctx context.Context, b *bench.Board, meter *ddblocal.Meter, logs *bench.LogMeter, metered *dynamodb.Client, cfg app.Config,
	q *stack.WebhookQueue, tables map[string]string, rcv *hookreceiver.Recorder) error {
	names := []string{"calls_webhook_delivery", "rru_webhook_delivery", "wru_webhook_delivery"}
	sealer, err := webhook.NewSealer(cfg.Webhooks.Seal)
	if err != nil {
		return err
	}
	st := &hookstore.Store{Client: metered, Table: tables["WebhooksTable"], Sealer: sealer}
	send, err := app.New(cfg, metered, stack.Parts).SenderEntry()
	if err != nil {
		return err
	}
	// A document as GET shows it, with a result of the seed's size (~5
	// KB): the queue's message carries the event, so that the delivery's
	// writes do not grow with it.
	data, err := json.Marshal(map[string]any{"id": 1, "name": "Launch post", "result": strings.Repeat("x", bench.SeededResultBytes)})
	if err != nil {
		return err
	}
	const account = "bench-delivery"
	ev := hooksender.Event{Account: account, Type: webhook.Generated(documents.Resource.Object), At: time.Now(), Data: data,
		Identity: []string{"bench", account, "1"}}
	d, err := bench.MeasureDelivery(ctx, meter, logs, st, q, send, rcv.URL, ev)
	if err != nil {
		b.Missing(err.Error(), names...)
		return nil
	}
	logs.Add(deliveryCost, d.Logs...)
	logs.Add(worstAttempt, d.Unanswered...)
	t := ddblocal.SumMetered(d.Calls)
	b.Add(bench.Figure{Name: "calls_webhook_delivery", Value: float64(t.RoundTrips), Unit: "calls"})
	b.Add(bench.Figure{Name: "rru_webhook_delivery", Value: t.Reads, Unit: "rru"})
	b.Add(bench.Figure{Name: "wru_webhook_delivery", Value: t.Writes, Unit: "wru"})
	return nil
}

// besideDeadRuns are the deliveries ms_webhook_p99_beside_dead_endpoint is
// the 99th percentile of, and besideDeadEvery the time between their
// events: together about 15 s, over the dead receiver's first attempts,
// their 10 s timeouts and what follows them.
const (
	besideDeadRuns  = 30
	besideDeadEvery = 500 * time.Millisecond
)

// measureBesideDeadEndpoint adds ms_webhook_p99_beside_dead_endpoint: one
// account's deliveries, each from its event to its receiver's 2xx, while
// another account has more events queued than the fast lane's invocations
// take at once, all to a receiver that takes each request and never
// answers (bench.BesideDeadEndpoint). The sender runs as the template
// deploys it (each lane's batch size and concurrency).
func measureBesideDeadEndpoint(ctx context.Context, b *bench.Board, a *app.App, db *dynamodb.Client, cfg app.Config,
	q *stack.WebhookQueue, tables map[string]string) error {
	const name = "ms_webhook_p99_beside_dead_endpoint"
	logf("webhooks: deliveries beside a dead endpoint")
	sealer, err := webhook.NewSealer(cfg.Webhooks.Seal)
	if err != nil {
		return err
	}
	st := &hookstore.Store{Client: db, Table: tables["WebhooksTable"], Sealer: sealer}
	send, err := a.SenderEntry()
	if err != nil {
		return err
	}
	took, err := bench.BesideDeadEndpoint(ctx, st, q, send, webhook.Generated(documents.Resource.Object), besideDeadRuns, besideDeadEvery)
	if err != nil {
		b.Missing(err.Error(), name)
		return nil
	}
	b.Add(bench.Figure{Name: name, Value: ms(bench.Percentile(took, 99)), Unit: "ms"})
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
