package ddblocal_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"contentapi/shared/local/ddblocal"
)

// Each fault does to a PutItem what it says: whether the client hears an
// answer, and whether DynamoDB Local applied the write.
func TestFaults(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	table := env.Tables["RateLimitTable"]
	testCases := []struct {
		fault    ddblocal.Fault
		answered bool
		code     string // the error the client sees, when it sees one
		applied  bool
	}{
		{ddblocal.PassCall, true, "", true},
		{ddblocal.FailCall, true, "InternalServerError", false},
		{ddblocal.ThrottleCall, true, "ProvisionedThroughputExceededException", false},
		{ddblocal.DropCall, false, "", false},
		{ddblocal.LoseAnswer, false, "", true},
	}
	for i, tc := range testCases {
		t.Run(tc.fault.String(), func(t *testing.T) {
			p := ddblocal.NewFaultProxy(env.Endpoint)
			defer p.Close()
			client := dynamodb.New(env.Client.Options(), func(o *dynamodb.Options) {
				o.BaseEndpoint = aws.String(p.URL)
				o.Retryer = aws.NopRetryer{} // one attempt: the fault's own effect
			})
			p.Inject(ddblocal.MatchOp("PutItem"), tc.fault, 1)
			err := put(client, table, fmt.Sprint("k", i))
			var api smithy.APIError
			switch {
			case tc.code != "" && (!errors.As(err, &api) || api.ErrorCode() != tc.code):
				t.Errorf("error %v, want %s", err, tc.code)
			case tc.code == "" && tc.answered && err != nil:
				t.Errorf("error %v", err)
			case !tc.answered && (err == nil || errors.As(err, &api)):
				t.Errorf("error %v, want the connection lost", err)
			}
			if got := exists(t, env.Client, table, fmt.Sprint("k", i)); got != tc.applied {
				t.Errorf("applied %v, want %v", got, tc.applied)
			}
			if calls := p.Calls(); len(calls) != 1 || calls[0].Op != "PutItem" || calls[0].Table != table {
				t.Errorf("calls %+v", calls)
			}
		})
	}
}

// Hold keeps a write until released and then applies it, after its client
// gave up; Down(Hang) applies nothing.
func TestHoldAndHang(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	table := env.Tables["RateLimitTable"]
	p := ddblocal.NewFaultProxy(env.Endpoint)
	defer p.Close()
	client := dynamodb.New(env.Client.Options(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(p.URL)
		o.Retryer = aws.NopRetryer{}
	})
	held := p.Inject(ddblocal.MatchOp("PutItem"), ddblocal.HoldCall, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := putCtx(ctx, client, table, "held"); err == nil {
		t.Fatal("a held write was answered")
	}
	if req := <-held.Held(); !req.Has(`"held"`) {
		t.Fatalf("held %s", req.Body)
	}
	if exists(t, env.Client, table, "held") {
		t.Fatal("applied before release")
	}
	held.Release()
	p.Wait()
	if !exists(t, env.Client, table, "held") {
		t.Fatal("not applied after release")
	}

	p.Down(ddblocal.HangCall)
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := putCtx(ctx, client, table, "hung"); err == nil {
		t.Fatal("a hung write was answered")
	}
	p.Up()
	p.Wait()
	if exists(t, env.Client, table, "hung") {
		t.Fatal("a hung write was applied")
	}
	if err := put(client, table, "after"); err != nil {
		t.Fatalf("after Up: %v", err)
	}
}

func put(c *dynamodb.Client, table, key string) error {
	return putCtx(context.Background(), c, table, key)
}

func putCtx(ctx context.Context, c *dynamodb.Client, table, key string) error {
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table,
		Item: map[string]types.AttributeValue{"window": &types.AttributeValueMemberS{Value: key}}})
	return err
}

func exists(t *testing.T, c *dynamodb.Client, table, key string) bool {
	t.Helper()
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"window": &types.AttributeValueMemberS{Value: key}}})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Item) > 0
}
