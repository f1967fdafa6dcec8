package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/app"
	"contentapi/shared/local/sqslocal"
	"contentapi/shared/local/sqspoll"
)

// The local queues take the template's names.
const (
	deliveriesQueue = "WebhookDeliveries"
	deliveriesDLQ   = "WebhookDeliveriesDLQ"
)

// EnvAllowLoopback lets make run's sender reach a receiver on 127.0.0.1 or
// localhost (http or https), and nothing else; only this command reads it,
// so no deployment can.
const EnvAllowLoopback = "WEBHOOKS_ALLOW_LOOPBACK"

// webhookQueue is the local SQS with the deliveries' queue and its
// dead-letter queue, set up as the template's (visibility timeout,
// redrive after 12 receives).
type webhookQueue struct {
	srv    *sqslocal.Server
	client *sqs.Client
	url    string
}

func startWebhookQueue(ctx context.Context, port int) (*webhookQueue, error) {
	srv, err := sqslocal.Start(sqslocal.Options{Addr: addr(port)})
	if err != nil {
		return nil, err
	}
	c := sqs.New(sqs.Options{Region: sqslocal.Region, BaseEndpoint: aws.String(srv.URL()),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(deliveriesDLQ)}); err != nil {
		srv.Close()
		return nil, err
	}
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(deliveriesQueue), Attributes: map[string]string{
		"VisibilityTimeout": "90",
		"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":12}`, sqslocal.ARN(deliveriesDLQ)),
	}})
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &webhookQueue{srv: srv, client: c, url: *q.QueueUrl}, nil
}

// webhookVars are the functions' settings that point at the local queue
// on host and port (make run's: cmd/local invoke and sam local attach to it).
func webhookVars(host string, port int) map[string]string {
	endpoint := "http://" + net.JoinHostPort(host, strconv.Itoa(port))
	return map[string]string{app.EnvWebhookQueue: sqslocal.QueueURL(endpoint, deliveriesQueue), app.EnvSQSEndpoint: endpoint}
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
	return app.New(cfg, db), nil
}

// runSender feeds the sender from the queue, as the template's mapping
// does in AWS, until ctx ends.
func (w *webhookQueue) runSender(ctx context.Context, a *app.App, stderr io.Writer) error {
	send, err := a.Sender()
	if err != nil {
		return err
	}
	m := &sqspoll.Mapping{Queue: w.client, QueueURL: w.url, QueueARN: sqslocal.ARN(deliveriesQueue), BatchSize: 10, Handler: sqspoll.Handler(send)}
	log := newLogger(stderr)
	go m.Run(ctx, 100*time.Millisecond, func(err error) { log.Error("webhook sender", "error", err.Error()) })
	return nil
}

// sqsPort is where make run's queue listens: $SQS_PORT or 8003.
func sqsPort() (int, error) { return portFromEnv("SQS_PORT", defaultSQSPort) }
