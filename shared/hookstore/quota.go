package hookstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/quota"
)

// The account's counter item ("count") keeps, beside its endpoint count,
// its deliveries of the month and its own limit of them (quota.Deliveries,
// as a resource's counter item keeps its kinds), and the leases of its
// lanes: which invocation of the sender attempts the account's deliveries
// in a lane now (lane_<name>_by), and until when (lane_<name>_until, Unix
// ms). One conditional write per attempt counts it and takes the lease
// (Admit): the count costs no call of its own.

// ErrBusy is an attempt refused because another invocation holds the
// account's lane: nothing was written, and the delivery waits its turn.
var ErrBusy = errors.New("hookstore: another invocation is attempting the account's deliveries in this lane")

// Lease is an invocation's hold on an account's lane: while it holds, no
// other invocation attempts the account's deliveries there, so that one
// account's slow receivers take at most one of the lane's invocations.
type Lease struct {
	// Lane names it ("fast"); Owner is the invocation's token.
	Lane, Owner string
	// Until is when it lapses if never released: the invocation's end.
	Until time.Time
}

func (l Lease) attrs() (by, until expression.NameBuilder) {
	return expression.Name("lane_" + l.Lane + "_by"), expression.Name("lane_" + l.Lane + "_until")
}

// attrAdmitted is the counter item's token of the last write Admit made:
// a retry of that write by the SDK (its answer lost) finds it there and
// counts nothing more.
const attrAdmitted = "admitted"

// Admit lets one attempt of the account's be made at now, in one
// conditional write on its counter item: when metered, it counts the
// attempt against the month's deliveries, refused past the limit (a
// *records.QuotaError); with a lease, it takes the account's lane or
// renews the owner's hold, refused while another invocation holds it
// (ErrBusy). A refused write writes nothing. With neither there is
// nothing to write, and nothing is. The write carries a token of its own
// and is refused where the item has it already, so that the SDK's retry
// of a write whose answer was lost is known as applied, not counted again
// (unless another attempt of the account's was admitted in between, which
// replaced the token: then the attempt counts twice).
//
// It returns the thresholds of the deliveries limit that the counter
// item, as the write left it or found it when refused, shows reached and
// not told, for the sender to tell (Found, Told): a refusal returns them
// too, so that a 100% whose telling failed is told by the next attempt.
func (s *Store) Admit(ctx context.Context, account string, metered bool, lease *Lease, now time.Time) ([]quota.Crossing, error) {
	counted := metered && s.Quota.Counting()
	if !counted && lease == nil {
		return nil, nil
	}
	b := expression.NewBuilder()
	charge := s.Quota.Generation(now)
	token := newToken()
	admitted := expression.Name(attrAdmitted)
	update := expression.Set(admitted, expression.Value(token))
	conds := []expression.ConditionBuilder{
		expression.Or(admitted.AttributeNotExists(), admitted.NotEqual(expression.Value(token))),
	}
	if lease != nil {
		by, until := lease.attrs()
		update = update.Set(by, expression.Value(lease.Owner)).Set(until, expression.Value(lease.Until.UnixMilli()))
		conds = append(conds, expression.Or(by.AttributeNotExists(), by.Equal(expression.Value(lease.Owner)),
			until.LessThan(expression.Value(now.UnixMilli()))))
	}
	var expr expression.Expression
	var err error
	if counted {
		expr, err = charge.Build(update, conds...)
	} else {
		expr, err = b.WithUpdate(update).WithCondition(expression.And(conds[0], conds[1])).Build()
	}
	if err != nil {
		return nil, err
	}
	// The whole counter comes back: the thresholds it shows reached, and the
	// months to move off it.
	out, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Table), Key: key(account, counterSK), UpdateExpression: expr.Update(),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: types.ReturnValueAllNew, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if mine, ok := ccf.Item[attrAdmitted].(*types.AttributeValueMemberS); ok && mine.Value == token {
			// This write, applied, its answer lost: the item is as it left it.
			return s.crossings(ccf.Item, charge.Period()), nil
		}
		if counted {
			if refused := charge.Exceeded(ccf.Item, now); refused != nil {
				return s.crossings(ccf.Item, charge.Period()), refused
			}
		}
		return nil, ErrBusy
	}
	if err != nil {
		return nil, fmt.Errorf("hookstore: admit an attempt: %w", err)
	}
	if counted {
		s.archive(ctx, account, out.Attributes, now)
	}
	return s.crossings(out.Attributes, charge.Period()), nil
}

