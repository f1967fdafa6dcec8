package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/store"
)

// NewAccountCaller calls a as a new account of its own, named account,
// with a read and write key, so a part's records and quotas stay apart
// from the others'.
func NewAccountCaller(ctx context.Context, a *app.App, plain *dynamodb.Client, keysTable, account string) (*Caller, error) {
	key, _, err := auth.NewKeys(plain, keysTable, auth.PublicChecksum).Create(ctx, account,
		[]auth.Scope{auth.ScopeRead, auth.ScopeWrite}, time.Time{})
	if err != nil {
		return nil, err
	}
	return NewCaller(a, key)
}

// PendingEvent creates a document of account left to the queue and returns
// the stream event that announces it, as its table's stream would.
func PendingEvent(ctx context.Context, c *Caller, db *dynamodb.Client, table, account string, form url.Values) (events.DynamoDBEvent, error) {
	ans := c.Do("POST", "/api/v1/documents", form, map[string]string{"Prefer": "respond-async"})
	if ans.Status != 201 {
		return events.DynamoDBEvent{}, fmt.Errorf("create: %d %.300s", ans.Status, ans.Raw)
	}
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: store.Item{store.AttrAccount: &types.AttributeValueMemberS{Value: account},
			store.AttrID: &types.AttributeValueMemberN{Value: strconv.FormatInt(ans.ID(), 10)}}})
	if err != nil {
		return events.DynamoDBEvent{}, err
	}
	return lambdalocal.StreamInsert(table, out.Item), nil
}

// Generated is what is wrong with a create's answer ("" when it holds its
// content).
func Generated(a Answer) string {
	var d struct {
		Generation struct{ Status string }
		Result     *string
	}
	if a.Status != 201 || json.Unmarshal(a.Data, &d) != nil || d.Generation.Status != "done" || d.Result == nil {
		return fmt.Sprintf("create: %d %.300s", a.Status, a.Raw)
	}
	return ""
}
