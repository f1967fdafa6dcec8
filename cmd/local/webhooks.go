package main

import (
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/sqslocal"
	"contentapi/shared/local/stack"
)

// EnvAllowLoopback lets make run's sender reach a receiver on 127.0.0.1 or
// localhost (http or https), and nothing else; only this command reads it,
// so no deployment can.
const EnvAllowLoopback = "WEBHOOKS_ALLOW_LOOPBACK"

// startWebhookQueue starts the deliveries' queue on port (0: any free
// port) of 127.0.0.1, as the template sets it and the sender's mapping.
func startWebhookQueue(ctx context.Context, tmpl *sam.Template, port int) (*stack.WebhookQueue, error) {
	s, err := stack.WebhookQueueSettingsFrom(tmpl)
	if err != nil {
		return nil, err
	}
	return stack.StartWebhookQueue(ctx, addr(port), s)
}

// webhookVars are the functions' settings that point at the local queues
// on host and port (make run's: cmd/local invoke and sam local attach to
// them).
func webhookVars(host string, port int) map[string]string {
	endpoint := "http://" + net.JoinHostPort(host, strconv.Itoa(port))
	return map[string]string{app.EnvWebhookQueue: sqslocal.QueueURL(endpoint, stack.WebhookDeliveriesQueue),
		app.EnvWebhookSlowQueue: sqslocal.QueueURL(endpoint, stack.WebhookSlowLaneQueue), app.EnvSQSEndpoint: endpoint}
}

// localApp is the app as a function builds it from the environment, with
// the local stack's one difference: WEBHOOKS_ALLOW_LOOPBACK=1 lets the
// endpoints API and the sender reach a receiver on 127.0.0.1 or localhost.
func localApp(ctx context.Context) (*app.App, error) {
	cfg, err := app.ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	cfg.Webhooks.Client.AllowLoopback = os.Getenv(EnvAllowLoopback) == "1"
	db, err := app.NewDynamoDB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return app.New(cfg, db, stack.Parts), nil
}

// runSender feeds the sender from the queues, as the template's mappings
// do in AWS, until ctx ends.
func runSender(ctx context.Context, q *stack.WebhookQueue, a *app.App, stderr io.Writer) error {
	send, err := a.SenderEntry()
	if err != nil {
		return err
	}
	log := newLogger(stderr)
	go q.Run(ctx, send, 100*time.Millisecond, func(err error) { log.Error("webhook sender", "error", err.Error()) })
	return nil
}

// sqsPort is where make run's queue listens: $SQS_PORT or 8003.
func sqsPort() (int, error) { return portFromEnv("SQS_PORT", defaultSQSPort) }
