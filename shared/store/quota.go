package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	ddbexpr "github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/generation"
	"contentapi/shared/quota"
)

// compensationTimeout bounds the writes that give usage back after a
// failed create, which run even when the request's own deadline has passed:
// a create that failed for being slow must not stay counted for that.
const compensationTimeout = 3 * time.Second

// counterWrite is one write on the account's counter item: update with
// charge in it. A checked charge the limits refuse is a *records.QuotaError
// and writes nothing.
func (t *Table) counterWrite(ctx context.Context, account string, charge quota.Charge, update ddbexpr.UpdateBuilder) (*dynamodb.UpdateItemOutput, error) {
	expr, err := charge.Build(update)
	if err != nil {
		return nil, err
	}
	out, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &t.name,
		Key:                                 key(account, counterID),
		UpdateExpression:                    expr.Update(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if refused := charge.Exceeded(ccf.Item, t.Now()); refused != nil {
			return nil, refused
		}
	}
	if err == nil {
		t.archive(ctx, account, out.Attributes)
	}
	return out, err
}

// RefundRegenerate gives back what Spend counted for a regenerate whose
// write of the new generation (attempt) did not land, cause being the
// write's error.
func (t *Table) RefundRegenerate(ctx context.Context, account string, id int64, attempt string, charge quota.Charge, cause error) {
	t.refundUnlessLanded(ctx, account, id, charge, cause, func(item Item) bool {
		s, err := StateOf(item)
		return err != nil || s != nil && s.Attempt == attempt
	})
}

// refundUnlessLanded gives charge back unless the write it paid for, which
// failed with cause, landed after all. A write DynamoDB refused (a failed
// condition, a cancelled transaction, the domain's errors made of them)
// wrote nothing; after any other failure (a timeout among them) it may
// have, and a strongly consistent read of the record decides with landed.
// When even that read fails the usage stays counted: one too many in the
// month, never one too few. It runs even when the request's own deadline
// has passed: a write that failed for being slow must not stay counted for
// that.
func (t *Table) refundUnlessLanded(ctx context.Context, account string, id int64, charge quota.Charge, cause error, landed func(Item) bool) {
	if !t.Quota.Counting() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), compensationTimeout)
	defer cancel()
	if !refused(cause) {
		item, err := t.Get(ctx, account, id)
		if err != nil || landed(item) {
			return
		}
	}
	_ = t.Refund(ctx, account, charge)
}

// refused reports an error by which DynamoDB refused a write, so that it
// wrote nothing.
func refused(err error) bool {
	var cancelled *types.TransactionCanceledException
	var ccf *types.ConditionalCheckFailedException
	var inFlight *generation.InFlightError
	return errors.As(err, &cancelled) || errors.As(err, &ccf) || errors.As(err, &inFlight) ||
		errors.Is(err, ErrNotFound) || errors.Is(err, ErrVersionMismatch)
}

// Spend counts one generation that writes no new record, a regenerate,
// against the account's month, in one conditional write on its counter
// item: when the limits allow no more, it is a *records.QuotaError and
// nothing is written. A regenerate that is not started after all gives the
// charge back with Refund.
//
// The regenerate operation calls it after its checks that read (the record
// exists, no generation is under way) and before it writes the record, and
// RefundRegenerate when that write fails.
//
// holds is how many generations' worth the regenerate holds of the
// quota's reserve (Variants).
func (t *Table) Spend(ctx context.Context, account string, holds int64) (quota.Charge, error) {
	charge := t.Quota.Generation(t.Now()).Holding(holds)
	if !t.Quota.Counting() {
		return charge, nil
	}
	out, err := t.counterWrite(ctx, account, charge, ddbexpr.UpdateBuilder{})
	if err != nil {
		return charge, err
	}
	// The worst case of its cost, where a spend limit applies (ledger.go).
	spend, err := t.holdSpend(ctx, account, NewToken(t.Now()), holds, out.Attributes)
	if err != nil {
		undo, cancel := context.WithTimeout(context.WithoutCancel(ctx), compensationTimeout)
		defer cancel()
		_ = t.Refund(undo, account, charge)
		return charge, err
	}
	t.noteUsage(ctx, account, out.Attributes, charge.Period())
	return charge.WithSpendHold(spend), nil
}

