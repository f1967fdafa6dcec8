package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/app"
	"contentapi/shared/local/sqslocal"
	"contentapi/shared/local/sqspoll"
	"contentapi/shared/webhook"
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

func startWebhookQueue(ctx context.Context) (*webhookQueue, error) {
	srv, err := sqslocal.Start(sqslocal.Options{})
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

// vars are the functions' settings that point at this queue.
func (w *webhookQueue) vars() map[string]string {
	return map[string]string{app.EnvWebhookQueue: w.url, app.EnvSQSEndpoint: w.srv.URL()}
}

// runSender feeds the sender from the queue, as the template's mapping
// does in AWS, until ctx ends.
func (w *webhookQueue) runSender(ctx context.Context, a *app.App, stderr io.Writer) error {
	send, err := a.SenderWith(webhook.Options{AllowLoopback: os.Getenv(EnvAllowLoopback) == "1"}, nil)
	if err != nil {
		return err
	}
	m := &sqspoll.Mapping{Queue: w.client, QueueURL: w.url, QueueARN: sqslocal.ARN(deliveriesQueue), BatchSize: 10, Handler: sqspoll.Handler(send)}
	log := newLogger(stderr)
	go m.Run(ctx, 100*time.Millisecond, func(err error) { log.Error("webhook sender", "error", err.Error()) })
	return nil
}
