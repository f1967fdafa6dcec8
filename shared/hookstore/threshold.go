package hookstore

// The deliveries limit's usage.threshold events. The month's deliveries are
// counted on the account's counter item here, in a table with no stream
// (and no reader to give it), so the sender tells their crossings itself,
// where it counts them: Admit returns the thresholds its write found
// reached and not yet told; the sender fixes each one's event (Found),
// publishes it, then marks it told (Told). Every finder of an untold
// crossing (two invocations at once, a retry, the next admission after a
// telling that failed) publishes the event Found recorded first, with the
// same time and usage, so its deliveries are recorded once
// (AddDelivery); and a crossing is marked only once it is published, so
// one whose telling failed is told by the next admission.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/quota"
)

// foundPrefix names, before a crossing's mark, the attribute that holds
// the crossing as first found until it is told.
const foundPrefix = "found_"

// found is a crossing as first found: the usage then and when.
type found struct {
	Used  int64 `dynamodbav:"used"`
	Limit int64 `dynamodbav:"limit"`
	At    int64 `dynamodbav:"at"` // Unix ms
}

// crossings are the thresholds of the deliveries limit that the counter
// item, as a write at period left it, shows reached and not told.
func (s *Store) crossings(item map[string]types.AttributeValue, period quota.Period) []quota.Crossing {
	cs, err := s.Quota.Crossings(item, period)
	if err != nil {
		return nil // an item that does not read: the limit's own check says so
	}
	return cs
}

// ErrTold is a crossing found that another finder has told meanwhile.
var ErrTold = errors.New("hookstore: the usage threshold is told already")

// Found records that the account's usage reached c at at, unless a finder
// before did, and returns the crossing as first found, and when: the
// event every finder publishes. Its write, retried, finds its own record.
// A crossing told meanwhile is ErrTold (its record is gone with the
// telling, and a new one would make a second event).
func (s *Store) Found(ctx context.Context, account string, c quota.Crossing, at time.Time) (quota.Crossing, time.Time, error) {
	name := expression.Name(foundPrefix + c.MarkAttr())
	first, err := attributevalue.Marshal(found{Used: c.Used, Limit: c.Limit, At: at.UnixMilli()})
	if err != nil {
		return c, at, err
	}
	expr, err := expression.NewBuilder().WithUpdate(expression.Set(name, expression.IfNotExists(name, expression.Value(first)))).
		WithCondition(expression.Name(c.MarkAttr()).AttributeNotExists()).Build()
	if err != nil {
		return c, at, err
	}
	out, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Table), Key: key(account, counterSK), UpdateExpression: expr.Update(),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	var told *types.ConditionalCheckFailedException
	if errors.As(err, &told) {
		return c, at, ErrTold
	}
	if err != nil {
		return c, at, fmt.Errorf("hookstore: record a usage threshold found: %w", err)
	}
	var f found
	if err := attributevalue.Unmarshal(out.Attributes[foundPrefix+c.MarkAttr()], &f); err != nil {
		return c, at, fmt.Errorf("hookstore: a usage threshold found: %w", err)
	}
	c.Used, c.Limit = f.Used, f.Limit
	return c, time.UnixMilli(f.At).UTC(), nil
}

// Told marks c told once its event is published: its mark set, what Found
// recorded removed, with the marks of the same limit and share of the
// months before. A mark already there (this write's, its answer lost, or
// another finder's) is success.
func (s *Store) Told(ctx context.Context, account string, c quota.Crossing) error {
	mark := expression.Name(c.MarkAttr())
	update := expression.Set(mark, expression.Value(c.Used)).Remove(expression.Name(foundPrefix + c.MarkAttr()))
	for _, earlier := range c.EarlierMarks() {
		update = update.Remove(expression.Name(earlier)).Remove(expression.Name(foundPrefix + earlier))
	}
	expr, err := expression.NewBuilder().WithUpdate(update).WithCondition(mark.AttributeNotExists()).Build()
	if err != nil {
		return err
	}
	err = s.itemWrite(account, counterSK)(ctx, expr)
	var marked *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &marked) {
		return fmt.Errorf("hookstore: mark a usage threshold told: %w", err)
	}
	return nil
}
