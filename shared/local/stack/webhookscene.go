package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/app"
	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
	"contentapi/shared/webhook"
)

// Config is the webhooks' part of the functions' configuration for these
// queues and the template's table in tables, as make run has it with
// WEBHOOKS_ALLOW_LOOPBACK=1: receivers on 127.0.0.1 allowed.
func (q *WebhookQueue) Config(tables map[string]string) app.WebhooksConfig {
	return app.WebhooksConfig{Table: tables["WebhooksTable"], QueueURL: q.URL, SlowQueueURL: q.SlowURL, SQSEndpoint: q.Server.URL(),
		Client: webhook.Options{AllowLoopback: true}}
}

// Publish queues an event of type typ at at about account's record id
// (its data {"id": id}), as the generator publishes a generation's end,
// for each of the account's endpoints that takes it.
func (q *WebhookQueue) Publish(ctx context.Context, st *hookstore.Store, account, typ string, id int, at time.Time) error {
	p := &hooksender.Publisher{Store: st, Lanes: q.Lanes()}
	return p.Publish(ctx, hooksender.Event{Account: account, Type: typ, At: at,
		Data: json.RawMessage(fmt.Sprintf(`{"id":%d}`, id)), Identity: []string{account, fmt.Sprint(id)}})
}

// Backlog publishes more of account's events than the fast lane's
// invocations take at once (a batch each, and half a batch more), of
// records 0 to n-1, and returns n: the scene of a receiver that never
// answers, beside another account's.
func (q *WebhookQueue) Backlog(ctx context.Context, st *hookstore.Store, account, typ string, at time.Time) (int, error) {
	fast, ok := q.Settings.Lane(WebhookDeliveriesQueue)
	if !ok {
		return 0, fmt.Errorf("stack: the template has no fast lane, %s", WebhookDeliveriesQueue)
	}
	n := fast.MaximumConcurrency*fast.BatchSize + fast.BatchSize/2
	for i := range n {
		if err := q.Publish(ctx, st, account, typ, i, at); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// SendOne hands the fast lane's next message to send, alone, as the
// lane's mapping would: what the sender answered.
func (q *WebhookQueue) SendOne(ctx context.Context, send app.SenderEntry) (events.SQSEventResponse, error) {
	out, err := q.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 1})
	if err != nil {
		return events.SQSEventResponse{}, err
	}
	if len(out.Messages) != 1 {
		return events.SQSEventResponse{}, fmt.Errorf("stack: %d messages in the fast lane, want one", len(out.Messages))
	}
	m := out.Messages[0]
	return send(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: *m.MessageId, ReceiptHandle: *m.ReceiptHandle, Body: *m.Body}}})
}
