package hooksender

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"contentapi/shared/hookstore"
	"contentapi/shared/webhook"
)

// Publisher turns an event into deliveries: one for each of the account's
// enabled endpoints that subscribed to its type, recorded once and queued
// for the sender in the endpoint's lane.
type Publisher struct {
	Store *hookstore.Store
	Lanes Lanes
}

// MaxCarriedBody is the largest event body a delivery's message carries:
// base64 in its JSON (4/3 of it) stays well under SQS's 256 KB message. A
// larger one is kept in the delivery's item instead. A document's event,
// its longest fields at the most escaped, is under 140 KB.
const MaxCarriedBody = 160 << 10

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

// Publish records and queues the event's deliveries, each message
// carrying the event's body (MaxCarriedBody). It can be called
// again for the same event (a stream record delivered twice, a batch
// retried): a delivery already recorded is queued again, which the sender
// makes harmless (its claim), so that one recorded but never queued (the
// send failed) still goes out. An endpoint that is Struggling gets its
// delivery in the slow lane at once. An event of type webhook.Test goes to the
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
		carried, kept := body, []byte(nil)
		if len(body) > MaxCarriedBody {
			carried, kept = nil, body
		}
		k, _, err := p.Store.AddDelivery(ctx, ev.Account, e.ID, id, ev.Type, ev.At, kept)
		if err != nil {
			return err
		}
		if err := p.Lanes.send(ctx, message{DeliveryKey: k, Body: carried}.to(laneOf(e)), 0); err != nil {
			return err
		}
	}
	return nil
}

// Redeliver queues the one attempt an account's retry reopened delivery d
// for (hookstore.Retry), in the lane of its endpoint e as a new event's
// delivery is, so the sender admits it as every attempt: counted against
// the account's deliveries, under the fast lane's lease. The message
// carries the body unless too large, which the delivery's item then keeps.
// Queued twice (the call retried), it still makes one attempt.
func (p *Publisher) Redeliver(ctx context.Context, e hookstore.Endpoint, d hookstore.PendingDelivery) error {
	msg := message{DeliveryKey: d.Key, Manual: d.Manual}
	if len(d.Body) <= MaxCarriedBody {
		msg.Body = d.Body
	}
	return p.Lanes.send(ctx, msg.to(laneOf(e)), 0)
}
