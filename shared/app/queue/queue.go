// Package queue is the webhooks' lanes' queue service, SQS, for the
// functions that publish or send deliveries (app.Parts.Queue): only they
// link SQS's client.
package queue

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/app"
	"contentapi/shared/awsenv"
	"contentapi/shared/hooksender"
)

// SQS is SQS's client as the lanes use it (hooksender.Queue).
type SQS struct{ Client *sqs.Client }

// Send queues body at url, visible after delaySeconds.
func (q SQS) Send(ctx context.Context, url, body string, delaySeconds int32) error {
	_, err := q.Client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(url), MessageBody: aws.String(body), DelaySeconds: delaySeconds,
	})
	return err
}

// Hide sets the visibility timeout of the message of receipt at url.
func (q SQS) Hide(ctx context.Context, url, receipt string, seconds int32) error {
	_, err := q.Client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(url), ReceiptHandle: aws.String(receipt), VisibilityTimeout: seconds,
	})
	return err
}

// New is the lanes' queue service: SQS in the function's region (at
// SQS_ENDPOINT locally), each call retried a bounded number of times,
// each attempt bounded in time.
func New(cfg app.Config) (hooksender.Queue, error) {
	local := cfg.Webhooks.SQSEndpoint != ""
	creds, err := awsenv.Credentials(local)
	if err != nil {
		return nil, err
	}
	opts := sqs.Options{
		Region: cfg.Region, Credentials: creds,
		HTTPClient: awshttp.NewBuildableClient().WithTimeout(3 * time.Second),
		Retryer:    awsenv.Retryer(3, 500*time.Millisecond),
	}
	if local {
		opts.BaseEndpoint = aws.String(cfg.Webhooks.SQSEndpoint)
	}
	return SQS{Client: sqs.New(opts)}, nil
}
