package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/app"
	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/hookreceiver"
	"contentapi/shared/local/stack"
)

// Delivery is one webhook delivery measured: the DynamoDB calls of its
// publishing and of its one successful attempt, what its two invocations
// (the generator's publishing, the sender's attempt) wrote to CloudWatch
// Logs, and what the sender wrote for an attempt without answer.
type Delivery struct {
	Calls            []ddblocal.MeteredCall
	Logs, Unanswered []LogWrite
}

// MeasureDelivery has ev published through st to an endpoint of its
// account at receiver (which answers) and send make the attempt alone,
// from q's fast lane: the calls through meter, the lines through logs.
// Then the same event of another account, whose endpoint's address takes
// no connection, for the lines of an attempt without answer (a receiver
// that never answers has the same line written, a timeout its error).
func MeasureDelivery(ctx context.Context, meter *ddblocal.Meter, logs *LogMeter, st *hookstore.Store, q *stack.WebhookQueue,
	send app.SenderEntry, receiver string, ev hooksender.Event) (Delivery, error) {
	p := &hooksender.Publisher{Store: st, Lanes: q.Lanes()}
	attempt := func(ev hooksender.Event, url string, functions ...string) ([]ddblocal.MeteredCall, []LogWrite, error) {
		if _, _, err := st.Create(ctx, ev.Account, hookstore.Endpoint{URL: url + "/hook", Events: app.EventTypes}); err != nil {
			return nil, nil, err
		}
		logs.Mark()
		var err error
		calls := meter.Measure(func() { err = p.Publish(ctx, ev) })
		if err != nil {
			return nil, nil, err
		}
		var resp events.SQSEventResponse
		calls = append(calls, meter.Measure(func() { resp, err = q.SendOne(ctx, send) })...)
		if err == nil && len(resp.BatchItemFailures) != 0 {
			err = fmt.Errorf("bench: the sender failed its message: %+v", resp.BatchItemFailures)
		}
		if err != nil {
			return nil, nil, err
		}
		var writes []LogWrite
		for _, fn := range functions {
			w, err := logs.Invocation(fn)
			if err != nil {
				return nil, nil, err
			}
			writes = append(writes, w)
		}
		return calls, writes, nil
	}
	var d Delivery
	var err error
	// The publishing is the generator's invocation (which writes nothing
	// of its own for it), the attempt the sender's.
	if d.Calls, d.Logs, err = attempt(ev, receiver, app.SenderFunction, app.GeneratorFunction); err != nil {
		return Delivery{}, err
	}
	gone := hookreceiver.NewRecorder()
	gone.Close()
	ev.Account += "-gone"
	if _, d.Unanswered, err = attempt(ev, gone.URL, app.SenderFunction); err != nil {
		return Delivery{}, fmt.Errorf("bench: an attempt without answer: %w", err)
	}
	return d, nil
}

// BesideDeadEndpoint is how long each of runs deliveries of events of typ
// to one account's receiver takes, from its event to the receiver's 2xx,
// one event every every, while another account has more events queued
// than the fast lane's invocations take at once (stack.WebhookQueue's
// Backlog), all to a receiver that takes each request and never answers.
// send is fed from both lanes as the template deploys it (Run).
func BesideDeadEndpoint(ctx context.Context, st *hookstore.Store, q *stack.WebhookQueue, send app.SenderEntry, typ string,
	runs int, every time.Duration) ([]time.Duration, error) {
	dead := hookreceiver.NewHanging(nil, nil)
	defer dead.Close()
	rcv := hookreceiver.NewRecorder()
	defer rcv.Close()
	for account, u := range map[string]string{"bench-dead": dead.URL, "bench-beside": rcv.URL} {
		if _, _, err := st.Create(ctx, account, hookstore.Endpoint{URL: u + "/hook", Events: app.EventTypes}); err != nil {
			return nil, err
		}
	}
	if _, err := q.Backlog(ctx, st, "bench-dead", typ, time.Now()); err != nil {
		return nil, err
	}
	run, stop := context.WithCancel(ctx)
	running := make(chan struct{})
	go func() { q.Run(run, send, 10*time.Millisecond, nil); close(running) }()
	defer func() { dead.Release(); stop(); <-running }()
	var took []time.Duration
	for i := range runs {
		start := time.Now()
		if err := q.Publish(ctx, st, "bench-beside", typ, i, time.Now()); err != nil {
			return nil, err
		}
		select {
		case <-rcv.Wait(fmt.Sprint(i)):
			took = append(took, time.Since(start))
		case <-time.After(time.Minute):
			return nil, errors.New("a delivery beside the dead endpoint did not arrive within a minute")
		}
		time.Sleep(max(0, every-time.Since(start)))
	}
	return took, nil
}
