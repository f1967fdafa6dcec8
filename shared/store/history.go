package store

import (
	"context"

	ddbexpr "github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/quota"
)

// The account's earlier months: where a policy keeps History, the store
// moves each ended month's usage off the counter item to the history item,
// by the three conditional writes shared/quota's history.go describes. The
// move rides on the counter writes that return the whole counter (a
// create's, a regenerate's, a refund's, a generation's words, the reads):
// only the first of them after a month ends finds the month there, so a
// create's own write does not grow, and a month costs its three writes
// once, whoever makes them (docs/accounts.md, "Earlier months").

// historyID is the id of the account's history item, beside the counter
// (0), the spend item (-1) and the spend ledger (-2).
const historyID int64 = -3

// maxMovesPerWrite bounds the months one counter write moves: one, unless
// an account was idle across several (each move is three writes).
const maxMovesPerWrite = 3

// archive moves the months before the current one that counter, as a write
// just returned it, still holds, when the request has the time. A move that
// stops part way stays on the counter as its claim, for the next write to
// finish; every state reads the same (quota.Policy.ReadEarlier).
func (t *Table) archive(ctx context.Context, account string, counter Item) {
	if !t.Quota.History || counter == nil || !hasTime(ctx, settleReserve) {
		return
	}
	claims, err := t.Quota.Leftovers(counter, quota.PeriodOf(t.Now()), NewToken(t.Now()))
	if err != nil {
		return
	}
	for _, c := range claims[:min(len(claims), maxMovesPerWrite)] {
		if err := t.moveMonth(ctx, account, c); err != nil {
			return
		}
	}
}

// moveMonth is one month's move (quota.Claim.Move).
func (t *Table) moveMonth(ctx context.Context, account string, c quota.Claim) error {
	return c.Move(ctx, t.itemWrite(account, counterID), t.itemWrite(account, historyID))
}

// keepLimits records the limits counter says are in force as those of the
// earlier months kept that have none recorded yet, on the history item
// (quota.Policy.KeepLimits), so that a month in which nothing was used
// keeps the limits it ended with too.
func (t *Table) keepLimits(ctx context.Context, account string, counter Item) error {
	return t.Quota.KeepLimits(ctx, counter, quota.PeriodOf(t.Now()), t.itemWrite(account, historyID))
}

// itemWrite makes conditional writes on one of the account's items.
func (t *Table) itemWrite(account string, id int64) quota.Write {
	return func(ctx context.Context, expr ddbexpr.Expression) error {
		_, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 &t.name,
			Key:                       key(account, id),
			UpdateExpression:          expr.Update(),
			ConditionExpression:       expr.Condition(),
			ExpressionAttributeNames:  expr.Names(),
			ExpressionAttributeValues: expr.Values(),
		})
		return err
	}
}

// UsageIn is the usage of the table's kinds in period, a month before the
// current one that the history keeps, and the limits in force as it ended:
// a strongly consistent read of the counter item and of the history item.
func (t *Table) UsageIn(ctx context.Context, account string, period quota.Period) (map[quota.Kind]quota.Meter, error) {
	items := make([]Item, 2)
	for i, id := range []int64{counterID, historyID} {
		out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &t.name, Key: key(account, id), ConsistentRead: ptr(true),
		})
		if err != nil {
			return nil, err
		}
		items[i] = out.Item
	}
	return t.Quota.ReadEarlier(items[0], items[1], period)
}
