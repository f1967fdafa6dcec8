package hooksender

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/hookstore"
	"contentapi/shared/webhook"
)

// Publisher turns an event into deliveries: one for each of the account's
// enabled endpoints that subscribed to its type, recorded once and queued
// for the sender.
type Publisher struct {
	Store    *hookstore.Store
	Queue    *sqs.Client
	QueueURL string
}

// Event is something that happened to an account, with what identifies it
// (for a generation: table, record id and the attempt that wrote it), so
// that meeting it twice gives the same deliveries.
type Event struct {
	Account string
	Type    string
	At      time.Time
	Data    json.RawMessage
	// Identity is the event's own key; webhook.EventID combines it with
	// each endpoint's id.
	Identity []string
}

// Publish records and queues the event's deliveries. It can be called
// again for the same event (a stream record delivered twice, a batch
// retried): a delivery already recorded is queued again, which the sender
// makes harmless (its claim), so that one recorded but never queued (the
// send failed) still goes out. An event of type webhook.Test goes to the
// endpoints named in only, whatever they subscribed to.
func (p *Publisher) Publish(ctx context.Context, ev Event, only ...string) error {
	endpoints, err := p.Store.List(ctx, ev.Account)
	if err != nil {
		return err
	}
	body, err := webhook.Body(ev.Type, ev.At, ev.Data)
	if err != nil {
		return err
	}
	for _, e := range endpoints {
		switch {
		case ev.Type == webhook.Test && !slices.Contains(only, e.ID):
			continue
		case ev.Type != webhook.Test && (!e.Enabled || !slices.Contains(e.Events, ev.Type)):
			continue
		}
		id := webhook.EventID(e.ID, ev.Identity...)
		k, _, err := p.Store.AddDelivery(ctx, ev.Account, e.ID, id, ev.Type, ev.At, body)
		if err != nil {
			return err
		}
		msg, _ := json.Marshal(k) // two strings always encode
		if _, err := p.Queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(p.QueueURL), MessageBody: aws.String(string(msg))}); err != nil {
			return fmt.Errorf("hooksender: queueing a delivery: %w", err)
		}
	}
	return nil
}
