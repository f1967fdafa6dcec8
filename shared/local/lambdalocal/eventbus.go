// The event bus: EventBus is EventBridge's default bus with its rules on
// this machine. An AWS service's events (Bedrock's batch job state changes)
// are put on it; each rule whose event pattern matches one hands it to its
// target function as EventBridge does, through Lambda's asynchronous
// invocation: Put returns at once, the function runs on its own, under its
// timeout, and an invocation that returns an error is retried twice
// (Lambda's MaximumRetryAttempts default) before the event is dropped.
// Lambda waits a minute, then two, between those attempts; here they follow
// at once, so that a test need not wait minutes.

package lambdalocal

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// asyncRetries is how often Lambda retries an asynchronous invocation that
// returned an error.
const asyncRetries = 2

// EventBus is the default bus and its rules.
type EventBus struct {
	logger *slog.Logger

	mu      sync.Mutex
	rules   []eventRule
	running int // invocations started and not ended, retries included

	invoked, failed, dropped atomic.Int64
}

// eventRule is a rule with a function as its target.
type eventRule struct {
	name    string
	pattern *StreamFilter
	timeout time.Duration
	fn      Entry
}

// NewEventBus is a bus with no rules.
func NewEventBus(logger *slog.Logger) *EventBus {
	return &EventBus{logger: logger}
}

// Rule adds a rule: the events its pattern (EventBridge's syntax; exact
// values, exists and prefix) matches go to fn, each invocation under
// timeout.
func (b *EventBus) Rule(name, pattern string, timeout time.Duration, fn Entry) error {
	f, err := ParseStreamFilter([]string{pattern})
	if err != nil {
		return fmt.Errorf("eventbus: rule %s: %w", name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rules = append(b.rules, eventRule{name: name, pattern: f, timeout: timeout, fn: fn})
	return nil
}

// Put puts an event on the bus: each matching rule's function is invoked
// with it, asynchronously. ctx bounds the invocations (a test's, the local
// stack's), not Put.
func (b *EventBus) Put(ctx context.Context, ev events.EventBridgeEvent) {
	raw, err := json.Marshal(ev)
	if err != nil {
		b.logger.Error("eventbus: the event does not marshal", "error", err.Error())
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.rules {
		if !r.pattern.matchJSON(ev) {
			continue
		}
		b.running++
		go func() {
			defer func() {
				b.mu.Lock()
				b.running--
				b.mu.Unlock()
			}()
			b.invoke(ctx, r, raw)
		}()
	}
}

// invoke runs the rule's function with the event, and retries it as
// Lambda retries an asynchronous invocation.
func (b *EventBus) invoke(ctx context.Context, r eventRule, raw json.RawMessage) {
	for attempt := 0; attempt <= asyncRetries; attempt++ {
		b.invoked.Add(1)
		err := func() error {
			ctx, cancel := context.WithTimeout(ctx, r.timeout)
			defer cancel()
			_, err := r.fn(ctx, raw)
			return err
		}()
		if err == nil {
			return
		}
		b.failed.Add(1)
		b.logger.Error("eventbus: the function returned an error", "rule", r.name, "attempt", attempt+1, "error", err.Error())
	}
	b.dropped.Add(1)
}

// Invoked is how many invocations the rules made, retries included;
// Failed how many returned an error; Dropped how many events were given
// up after their retries.
func (b *EventBus) Invoked() int64 { return b.invoked.Load() }
func (b *EventBus) Failed() int64  { return b.failed.Load() }
func (b *EventBus) Dropped() int64 { return b.dropped.Load() }

// Drained waits until every invocation of the events put so far has
// ended (polling: events keep coming while it waits).
func (b *EventBus) Drained(ctx context.Context) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		b.mu.Lock()
		idle := b.running == 0
		b.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("eventbus: invocations still running: %w", ctx.Err())
		}
	}
}
