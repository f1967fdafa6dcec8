package stack

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/app"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/sqslocal"
)

// The queues take the template's names.
const (
	WebhookDeliveriesQueue = "WebhookDeliveries"
	WebhookDeliveriesDLQ   = "WebhookDeliveriesDLQ"
)

// WebhookQueue is the running deliveries' queue.
type WebhookQueue struct {
	Server *sqslocal.Server
	Client *sqs.Client
	URL    string
	batch  int
}

// WebhookQueueSettings are the queue's and its mapping's, as template.yaml
// sets them.
type WebhookQueueSettings struct {
	// Visibility is the queue's visibility timeout, in seconds;
	// MaxReceives the receives after which a message goes to the
	// dead-letter queue; BatchSize the most messages the mapping hands the
	// sender at once.
	Visibility, MaxReceives, BatchSize int
}

// WebhookQueueSettingsFrom reads the settings of the queue and of the
// sender's mapping from the template.
func WebhookQueueSettingsFrom(tmpl *sam.Template) (WebhookQueueSettings, error) {
	q, ok := tmpl.Resources[WebhookDeliveriesQueue]
	if !ok {
		return WebhookQueueSettings{}, fmt.Errorf("stack: the template has no %s", WebhookDeliveriesQueue)
	}
	sender, err := tmpl.Function(app.SenderFunction)
	if err != nil {
		return WebhookQueueSettings{}, err
	}
	redrive, _ := q.Properties["RedrivePolicy"].(map[string]any)
	var events map[string]any
	for _, ev := range sender.Properties["Events"].(map[string]any) {
		if e, _ := ev.(map[string]any); e["Type"] == "SQS" {
			events, _ = e["Properties"].(map[string]any)
		}
	}
	var s WebhookQueueSettings
	for _, v := range []struct {
		into  *int
		value any
		name  string
	}{{&s.Visibility, q.Properties["VisibilityTimeout"], "VisibilityTimeout"},
		{&s.MaxReceives, redrive["maxReceiveCount"], "RedrivePolicy.maxReceiveCount"},
		{&s.BatchSize, events["BatchSize"], app.SenderFunction + "'s SQS event's BatchSize"}} {
		n, err := strconv.Atoi(fmt.Sprint(v.value))
		if err != nil || n <= 0 {
			return WebhookQueueSettings{}, fmt.Errorf("stack: %s in the template is %v, not a positive number", v.name, v.value)
		}
		*v.into = n
	}
	return s, nil
}

// StartWebhookQueue serves the queues on addr ("" for a free port on
// 127.0.0.1), set up with the template's settings: the visibility timeout
// and the redrive to the dead-letter queue.
func StartWebhookQueue(ctx context.Context, addr string, s WebhookQueueSettings) (*WebhookQueue, error) {
	srv, err := sqslocal.Start(sqslocal.Options{Addr: addr})
	if err != nil {
		return nil, err
	}
	c := sqs.New(sqs.Options{Region: sqslocal.Region, BaseEndpoint: aws.String(srv.URL()),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(WebhookDeliveriesDLQ)}); err != nil {
		srv.Close()
		return nil, err
	}
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(WebhookDeliveriesQueue), Attributes: map[string]string{
		"VisibilityTimeout": strconv.Itoa(s.Visibility),
		"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, sqslocal.ARN(WebhookDeliveriesDLQ), s.MaxReceives),
	}})
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &WebhookQueue{Server: srv, Client: c, URL: *q.QueueUrl, batch: s.BatchSize}, nil
}

// Close stops the server.
func (q *WebhookQueue) Close() error { return q.Server.Close() }

// Vars are the functions' settings that point at the queue.
func (q *WebhookQueue) Vars() map[string]string {
	return map[string]string{app.EnvWebhookQueue: q.URL, app.EnvSQSEndpoint: q.Server.URL()}
}

// Run feeds send from the queue, as the template's mapping does in AWS,
// until ctx ends, looking again after idle when the queue was empty.
func (q *WebhookQueue) Run(ctx context.Context, send app.SenderEntry, idle time.Duration, onError func(error)) {
	m := &lambdalocal.SQSMapping{Queue: q.Client, QueueURL: q.URL, QueueARN: sqslocal.ARN(WebhookDeliveriesQueue), BatchSize: int32(q.batch),
		Handler: lambdalocal.SQSHandler(send)}
	m.Run(ctx, idle, onError)
}
