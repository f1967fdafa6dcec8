package hooksender_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/webhook"
)

// An event goes to the enabled endpoints subscribed to its type, once
// however often it is published; a test event only to the endpoint named.
func TestPublishReachesSubscribersOnce(t *testing.T) {
	r := newRig(t)
	var mu sync.Mutex
	got := map[string][]string{} // path -> webhook-ids
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		got[req.URL.Path] = append(got[req.URL.Path], req.Header.Get("webhook-id"))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	create := func(path string, events ...string) hookstore.Endpoint {
		e, _, err := r.store.Create(t.Context(), "acct", hookstore.Endpoint{URL: srv.URL + path, Events: events})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	create("/all", webhook.Types("document", "image")...)
	create("/images", "image.generated", "image.failed")
	docs := create("/docs", "document.generated")
	p := &hooksender.Publisher{Store: r.store, Lanes: r.lanes}
	ev := hooksender.Event{
		Account: "acct", Type: "document.generated", At: time.Now(), Data: json.RawMessage(`{"id":1}`),
		Identity: []string{"DocumentsTable", "acct", "1", "attempt-a"},
	}
	for range 2 { // the stream record delivered twice
		if err := p.Publish(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Publish(t.Context(), hooksender.Event{Account: "acct", Type: webhook.Test, At: time.Now(), Data: json.RawMessage(`{}`), Identity: []string{"test-1"}}, docs.ID); err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(t.Context(), hooksender.Event{Account: "other", Type: "document.generated", At: time.Now(), Data: json.RawMessage(`{}`), Identity: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	for r.poll(t) > 0 {
	}
	if len(got["/all"]) != 1 || len(got["/docs"]) != 2 || len(got["/images"]) != 0 {
		t.Errorf("deliveries %v: want one document.generated to /all and /docs, the test to /docs only", got)
	}
}

// receiver is an endpoint that answers 204 and keeps the bodies it got.
func receiver(t *testing.T) (*httptest.Server, func() [][]byte) {
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, func() [][]byte { mu.Lock(); defer mu.Unlock(); return slices.Clone(bodies) }
}

// An attempt updates the delivery's log alone: the event's body travels
// in the queue's message, so however large the event (a ~5 KB document's
// here) each write of a delivery is 1 WRU, where the log item that held
// the body made the attempt's claim and record 6 WRU each (19 WRU a
// delivery, 14 of them the body's). The receiver still gets it whole.
func TestAnAttemptWritesOnlyTheLog(t *testing.T) {
	r := newRig(t)
	srv, got := receiver(t)
	if _, _, err := r.store.Create(t.Context(), "acct", hookstore.Endpoint{URL: srv.URL, Events: []string{"document.generated"}}); err != nil {
		t.Fatal(err)
	}
	result := strings.Repeat("x", 5*1024)
	data, _ := json.Marshal(map[string]any{"id": 1, "result": result})
	p := &hooksender.Publisher{Store: r.store, Lanes: r.lanes}
	ev := hooksender.Event{Account: "acct", Type: "document.generated", At: time.Now(), Data: data, Identity: []string{"d", "1"}}
	var err error
	published := r.meter.Measure(func() { err = p.Publish(t.Context(), ev) })
	if err != nil {
		t.Fatal(err)
	}
	attempt := r.meter.Measure(func() { r.poll(t) })
	t.Logf("a delivery (published, one attempt): %+v", ddblocal.SumMetered(append(published, attempt...)))
	for _, c := range append(published, attempt...) {
		if c.Write && c.Units > 1 {
			t.Errorf("%v: a delivery's write costs more than 1 WRU", c)
		}
	}
	// The admission on the account's counter item (the attempt counted,
	// the fast lane's lease taken), the claim, the record, the endpoint's
	// health and the lease given back; the delivery's and the endpoint's
	// reads.
	if sum := ddblocal.SumMetered(attempt); sum.Writes != 5 || sum.Reads != 2 {
		t.Errorf("the attempt: %+v, want 5 WRU and 2 RRU (%v)", sum, attempt)
	}
	if b := got(); len(b) != 1 || !strings.Contains(string(b[0]), result) {
		t.Errorf("the receiver got %d deliveries, want one with the whole result", len(b))
	}
}

// A body too large for a message is kept in the delivery's item, and
// delivered whole from there; the message stays under SQS's 256 KB.
func TestABodyTooLargeForTheMessageIsKeptWithTheDelivery(t *testing.T) {
	r := newRig(t)
	srv, got := receiver(t)
	if _, _, err := r.store.Create(t.Context(), "acct", hookstore.Endpoint{URL: srv.URL, Events: []string{"document.generated"}}); err != nil {
		t.Fatal(err)
	}
	result := strings.Repeat("y", hooksender.MaxCarriedBody)
	data, _ := json.Marshal(map[string]any{"id": 1, "result": result})
	p := &hooksender.Publisher{Store: r.store, Lanes: r.lanes}
	ev := hooksender.Event{Account: "acct", Type: "document.generated", At: time.Now(), Data: data, Identity: []string{"d", "2"}}
	if err := p.Publish(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	out, err := r.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(r.lanes.Fast), MaxNumberOfMessages: 1})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("queued: %v %d", err, len(out.Messages))
	}
	m := out.Messages[0]
	if n := len(*m.Body); n > 1024 {
		t.Errorf("the message is %d bytes, want the key alone", n)
	}
	resp, err := r.sender.Handle(t.Context(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: *m.MessageId, ReceiptHandle: *m.ReceiptHandle, Body: *m.Body}}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("sender: %v %+v", err, resp)
	}
	if b := got(); len(b) != 1 || !strings.Contains(string(b[0]), result) {
		t.Errorf("the receiver got %d deliveries, want one with the whole result", len(b))
	}
}
