package sqslocal_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"contentapi/shared/local/sqslocal"
)

func start(t *testing.T) (*sqslocal.Server, *sqs.Client, *sqslocal.Clock) {
	t.Helper()
	clk := sqslocal.NewClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	srv, err := sqslocal.Start(sqslocal.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client := sqs.New(sqs.Options{
		Region:       sqslocal.Region,
		BaseEndpoint: aws.String(srv.URL()),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
	return srv, client, clk
}

func receive(t *testing.T, c *sqs.Client, url string) []types.Message {
	t.Helper()
	out, err := c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Messages
}

// The SDK's own client sends, receives (checking each body's MD5) and
// deletes; a received message stays hidden for the queue's visibility
// timeout, then comes back counted and under a new receipt handle, and the
// old handle no longer deletes it.
func TestSendReceiveVisibilityDelete(t *testing.T) {
	_, c, clk := start(t)
	q, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{
		QueueName: aws.String("hooks"), Attributes: map[string]string{"VisibilityTimeout": "60"},
	})
	if err != nil {
		t.Fatal(err)
	}
	url := *q.QueueUrl
	if _, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	first := receive(t, c, url)
	if len(first) != 1 || *first[0].Body != `{"n":1}` || first[0].Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("first receive: %+v", first)
	}
	if again := receive(t, c, url); len(again) != 0 {
		t.Fatalf("a message in flight was received again: %+v", again)
	}
	clk.Advance(60 * time.Second)
	second := receive(t, c, url)
	if len(second) != 1 || second[0].Attributes["ApproximateReceiveCount"] != "2" || *second[0].ReceiptHandle == *first[0].ReceiptHandle {
		t.Fatalf("after the visibility timeout: %+v", second)
	}
	var ae interface{ ErrorCode() string }
	_, err = c.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: first[0].ReceiptHandle})
	if !errors.As(err, &ae) || ae.ErrorCode() != "ReceiptHandleIsInvalid" {
		t.Errorf("delete with a stale handle: %v", err)
	}
	if _, err := c.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: second[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if left := receive(t, c, url); len(left) != 0 {
		t.Errorf("a deleted message came back: %+v", left)
	}
}

// ChangeMessageVisibility is how the webhook sender backs off: the message
// returns exactly when its new timeout ends, not at the queue's.
func TestChangeMessageVisibilityBacksOff(t *testing.T) {
	_, c, clk := start(t)
	q, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("hooks")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessageBatch(t.Context(), &sqs.SendMessageBatchInput{QueueUrl: q.QueueUrl, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("a")}, {Id: aws.String("b"), MessageBody: aws.String("b")},
	}}); err != nil {
		t.Fatal(err)
	}
	got := receive(t, c, *q.QueueUrl)
	if len(got) != 2 {
		t.Fatalf("%d messages", len(got))
	}
	if _, err := c.ChangeMessageVisibility(t.Context(), &sqs.ChangeMessageVisibilityInput{
		QueueUrl: q.QueueUrl, ReceiptHandle: got[0].ReceiptHandle, VisibilityTimeout: 300,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ChangeMessageVisibility(t.Context(), &sqs.ChangeMessageVisibilityInput{
		QueueUrl: q.QueueUrl, ReceiptHandle: got[1].ReceiptHandle, VisibilityTimeout: 43201,
	}); err == nil {
		t.Error("a visibility over SQS's 12 hours was taken")
	}
	clk.Advance(299 * time.Second)
	if back := receive(t, c, *q.QueueUrl); len(back) != 1 || *back[0].Body != "b" {
		t.Fatalf("at 299 s: %+v, want only b (queue default 30 s)", back)
	}
	clk.Advance(time.Second)
	if back := receive(t, c, *q.QueueUrl); len(back) != 1 || *back[0].Body != "a" {
		t.Fatalf("at 300 s: %+v, want a", back)
	}
}

// A message received maxReceiveCount times without being deleted moves to
// the dead-letter queue, body and id kept.
func TestRedriveToTheDeadLetterQueue(t *testing.T) {
	srv, c, clk := start(t)
	dlq, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("hooks-dlq")})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{
		QueueUrl: dlq.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil || attrs.Attributes["QueueArn"] != sqslocal.ARN("hooks-dlq") {
		t.Fatalf("%v %v", attrs, err)
	}
	q, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("hooks"), Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"` + sqslocal.ARN("hooks-dlq") + `","maxReceiveCount":"3"}`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if *q.QueueUrl != srv.QueueURL("hooks") {
		t.Errorf("queue url %s", *q.QueueUrl)
	}
	sent, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("poison")})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		got := receive(t, c, *q.QueueUrl)
		if len(got) != 1 || got[0].Attributes["ApproximateReceiveCount"] != strconv.Itoa(i) {
			t.Fatalf("receive %d: %+v", i, got)
		}
		clk.Advance(30 * time.Second)
	}
	if got := receive(t, c, *q.QueueUrl); len(got) != 0 {
		t.Fatalf("a 4th receive got %+v", got)
	}
	dead := receive(t, c, *dlq.QueueUrl)
	if len(dead) != 1 || *dead[0].Body != "poison" || *dead[0].MessageId != *sent.MessageId {
		t.Fatalf("dead-letter queue: %+v", dead)
	}
	if _, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("x"), Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"` + sqslocal.ARN("nowhere") + `","maxReceiveCount":3}`,
	}}); err == nil {
		t.Error("a redrive to a missing queue was taken")
	}
}

func TestUnknownQueue(t *testing.T) {
	srv, c, _ := start(t)
	_, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(srv.QueueURL("none")), MessageBody: aws.String("x")})
	var missing *types.QueueDoesNotExist
	if !errors.As(err, &missing) {
		t.Errorf("%v, want QueueDoesNotExist", err)
	}
}

// What sqslocal does not serve is refused, not ignored.
func TestLongPollingIsRefused(t *testing.T) {
	_, c, _ := start(t)
	q, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("hooks")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 5}); err == nil {
		t.Error("a long poll was answered as a short one")
	}
}

// A message sent with DelaySeconds stays hidden until its delay ends.
func TestDelaySeconds(t *testing.T) {
	_, c, clk := start(t)
	q, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("hooks")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("later"), DelaySeconds: 5}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(4 * time.Second)
	if got := receive(t, c, *q.QueueUrl); len(got) != 0 {
		t.Fatalf("received during its delay: %+v", got)
	}
	clk.Advance(time.Second)
	if got := receive(t, c, *q.QueueUrl); len(got) != 1 {
		t.Fatalf("not received after its delay: %+v", got)
	}
}