// Refund gives back what a charge counted, in the charge's month, whatever
// the limits.
func (t *Table) Refund(ctx context.Context, account string, charge quota.Charge) error {
	if !t.Quota.Counting() {
		return nil
	}
	t.releaseSpend(ctx, account, charge.SpendHold())
	_, err := t.counterWrite(ctx, account, charge.Refund(), ddbexpr.UpdateBuilder{})
	return err
}

// CountUsage adds n of kind to the account's usage this month, whatever the
// limits: the words a generation wrote back. A generation that ends past
// the words limit is kept; the next create or regenerate is refused.
func (t *Table) CountUsage(ctx context.Context, account string, kind quota.Kind, n int64) error {
	if n == 0 || !t.Quota.Counting() {
		return nil
	}
	if !slices.Contains(t.Quota.Kinds(), kind) {
		return fmt.Errorf("store: %s counts no %s", t.name, kind)
	}
	_, err := t.counterWrite(ctx, account, t.Quota.Usage(kind, n, t.Now()), ddbexpr.UpdateBuilder{})
	return err
}

// Hold is gen holding what one generation of charge holds (quota's
// Policy.Reserve, in the charge's month): the record carries it until the
// generation ends, and the tally gives back what it did not use (holds.go).
func (t *Table) Hold(gen generation.State, charge quota.Charge) generation.State {
	gen.Hold, gen.Settled, gen.SpendHold = nil, nil, charge.SpendHold()
	if attr, n := charge.Hold(); n != 0 {
		gen.Hold = &generation.Hold{ID: gen.Attempt, Usage: attr, Held: n}
	}
	return gen
}

// Usage is the account's usage of the table's kinds in period, with the
// limits that apply: one strongly consistent read, so it includes every
// acknowledged create.
func (t *Table) Usage(ctx context.Context, account string, period quota.Period) (map[quota.Kind]quota.Meter, error) {
	expr, err := ddbexpr.NewBuilder().WithProjection(t.Quota.UsageProjection(period, AttrID)).Build()
	if err != nil {
		return nil, err
	}
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                &t.name,
		Key:                      key(account, counterID),
		ConsistentRead:           ptr(true),
		ProjectionExpression:     expr.Projection(),
		ExpressionAttributeNames: expr.Names(),
	})
	if err != nil {
		return nil, err
	}
	return t.Quota.Read(out.Item, period)
}

// updateCounter makes an unconditional write on the account's counter item
// and returns the whole item after it.
func (t *Table) updateCounter(ctx context.Context, account string, expr ddbexpr.Expression) (Item, error) {
	out, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &t.name,
		Key:                       key(account, counterID),
		UpdateExpression:          expr.Update(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return nil, err
	}
	return out.Attributes, nil
}

// SetLimits changes the account's own limits of the table's kinds: set
// gives each kind in it a limit (unlimited included), reset returns each
// kind in it to the deployment's default; kinds in neither keep theirs. It
// returns the account's own limits after the change (a kind absent has the
// default).
func (t *Table) SetLimits(ctx context.Context, account string, set quota.Limits, reset []quota.Kind) (quota.Limits, error) {
	update, changes, err := t.Quota.LimitsUpdate(set, reset)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", t.name, err)
	}
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: key(account, counterID), ConsistentRead: ptr(true)})
	if err != nil {
		return nil, err
	}
	item := out.Item
	// The months that ended move first, with the limits in force in them;
	// those with no use record them too.
	t.archive(ctx, account, item)
	if changes {
		if err := t.keepLimits(ctx, account, item); err != nil {
			return nil, err
		}
		expr, err := ddbexpr.NewBuilder().WithUpdate(update).Build()
		if err != nil {
			return nil, err
		}
		if item, err = t.updateCounter(ctx, account, expr); err != nil {
			return nil, err
		}
	}
	return t.Quota.OwnLimits(item)
}
