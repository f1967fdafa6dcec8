// Package hooksender is the webhook sender function: it takes deliveries
// from the SQS queues (each message names one, hookstore.DeliveryKey, and
// carries its body), makes the attempt that is due, records it, and waits
// for the next by the message's visibility: it hides the message until the
// schedule's next attempt and reports it as a batch item failure, so
// Lambda's event source mapping leaves it in the queue
// (ReportBatchItemFailures). A message it cannot process at all (DynamoDB
// or SQS failing) is reported failed as is, comes back after the queue's
// visibility timeout, and after the redrive policy's receives lands in the
// dead-letter queue.
//
// One account's receivers cannot slow down another's deliveries. The
// deliveries run in two lanes (Lanes), two queues each read by a mapping
// of its own, which caps its concurrent invocations: the fast lane holds
// the first attempts to endpoints whose last attempt was answered 2xx
// within webhook.SlowAnswer, the slow lane every retry and every delivery
// to an endpoint whose last attempt failed or was slow (Struggling), until
// one is answered in time again. So a receiver that times out costs the
// fast lane at most the one attempt that showed it, and every later one
// is made in the slow lane. And in the fast lane an account's deliveries
// are attempted by one invocation at a time (a lease on the account's
// counter item, taken in the write that counts the attempt): a batch of
// them attempted at once to a receiver that never answers holds one of
// the lane's invocations until the attempts time out, never all of them,
// and another invocation puts its messages of that account back in the
// lane a little later. Every attempt counts against the account's
// monthly limit of deliveries, in the same write; past it a delivery is
// skipped, logged and not sent; the write's answer shows the limit's 80%
// and 100% reached, which the sender tells as usage.threshold (tell). An
// account's retry of a delivery that ended (hookstore.Retry,
// Publisher.Redeliver) is one more message in its endpoint's lane,
// admitted as any: its one attempt, numbered so that a copy makes none,
// and never retried on the schedule.
package hooksender

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/hookstore"
	"contentapi/shared/quota"
	"contentapi/shared/records"
	"contentapi/shared/webhook"
)

// errNoBody is a delivery whose body neither its message nor its item
// holds: left to the dead-letter queue, where its alarm tells of it.
var errNoBody = errors.New("hooksender: the delivery's body is in neither its message nor its item")

// Sender is the function's handler.
type Sender struct {
	Store  *hookstore.Store
	Client *webhook.Client
	Lanes  Lanes
	// Schedule is webhook.DefaultSchedule when nil; only the local stack
	// shortens it.
	Schedule webhook.Schedule
	Logger   *slog.Logger
	// Fresh, when set, remakes what must be new in a body on every
	// attempt (an image's presigned url, which would have expired by the
	// later retries) before it is signed; nil sends the body as queued
	// (in the message, or in the item when too large for one).
	Fresh func(ctx context.Context, eventType string, body []byte) ([]byte, error)
	// Crossed publishes the usage.threshold event of a threshold of the
	// account's deliveries limit, as first found at at (tell); nil tells
	// no one. Called again for the same crossing, it must publish the same
	// event.
	Crossed func(ctx context.Context, account string, c quota.Crossing, at time.Time) error
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

// Handle is the entry point: every message of the batch at once, then the
// leases the invocation took given back.
func (s *Sender) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	inv := s.invocation(ctx)
	keep := make([]bool, len(ev.Records))
	var wg sync.WaitGroup
	for i, m := range ev.Records {
		wg.Go(func() {
			again, err := s.message(ctx, inv, m)
			if err != nil {
				s.Logger.Error("webhook sender: message not processed, delivered again", "message_id", m.MessageId, "error", err.Error())
			}
			keep[i] = again || err != nil
		})
	}
	wg.Wait()
	s.release(ctx, inv)
	var resp events.SQSEventResponse
	for i, m := range ev.Records {
		if keep[i] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}

// invocation is one call of Handle as the fast lane's leases know it: its
// token, when its leases lapse if never given back, and the accounts
// whose lane it holds.
type invocation struct {
	owner string
	until time.Time
	mu    sync.Mutex
	held  map[string]bool
}

// leaseWithoutDeadline is how long a lease lasts when the invocation's
// context has no deadline (Lambda's always has: the function's timeout).
const leaseWithoutDeadline = 15 * time.Second

func (s *Sender) invocation(ctx context.Context) *invocation {
	b := make([]byte, 12)
	rand.Read(b)
	inv := &invocation{owner: hex.EncodeToString(b), until: s.now().Add(leaseWithoutDeadline), held: map[string]bool{}}
	if deadline, ok := ctx.Deadline(); ok {
		inv.until = s.now().Add(time.Until(deadline))
	}
	return inv
}

// lease is the invocation's lease of the account's fast lane.
func (inv *invocation) lease(account string) *hookstore.Lease {
	inv.mu.Lock()
	inv.held[account] = true
	inv.mu.Unlock()
	return &hookstore.Lease{Lane: fastLane, Owner: inv.owner, Until: inv.until}
}

// release gives back the leases the invocation took, so that the
// accounts' next deliveries need not wait for them to lapse; one not given
// back (DynamoDB failing) lapses at the invocation's end.
func (s *Sender) release(ctx context.Context, inv *invocation) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	for account := range inv.held {
		lease := hookstore.Lease{Lane: fastLane, Owner: inv.owner}
		if err := s.Store.Release(ctx, account, lease); err != nil {
			s.Logger.Warn("webhook sender: a lane's lease not given back, it lapses", "error", err.Error())
		}
	}
}

