// Package hooksender is the webhook sender function: it takes deliveries
// from the SQS queue (each message names one, hookstore.DeliveryKey, and
// carries its body), makes the attempt that is due, records it, and waits
// for the next by the message's visibility: it hides the message until the
// schedule's next attempt and reports it as a batch item failure, so
// Lambda's event source mapping leaves it in the queue
// (ReportBatchItemFailures). A message it cannot process at all (DynamoDB
// or SQS failing) is reported failed as is, comes back after the queue's
// visibility timeout, and after the redrive policy's receives lands in the
// dead-letter queue.
package hooksender

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/hookstore"
	"contentapi/shared/webhook"
)

// errNoBody is a delivery whose body neither its message nor its item
// holds: left to the dead-letter queue, where its alarm tells of it.
var errNoBody = errors.New("hooksender: the delivery's body is in neither its message nor its item")

// Sender is the function's handler.
type Sender struct {
	Store    *hookstore.Store
	Client   *webhook.Client
	Queue    *sqs.Client
	QueueURL string
	// Schedule is webhook.DefaultSchedule when nil; only the local stack
	// shortens it.
	Schedule webhook.Schedule
	Logger   *slog.Logger
	// Fresh, when set, remakes what must be new in a body on every
	// attempt (an image's presigned url, which would have expired by the
	// later retries) before it is signed; nil sends the body as queued
	// (in the message, or in the item when too large for one).
	Fresh func(ctx context.Context, eventType string, body []byte) ([]byte, error)
	// Now is time.Now when nil.
	Now func() time.Time
}

func (s *Sender) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Sender) schedule() webhook.Schedule {
	if s.Schedule != nil {
		return s.Schedule
	}
	return webhook.DefaultSchedule
}

// Handle is the entry point: every message of the batch at once.
func (s *Sender) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	keep := make([]bool, len(ev.Records))
	var wg sync.WaitGroup
	for i, m := range ev.Records {
		wg.Go(func() {
			again, err := s.message(ctx, m)
			if err != nil {
				s.Logger.Error("webhook sender: message not processed, delivered again", "message_id", m.MessageId, "error", err.Error())
			}
			keep[i] = again || err != nil
		})
	}
	wg.Wait()
	var resp events.SQSEventResponse
	for i, m := range ev.Records {
		if keep[i] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}

// message handles one message; true keeps it in the queue (hidden until
// the next attempt is due).
func (s *Sender) message(ctx context.Context, m events.SQSMessage) (bool, error) {
	var msg message
	if err := json.Unmarshal([]byte(m.Body), &msg); err != nil || msg.Account == "" || msg.SK == "" {
		s.Logger.Error("webhook sender: a message that names no delivery, dropped", "message_id", m.MessageId)
		return false, nil
	}
	k := msg.DeliveryKey
	d, err := s.Store.GetDelivery(ctx, k)
	if errors.Is(err, hookstore.ErrNotFound) {
		return false, nil // expired
	}
	if err != nil {
		return false, err
	}
	if d.Status != hookstore.Pending {
		return false, nil // a copy of a message whose delivery is over
	}
	now := s.now()
	if d.NextAttemptAt != nil && d.NextAttemptAt.After(now.Add(time.Second)) {
		// A copy come early (the event met twice): wait with the others.
		return true, s.hide(ctx, m, d.NextAttemptAt.Sub(now))
	}
	endpoint, key, err := s.Store.SigningKey(ctx, k.Account, d.Endpoint)
	if errors.Is(err, hookstore.ErrNotFound) || err == nil && !endpoint.Enabled {
		// Deleted or disabled: the delivery ends, failed, unattempted.
		_, err = s.Store.Record(ctx, d, hookstore.Outcome{At: now, Final: hookstore.Failed})
		return false, err
	}
	if err != nil {
		return false, err
	}
	// The message carries the body, or the item keeps it (one too large
	// for a message, or recorded before messages carried it).
	body := msg.Body
	if body == nil {
		body = d.Body
	}
	if body == nil {
		return false, errNoBody
	}
	if s.Fresh != nil {
		if body, err = s.Fresh(ctx, d.Type, body); err != nil {
			return false, err
		}
	}
	if err := s.Store.Claim(ctx, d); errors.Is(err, hookstore.ErrLost) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	resp, sendErr := s.Client.Deliver(ctx, webhook.Attempt{URL: endpoint.URL, Key: key, MsgID: d.ID, Body: body})
	made := d.Attempts + 1
	o := hookstore.Outcome{Status: resp.Status, At: now}
	wait, retry := s.schedule().Retry(made)
	switch {
	case sendErr == nil && resp.OK():
		o.Final = hookstore.Succeeded
	case retry:
		o.Next = now.Add(wait)
	default:
		o.Final = hookstore.Failed
	}
	if sendErr != nil {
		// The receiver's address or connection, never our internals: the
		// log names the delivery, and the endpoint by its id and host,
		// never by its URL, whose query or user information may hold the
		// receiver's secret (the client's errors never hold it either).
		s.Logger.Info("webhook attempt without answer", "delivery", d.ID, "endpoint", d.Endpoint,
			"host", webhook.Host(endpoint.URL), "attempt", made, "error", sendErr.Error())
	}
	if _, err := s.Store.Record(ctx, d, o); err != nil {
		return false, err
	}
	if o.Final != "" {
		return false, nil
	}
	return true, s.hide(ctx, m, wait)
}

// hide keeps the message out of sight for d: its next receive is the next
// attempt.
func (s *Sender) hide(ctx context.Context, m events.SQSMessage, d time.Duration) error {
	_, err := s.Queue.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(s.QueueURL), ReceiptHandle: aws.String(m.ReceiptHandle),
		VisibilityTimeout: int32(min(d, 12*time.Hour).Round(time.Second) / time.Second),
	})
	return err
}
