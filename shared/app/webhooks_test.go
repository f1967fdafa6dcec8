package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"contentapi/shared/app"
	"contentapi/shared/hookstore"
	"contentapi/shared/local/sqslocal"
	"contentapi/shared/local/sqspoll"
	"contentapi/shared/webhook"
)

// A document generated in the request reaches its account's endpoint,
// through the generator's stream mapping, the queue and the sender, as one
// signed document.generated holding the record as GET shows it, logged
// as succeeded after one attempt.
func TestGeneratedDocumentIsDelivered(t *testing.T) {
	q, err := sqslocal.Start(sqslocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	sqsClient := sqs.New(sqs.Options{Region: sqslocal.Region, BaseEndpoint: aws.String(q.URL()),
		Credentials: credentials.NewStaticCredentialsProvider("l", "l", "")})
	created, err := sqsClient.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("deliveries")})
	if err != nil {
		t.Fatal(err)
	}
	var hooksCfg app.WebhooksConfig
	g := newGenStack(t, genOptions{configure: func(cfg *app.Config) {
		cfg.Webhooks = app.WebhooksConfig{Table: cfg.Tables["WebhooksTable"], QueueURL: *created.QueueUrl, SQSEndpoint: q.URL()}
		hooksCfg = cfg.Webhooks
	}})

	var mu sync.Mutex
	var bodies []map[string]any
	var verifier *standardwebhooks.Webhook
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if err := verifier.Verify(body, r.Header); err != nil {
			t.Errorf("delivery does not verify: %v", err)
		}
		var b map[string]any
		_ = json.Unmarshal(body, &b)
		bodies = append(bodies, b)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	sealer, _ := webhook.NewSealer(hooksCfg.Seal)
	store := &hookstore.Store{Client: g.env.Client, Table: hooksCfg.Table, Sealer: sealer}
	endpoint, secret, err := store.Create(t.Context(), "acme", hookstore.Endpoint{URL: srv.URL + "/hook", Events: webhook.EventTypes})
	if err != nil {
		t.Fatal(err)
	}
	verifier, _ = standardwebhooks.NewWebhook(secret)

	send, err := g.app.SenderWith(webhook.Options{AllowLoopback: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mapping := &sqspoll.Mapping{Queue: sqsClient, QueueURL: *created.QueueUrl, Handler: sqspoll.Handler(send)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go mapping.Run(ctx, 20*time.Millisecond, nil)

	r := g.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine", "template_id", "33")
	expect(t, r, 201)
	id := r.data()["id"]
	eventually(t, "the delivery", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(bodies) == 1, fmt.Sprint(bodies)
	})
	mu.Lock()
	b := bodies[0]
	mu.Unlock()
	data, _ := b["data"].(map[string]any)
	if b["type"] != webhook.DocumentGenerated || fmt.Sprint(data["id"]) != fmt.Sprint(id) || data["result"] != r.data()["result"] {
		t.Errorf("delivered %v", b)
	}
	log, err := store.Deliveries(t.Context(), "acme", endpoint.ID)
	if err != nil || len(log) != 1 || log[0].Status != hookstore.Succeeded || log[0].Attempts != 1 {
		t.Errorf("log %+v %v", log, err)
	}
}
