package hookstore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/quota"
)

// The account's earlier months of deliveries, as a resource's table keeps
// its kinds' (shared/quota, history.go): where the policy keeps History,
// the first Admit after a month ends moves the month off the counter item
// to the history item ("history"), by the same three conditional writes.

// historySK is the sort key of the account's history item.
const historySK = "history"

// archive moves the months before now's that counter, as Admit's write
// returned it, still holds; a move that stops part way is finished by a
// later Admit, and every state reads the same.
func (s *Store) archive(ctx context.Context, account string, counter map[string]types.AttributeValue, now time.Time) {
	if !s.Quota.History || counter == nil {
		return
	}
	claims, err := s.Quota.Leftovers(counter, quota.PeriodOf(now), newToken())
	if err != nil {
		return
	}
	for _, c := range claims {
		if c.Move(ctx, s.itemWrite(account, counterSK), s.itemWrite(account, historySK)) != nil {
			return
		}
	}
}

// keepLimits records the limits counter says are in force as those of the
// earlier months kept that have none recorded yet, on the history item
// (quota.Policy.KeepLimits).
func (s *Store) keepLimits(ctx context.Context, account string, counter map[string]types.AttributeValue) error {
	return s.Quota.KeepLimits(ctx, counter, quota.PeriodOf(s.now()), s.itemWrite(account, historySK))
}

// itemWrite makes conditional writes on one of the account's items.
func (s *Store) itemWrite(account, sk string) quota.Write {
	return func(ctx context.Context, expr expression.Expression) error {
		_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.Table), Key: key(account, sk), UpdateExpression: expr.Update(),
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		})
		return err
	}
}

// UsageIn is the account's deliveries in period, a month before the
// current one that the history keeps, and the limit in force as it ended:
// a strongly consistent read of the counter item and of the history item.
func (s *Store) UsageIn(ctx context.Context, account string, period quota.Period) (map[quota.Kind]quota.Meter, error) {
	var items [2]map[string]types.AttributeValue
	for i, sk := range []string{counterSK, historySK} {
		out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.Table), Key: key(account, sk), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return nil, fmt.Errorf("hookstore: usage: %w", err)
		}
		items[i] = out.Item
	}
	return s.Quota.ReadEarlier(items[0], items[1], period)
}
