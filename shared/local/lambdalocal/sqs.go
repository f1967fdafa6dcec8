// The SQS mapping: SQSMapping is Lambda's SQS event source mapping for the local
// stack and tests: it receives batches from a queue, hands each to a
// function's handler as an events.SQSEvent, and deletes what the handler
// took, as the mapping does with ReportBatchItemFailures: a message the
// handler reports failed stays in the queue, to come back when its
// visibility timeout ends (which the handler may have changed); a handler
// error, or a report naming a message not in the batch, leaves the whole
// batch there. Run invokes up to MaximumConcurrency batches at once, as the
// mapping's ScalingConfig caps them, and no more than a function's
// reserved concurrency allows all its mappings together (Reserved).

package lambdalocal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
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
	// MaximumConcurrency is the most invocations Run makes at once (the
	// mapping's ScalingConfig); 1 when 0.
	MaximumConcurrency int
	// Reserved, when not nil, caps the invocations of every mapping given
	// it together: the function's reserved concurrency, one token an
	// invocation (a buffered channel of that capacity).
	Reserved chan struct{}
	Handler  SQSHandler
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

// Run polls until ctx ends with MaximumConcurrency pollers, each
// invoking one batch at a time and waiting idle after an empty receive; a
// failed batch is reported to onError (nil: ignored) and polling goes on.
// It returns when every invocation has returned.
func (m *SQSMapping) Run(ctx context.Context, idle time.Duration, onError func(error)) {
	var pollers sync.WaitGroup
	for range max(m.MaximumConcurrency, 1) {
		pollers.Go(func() { m.poll(ctx, idle, onError) })
	}
	pollers.Wait()
}

func (m *SQSMapping) poll(ctx context.Context, idle time.Duration, onError func(error)) {
	for ctx.Err() == nil {
		n, err := m.reserved(ctx)
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

// reserved is Once within the function's reserved concurrency.
func (m *SQSMapping) reserved(ctx context.Context) (int, error) {
	if m.Reserved != nil {
		select {
		case m.Reserved <- struct{}{}:
			defer func() { <-m.Reserved }()
		case <-ctx.Done():
			return 0, nil
		}
	}
	return m.Once(ctx)
}
