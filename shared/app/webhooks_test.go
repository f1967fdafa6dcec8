package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
// webhooksQueue is a test stack's deliveries queue, in process (sqslocal).
type webhooksQueue struct {
	client *sqs.Client
	cfg    app.WebhooksConfig
}

// publicResolver answers hooks.example.com with a public address and
// internal.example.com with a private one; no other name resolves.
type publicResolver struct{}

func (publicResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "hooks.example.com":
		return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
	case "internal.example.com":
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// withWebhooks gives a stack's configuration the webhooks: the template's
// table, a queue of its own, and a client that resolves by publicResolver.
func withWebhooks(t testing.TB) func(*app.Config) *webhooksQueue {
	return func(cfg *app.Config) *webhooksQueue {
		q, err := sqslocal.Start(sqslocal.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		c := sqs.New(sqs.Options{Region: sqslocal.Region, BaseEndpoint: aws.String(q.URL()),
			Credentials: credentials.NewStaticCredentialsProvider("l", "l", "")})
		created, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String("deliveries")})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Webhooks = app.WebhooksConfig{Table: cfg.Tables["WebhooksTable"], QueueURL: *created.QueueUrl, SQSEndpoint: q.URL(),
			Client: webhook.Options{Resolver: publicResolver{}}}
		return &webhooksQueue{client: c, cfg: cfg.Webhooks}
	}
}

func TestGeneratedDocumentIsDelivered(t *testing.T) {
	var hooks *webhooksQueue
	g := newGenStack(t, genOptions{configure: func(cfg *app.Config) {
		hooks = withWebhooks(t)(cfg)
		cfg.Webhooks.Client = webhook.Options{AllowLoopback: true}
	}})
	hooksCfg := hooks.cfg
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

	send, err := g.app.Sender()
	if err != nil {
		t.Fatal(err)
	}
	mapping := &sqspoll.Mapping{Queue: hooks.client, QueueURL: hooksCfg.QueueURL, Handler: sqspoll.Handler(send)}
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

// A registration's secret is shown once and kept only sealed: the
// webhooks' paths take no Idempotency-Key, so a retry with one registers
// again (a second endpoint, another secret) and no answer holding a secret
// is kept in the idempotency table to be replayed.
func TestWebhookSecretsAreNeverReplayed(t *testing.T) {
	s := newStackWith(t, func(cfg *app.Config) { withWebhooks(t)(cfg) })
	register := request{method: "POST", path: "/api/v1/webhooks", key: s.writeKey, contentType: "application/x-www-form-urlencoded",
		body: "url=https%3A%2F%2Fhooks.example.com%2Fa", header: map[string]string{"Idempotency-Key": "hook-1"}}
	first, second := s.do(register), s.do(register)
	expect(t, first, 201)
	expect(t, second, 201)
	if first.data()["id"] == second.data()["id"] || first.data()["secret"] == second.data()["secret"] || second.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the retry was replayed: %v then %v", first.Raw, second.Raw)
	}
	out, err := s.env.Client.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(s.env.Tables["IdempotencyTable"])})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 0 {
		t.Errorf("the idempotency table keeps %d answers", out.Count)
	}
}