// Refund gives back an attempt Admit counted at at that was not made after
// all (another copy of its message claimed it first), whatever the limit.
func (s *Store) Refund(ctx context.Context, account string, at time.Time) error {
	if !s.Quota.Counting() {
		return nil
	}
	expr, err := s.Quota.Generation(at).Refund().Build(expression.UpdateBuilder{})
	if err != nil {
		return err
	}
	_, err = s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Table), Key: key(account, counterSK), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if err != nil {
		return fmt.Errorf("hookstore: refund an attempt: %w", err)
	}
	return nil
}

// Release ends the owner's lease of the account's lane, so that the next
// invocation need not wait for it to lapse; a lease another took meanwhile
// (this one lapsed) is left alone.
func (s *Store) Release(ctx context.Context, account string, lease Lease) error {
	by, until := lease.attrs()
	expr, err := expression.NewBuilder().WithUpdate(expression.Remove(by).Remove(until)).
		WithCondition(by.Equal(expression.Value(lease.Owner))).Build()
	if err != nil {
		return err
	}
	err = s.itemWrite(account, counterSK)(ctx, expr)
	var taken *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &taken) {
		return fmt.Errorf("hookstore: release a lane: %w", err)
	}
	return nil
}

// Usage is the account's deliveries of period and the limit that applies:
// one strongly consistent read of its counter item.
func (s *Store) Usage(ctx context.Context, account string, period quota.Period) (map[quota.Kind]quota.Meter, error) {
	expr, err := expression.NewBuilder().WithProjection(s.Quota.UsageProjection(period, AttrSK)).Build()
	if err != nil {
		return nil, err
	}
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.Table), Key: key(account, counterSK), ConsistentRead: aws.Bool(true),
		ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(),
	})
	if err != nil {
		return nil, fmt.Errorf("hookstore: usage: %w", err)
	}
	return s.Quota.Read(out.Item, period)
}

// SetLimits changes the account's own limit of deliveries, as
// store.Table's SetLimits does a resource's kinds: set gives one (unlimited
// included), reset returns it to the deployment's default. It returns the
// account's own limits after the change (absent: the default).
func (s *Store) SetLimits(ctx context.Context, account string, set quota.Limits, reset []quota.Kind) (quota.Limits, error) {
	update, changes, err := s.Quota.LimitsUpdate(set, reset)
	if err != nil {
		return nil, fmt.Errorf("hookstore: %w", err)
	}
	got, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table), Key: key(account, counterSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("hookstore: limits: %w", err)
	}
	item := got.Item
	// The months that ended move first, with the limits in force in them;
	// those with no use record them too.
	s.archive(ctx, account, item, s.now())
	if changes {
		if err := s.keepLimits(ctx, account, item); err != nil {
			return nil, fmt.Errorf("hookstore: limits: %w", err)
		}
		expr, err := expression.NewBuilder().WithUpdate(update).Build()
		if err != nil {
			return nil, err
		}
		out, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.Table), Key: key(account, counterSK), UpdateExpression: expr.Update(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ReturnValues: types.ReturnValueAllNew,
		})
		if err != nil {
			return nil, fmt.Errorf("hookstore: limits: %w", err)
		}
		item = out.Attributes
	}
	return s.Quota.OwnLimits(item)
}

// newToken is a random token that tells one write from every other.
func newToken() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}
