package hooksender_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
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
	p := &hooksender.Publisher{Store: r.store, Queue: r.queue, QueueURL: r.url}
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