// message handles one message; true keeps it in its queue (hidden until
// the next attempt is due).
func (s *Sender) message(ctx context.Context, inv *invocation, m events.SQSMessage) (bool, error) {
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
	if msg.Manual != 0 && d.Attempts+1 != msg.Manual {
		return false, nil // a copy of a retry's message whose attempt is made
	}
	now := s.now()
	if d.NextAttemptAt != nil && d.NextAttemptAt.After(now.Add(time.Second)) {
		// A copy come early (the event met twice, or a wait longer than a
		// queue's delay): wait with the others.
		return s.wait(ctx, m, msg, d.NextAttemptAt.Sub(now))
	}
	endpoint, keys, err := s.Store.SigningKeys(ctx, k.Account, d.Endpoint)
	if errors.Is(err, hookstore.ErrNotFound) {
		// Deleted: the delivery ends, failed, unattempted.
		_, err = s.Store.Record(ctx, d, hookstore.Outcome{At: now, Final: hookstore.Failed})
		return false, err
	}
	if err == nil && !endpoint.Enabled {
		// Disabled: the same, its body kept for a retry once enabled.
		if err := s.keep(ctx, d, msg); err != nil {
			return false, err
		}
		_, err = s.Store.Record(ctx, d, hookstore.Outcome{At: now, Final: hookstore.Failed})
		return false, err
	}
	if err != nil {
		return false, err
	}
	if msg.Lane != slowLane && endpoint.Struggling {
		// Its receiver failed or was slow at its last attempt.
		return false, s.Lanes.send(ctx, msg.to(slowLane), 0)
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
	metered := webhook.Metered(d.Type)
	var lease *hookstore.Lease
	if msg.Lane != slowLane {
		lease = inv.lease(k.Account)
	}
	crossings, err := s.Store.Admit(ctx, k.Account, metered, lease, now)
	s.tell(ctx, k.Account, crossings, now)
	var over *records.QuotaError
	switch {
	case errors.As(err, &over):
		s.Logger.Info("webhook delivery skipped", "delivery", d.ID, "endpoint", d.Endpoint, "reason", over.Error())
		if err := s.keep(ctx, d, msg); err != nil {
			return false, err
		}
		return false, s.Store.Skip(ctx, d, now, skippedReason(over))
	case errors.Is(err, hookstore.ErrBusy):
		// Another invocation is attempting the account's deliveries in
		// this lane: this one waits its turn, back in the lane.
		return false, s.Lanes.send(ctx, msg.deferred(), deferral(msg.Deferred))
	case err != nil:
		return false, err
	}
	if err := s.Store.Claim(ctx, d); err != nil {
		if metered {
			// Counted, but another copy of the message makes the attempt.
			if err := s.Store.Refund(context.WithoutCancel(ctx), k.Account, now); err != nil {
				s.Logger.Warn("webhook sender: an attempt not made stays counted", "delivery", d.ID, "error", err.Error())
			}
		}
		if errors.Is(err, hookstore.ErrLost) {
			return false, nil
		}
		return false, err
	}
	started := time.Now()
	resp, sendErr := s.Client.Deliver(ctx, webhook.Attempt{URL: endpoint.URL, Key: keys[0], Previous: keys[1:], MsgID: d.ID, Body: body})
	made := d.Attempts + 1
	o := hookstore.Outcome{Status: resp.Status, Slow: time.Since(started) >= webhook.SlowAnswer, At: now}
	wait, retry := s.schedule().Retry(made)
	switch {
	case sendErr == nil && resp.OK():
		o.Final = hookstore.Succeeded
	case retry && msg.Manual == 0:
		o.Next = now.Add(wait)
	default:
		o.Final = hookstore.Failed
		if err := s.keep(ctx, d, msg); err != nil {
			return false, err
		}
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
	return s.wait(ctx, m, msg, wait)
}

// tell tells the account of each threshold of its deliveries limit that
// an admission found reached and not told: the event as first found
// (hookstore.Found) published, then marked told, so that one published and
// not marked is published again as the same event, and one not published
// is told by the next admission. Its usage.threshold deliveries are not
// metered, so the 100% one is sent past the limit. Best effort: the
// attempt being admitted goes on.
func (s *Sender) tell(ctx context.Context, account string, crossings []quota.Crossing, now time.Time) {
	if s.Crossed == nil {
		return
	}
	for _, c := range crossings {
		first, at, err := s.Store.Found(ctx, account, c, now)
		if errors.Is(err, hookstore.ErrTold) {
			continue
		}
		if err == nil {
			err = s.Crossed(ctx, account, first, at)
		}
		if err == nil {
			err = s.Store.Told(ctx, account, first)
		}
		if err != nil {
			s.Logger.Warn("webhook sender: a usage threshold not told yet, the next admission tells it",
				"threshold", c.MarkAttr(), "error", err.Error())
		}
	}
}

// keep keeps the body of a delivery that ends unsent or failed, which its
// message carried, for the account's retry (hookstore.KeepBody). A retry's
// own message finds it kept already.
func (s *Sender) keep(ctx context.Context, d hookstore.PendingDelivery, msg message) error {
	if msg.Body == nil || msg.Manual != 0 {
		return nil
	}
	return s.Store.KeepBody(ctx, d, msg.Body)
}

// skippedReason is what a skipped delivery's log says.
func skippedReason(over *records.QuotaError) string {
	return "Not sent: " + over.Error() + "."
}

// wait has the delivery's next attempt made after d, in the slow lane: a
// message there is hidden for d and kept (a batch item failure); one in
// the fast lane is moved there, visible after d.
func (s *Sender) wait(ctx context.Context, m events.SQSMessage, msg message, d time.Duration) (bool, error) {
	if msg.Lane == slowLane {
		return true, s.hide(ctx, m, d)
	}
	return false, s.Lanes.send(ctx, msg.to(slowLane), d)
}

// hide keeps the slow lane's message out of sight for d: its next receive
// is the next attempt.
func (s *Sender) hide(ctx context.Context, m events.SQSMessage, d time.Duration) error {
	return s.Lanes.Queue.Hide(ctx, s.Lanes.Slow, m.ReceiptHandle, int32(min(d, 12*time.Hour).Round(time.Second)/time.Second))
}

// deferral is how long a message waits, back in its lane, while another
// invocation holds its account's: a second, doubling each time it is put
// back, up to about as long as an attempt may take. By then a receiver
// that does not answer has shown it, and its deliveries go to the slow
// lane.
func deferral(deferred int) time.Duration {
	return min(time.Second<<min(deferred, 4), 16*time.Second)
}
