package lambdalocal_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sqslocal"
)

func setup(t *testing.T, bodies ...string) (*sqs.Client, string, *sqslocal.Clock) {
	t.Helper()
	clk := sqslocal.NewClock(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	srv, err := sqslocal.Start(sqslocal.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := sqs.New(sqs.Options{Region: sqslocal.Region, BaseEndpoint: aws.String(srv.URL()), Credentials: credentials.NewStaticCredentialsProvider("l", "l", "")})
	q, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("q"), Attributes: map[string]string{"VisibilityTimeout": "30"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies {
		if _, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	return c, *q.QueueUrl, clk
}

// bodies is a handler that records what it saw and reports the messages
// whose body is in fail.
func bodies(seen *[]string, fail ...string) lambdalocal.SQSHandler {
	return func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, r := range ev.Records {
			*seen = append(*seen, r.Body)
			for _, f := range fail {
				if r.Body == f {
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
				}
			}
		}
		return resp, nil
	}
}

// Reported messages stay and come back after their visibility timeout;
// the others are deleted.
func TestReportedFailuresStayTheRestIsDeleted(t *testing.T) {
	c, url, clk := setup(t, "a", "b", "c")
	var seen []string
	m := &lambdalocal.SQSMapping{Queue: c, QueueURL: url, QueueARN: sqslocal.ARN("q"), Handler: bodies(&seen, "b")}
	if n, err := m.Once(t.Context()); n != 3 || err != nil {
		t.Fatalf("first batch: %d %v", n, err)
	}
	if n, _ := m.Once(t.Context()); n != 0 {
		t.Fatal("a reported message came back before its visibility timeout")
	}
	clk.Advance(30 * time.Second)
	seen = nil
	m.Handler = bodies(&seen)
	if n, err := m.Once(t.Context()); n != 1 || err != nil || seen[0] != "b" {
		t.Fatalf("after the timeout: %d %v %v, want b alone", n, err, seen)
	}
	clk.Advance(time.Hour)
	if n, _ := m.Once(t.Context()); n != 0 {
		t.Error("a handled message is still in the queue")
	}
}

// A handler error, or a report naming a message not in the batch, leaves
// the whole batch in the queue.
func TestAFailedBatchStaysWhole(t *testing.T) {
	for name, h := range map[string]lambdalocal.SQSHandler{
		"error": func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, errors.New("boom")
		},
		"unknown id": func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "nope"}}}, nil
		},
	} {
		c, url, clk := setup(t, "a", "b")
		m := &lambdalocal.SQSMapping{Queue: c, QueueURL: url, Handler: h}
		if _, err := m.Once(t.Context()); !errors.Is(err, lambdalocal.ErrSQSBatchFailed) {
			t.Errorf("%s: %v", name, err)
		}
		clk.Advance(30 * time.Second)
		var seen []string
		m.Handler = bodies(&seen)
		if n, _ := m.Once(t.Context()); n != 2 {
			t.Errorf("%s: %d messages came back, want the whole batch", name, n)
		}
	}
}

func TestEventCarriesTheMappingsFields(t *testing.T) {
	c, url, _ := setup(t, "x")
	var got events.SQSMessage
	m := &lambdalocal.SQSMapping{Queue: c, QueueURL: url, QueueARN: sqslocal.ARN("q"), BatchSize: 1,
		Handler: func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			got = ev.Records[0]
			return events.SQSEventResponse{}, nil
		}}
	if _, err := m.Once(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got.Body != "x" || got.EventSource != "aws:sqs" || got.EventSourceARN != sqslocal.ARN("q") ||
		got.Attributes["ApproximateReceiveCount"] != "1" || got.ReceiptHandle == "" || got.MessageId == "" {
		t.Errorf("%+v", got)
	}
}

// Run hands every batch on until its context ends, the messages sent
// while it polls included.
func TestRunPollsUntilCancelled(t *testing.T) {
	c, url, _ := setup(t, "a", "b", "c")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var seen []string
	m := &lambdalocal.SQSMapping{Queue: c, QueueURL: url, BatchSize: 2, Handler: func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range ev.Records {
			seen = append(seen, r.Body)
		}
		if len(seen) == 3 {
			_, _ = c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("d")})
		}
		if len(seen) == 4 {
			cancel()
		}
		return events.SQSEventResponse{}, nil
	}}
	done := make(chan struct{})
	go func() { m.Run(ctx, time.Millisecond, func(err error) { t.Error(err) }); close(done) }()
	<-done
	if len(seen) != 4 {
		t.Errorf("handled %v", seen)
	}
}

// Run invokes up to MaximumConcurrency batches at once: with two, a second
// batch is handled while the first is still in its handler, and every
// message is handled once the handlers return.
func TestRunInvokesUpToMaximumConcurrencyAtOnce(t *testing.T) {
	c, url, _ := setup(t, "a", "b", "c")
	release := make(chan struct{})
	entered := make(chan string, 3)
	m := &lambdalocal.SQSMapping{Queue: c, QueueURL: url, BatchSize: 1, MaximumConcurrency: 2,
		Handler: func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			entered <- ev.Records[0].Body
			<-release
			return events.SQSEventResponse{}, nil
		}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { m.Run(ctx, time.Millisecond, nil); close(done) }()
	first, second := <-entered, <-entered // both in their handlers at once
	close(release)
	third := <-entered
	cancel()
	<-done
	if got := []string{first, second, third}; len(got) != 3 || first == second || second == third || first == third {
		t.Errorf("handled %v, want each of a, b, c once", got)
	}
}
