// The SQS mapping: SQSMapping is Lambda's SQS event source mapping for the local
// stack and tests: it receives batches from a queue, hands each to a
// function's handler as an events.SQSEvent, and deletes what the handler
// took, as the mapping does with ReportBatchItemFailures: a message the
// handler reports failed stays in the queue, to come back when its
// visibility timeout ends (which the handler may have changed); a handler
// error, or a report naming a message not in the batch, leaves the whole
// batch there.

package lambdalocal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQSHandler is a function's SQS entry point.
type SQSHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// SQSMapping joins a queue to a handler.
type SQSMapping struct {
	Queue    *sqs.Client
	QueueURL string
	// QueueARN is the events' EventSourceARN.
	QueueARN string
	// BatchSize is the most messages per invocation (1 to 10); 10 when 0.
	BatchSize int32
	Handler   SQSHandler
}

// ErrSQSBatchFailed is a batch left whole in the queue: the handler failed
// or reported a message that was not in it.
var ErrSQSBatchFailed = errors.New("lambdalocal: the batch failed as a whole")

// Once receives one batch and invokes the handler with it; it returns how
// many messages the batch held (0 when none was visible).
func (m *SQSMapping) Once(ctx context.Context) (int, error) {
	out, err := m.Queue.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(m.QueueURL), MaxNumberOfMessages: cmp.Or(m.BatchSize, 10),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil || len(out.Messages) == 0 {
		return 0, err
	}
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(out.Messages))}
	for i, msg := range out.Messages {
		ev.Records[i] = events.SQSMessage{
			MessageId: aws.ToString(msg.MessageId), ReceiptHandle: aws.ToString(msg.ReceiptHandle),
			Body: aws.ToString(msg.Body), Md5OfBody: aws.ToString(msg.MD5OfBody), Attributes: msg.Attributes,
			EventSource: "aws:sqs", EventSourceARN: m.QueueARN,
		}
	}
	resp, err := m.Handler(ctx, ev)
	if err != nil {
		return len(ev.Records), fmt.Errorf("%w: %w", ErrSQSBatchFailed, err)
	}
	keep := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		keep[f.ItemIdentifier] = true
	}
	var entries []types.DeleteMessageBatchRequestEntry
	for i, r := range ev.Records {
		if keep[r.MessageId] {
			delete(keep, r.MessageId)
			continue
		}
		entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: aws.String(r.ReceiptHandle)})
	}
	if len(keep) > 0 {
		return len(ev.Records), fmt.Errorf("%w: the handler reported messages not in the batch", ErrSQSBatchFailed)
	}
	if len(entries) == 0 {
		return len(ev.Records), nil
	}
	del, err := m.Queue.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(m.QueueURL), Entries: entries})
	if err == nil && len(del.Failed) > 0 {
		err = fmt.Errorf("lambdalocal: %d messages not deleted", len(del.Failed))
	}
	return len(ev.Records), err
}

// Run polls until ctx ends, waiting idle between empty receives; a
// failed batch is reported to onError (nil: ignored) and polling goes on.
func (m *SQSMapping) Run(ctx context.Context, idle time.Duration, onError func(error)) {
	for ctx.Err() == nil {
		n, err := m.Once(ctx)
		if err != nil && onError != nil && ctx.Err() == nil {
			onError(err)
		}
		if n > 0 && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(idle):
		}
	}
}
