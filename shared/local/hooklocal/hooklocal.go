// Package hooklocal is the webhooks' queue where AWS's is not (make run,
// make bench, tests): the deliveries' queue and its dead-letter queue as
// template.yaml sets them, in an in-process SQS server that speaks SQS's
// protocol to the SDK's client (sqslocal), feeding the sender as the
// template's event source mapping does (sqspoll).
package hooklocal

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/app"
	"contentapi/shared/local/sqslocal"
	"contentapi/shared/local/sqspoll"
)

// The queues take the template's names.
const (
	DeliveriesQueue = "WebhookDeliveries"
	DeliveriesDLQ   = "WebhookDeliveriesDLQ"
)

// Queue is the running deliveries' queue.
type Queue struct {
	Server *sqslocal.Server
	Client *sqs.Client
	URL    string
}

// Start serves the queues on addr ("" for a free port on 127.0.0.1), set
// up as the template's: a visibility timeout of 90 s and a redrive to the
// dead-letter queue after 12 receives.
func Start(ctx context.Context, addr string) (*Queue, error) {
	srv, err := sqslocal.Start(sqslocal.Options{Addr: addr})
	if err != nil {
		return nil, err
	}
	c := sqs.New(sqs.Options{Region: sqslocal.Region, BaseEndpoint: aws.String(srv.URL()),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(DeliveriesDLQ)}); err != nil {
		srv.Close()
		return nil, err
	}
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(DeliveriesQueue), Attributes: map[string]string{
		"VisibilityTimeout": "90",
		"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":12}`, sqslocal.ARN(DeliveriesDLQ)),
	}})
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &Queue{Server: srv, Client: c, URL: *q.QueueUrl}, nil
}

// Close stops the server.
func (q *Queue) Close() error { return q.Server.Close() }

// Vars are the functions' settings that point at the queue.
func (q *Queue) Vars() map[string]string {
	return map[string]string{app.EnvWebhookQueue: q.URL, app.EnvSQSEndpoint: q.Server.URL()}
}

// Run feeds send from the queue, as the template's mapping does in AWS,
// until ctx ends, looking again after idle when the queue was empty.
func (q *Queue) Run(ctx context.Context, send app.SenderHandler, idle time.Duration, onError func(error)) {
	m := &sqspoll.Mapping{Queue: q.Client, QueueURL: q.URL, QueueARN: sqslocal.ARN(DeliveriesQueue), BatchSize: 10,
		Handler: sqspoll.Handler(send)}
	m.Run(ctx, idle, onError)
}
