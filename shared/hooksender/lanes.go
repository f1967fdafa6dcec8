package hooksender

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"contentapi/shared/hookstore"
)

// Lanes are the deliveries' two queues, each read by a mapping of the
// sender's own (template.yaml's WebhookDeliveries and WebhookSlowLane):
// the fast lane for first attempts to endpoints that answer 2xx in time,
// the slow lane for retries and for endpoints that are Struggling.
type Lanes struct {
	Queue Queue
	// Fast and Slow are the queues' URLs.
	Fast, Slow string
}

// Queue is the queue service the lanes are in: SQS, whose client
// shared/app/queue adapts. Only that package links SQS's client, so a
// function that publishes no deliveries links none.
type Queue interface {
	// Send queues body at the queue url, visible after delaySeconds.
	Send(ctx context.Context, url, body string, delaySeconds int32) error
	// Hide keeps the received message of receipt at url out of sight
	// for seconds.
	Hide(ctx context.Context, url, receipt string, seconds int32) error
}

// The lanes as a message names them, and the fast lane's leases
// (hookstore.Lease); a message that names none is in the fast lane, as
// every message was before there were two.
const (
	fastLane = "fast"
	slowLane = "slow"
)

// laneOf is the lane of an endpoint's next delivery.
func laneOf(e hookstore.Endpoint) string {
	if e.Struggling {
		return slowLane
	}
	return fastLane
}

// message is what a queue carries for one delivery: its key and, unless
// too large, the event's body, written once there rather than in the
// delivery's item, whose every update (one per attempt) would pay for it.
// The body is base64 ([]byte) in the JSON: SQS refuses characters a JSON
// text may hold unescaped (U+FFFE, U+FFFF).
type message struct {
	hookstore.DeliveryKey
	Body []byte `json:"body,omitempty"`
	// Lane is the queue the message is in: "slow", or empty for the fast
	// lane.
	Lane string `json:"lane,omitempty"`
	// Deferred counts the times it was put back in its lane while another
	// invocation attempted its account's deliveries: its next wait is
	// longer (deferral).
	Deferred int `json:"deferred,omitempty"`
	// Manual, for an account's retry of an ended delivery, is the number
	// of the one attempt it asks for (hookstore.Retry): made only while
	// the delivery has made one fewer, so a copy of the message makes
	// none, and never retried on the schedule.
	Manual int `json:"manual,omitempty"`
}

// to is the message as it is queued in lane.
func (m message) to(lane string) message {
	m.Lane, m.Deferred = "", 0
	if lane == slowLane {
		m.Lane = slowLane
	}
	return m
}

// deferred is the message put back in its lane once more.
func (m message) deferred() message {
	m.Deferred++
	return m
}

// send queues msg in its lane, visible after delay: at most SQS's 15
// minutes, and a message come early waits again, hidden.
func (l Lanes) send(ctx context.Context, msg message, delay time.Duration) error {
	url := l.Fast
	if msg.Lane == slowLane {
		url = l.Slow
	}
	body, _ := json.Marshal(msg) // strings, bytes and numbers always encode
	err := l.Queue.Send(ctx, url, string(body), int32(min(delay, 15*time.Minute).Round(time.Second)/time.Second))
	if err != nil {
		return fmt.Errorf("hooksender: queueing a delivery: %w", err)
	}
	return nil
}
