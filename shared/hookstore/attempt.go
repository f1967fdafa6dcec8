package hookstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/webhook"
)

// ErrLost is a claim another copy of the delivery's message made first.
var ErrLost = errors.New("hookstore: the attempt was claimed by another copy of the message")

// PendingDelivery is a delivery as the sender reads it: the log, the
// endpoint it goes to, and the payload when the item keeps it (nil when
// the queue's message carries it).
type PendingDelivery struct {
	Key      DeliveryKey
	Endpoint string
	Delivery
	Body []byte
}

// EndpointOf is the endpoint id a delivery key names.
func (k DeliveryKey) EndpointOf() string {
	rest, _ := strings.CutPrefix(k.SK, deliveryPrefix)
	id, _, _ := strings.Cut(rest, "#")
	return id
}

// GetDelivery reads a delivery; ErrNotFound when it expired or never was.
func (s *Store) GetDelivery(ctx context.Context, k DeliveryKey) (PendingDelivery, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.Table), Key: key(k.Account, k.SK), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return PendingDelivery{}, fmt.Errorf("hookstore: get delivery: %w", err)
	}
	if out.Item == nil || !strings.HasPrefix(k.SK, deliveryPrefix) {
		return PendingDelivery{}, ErrNotFound
	}
	var d deliveryItem
	if err := attributevalue.UnmarshalMap(out.Item, &d); err != nil {
		return PendingDelivery{}, fmt.Errorf("hookstore: delivery item: %w", err)
	}
	return PendingDelivery{Key: k, Endpoint: k.EndpointOf(), Delivery: d.Delivery, Body: d.Body}, nil
}

// Claim takes the delivery's next attempt, once: only while it is pending
// with the attempts read, so of two copies of its message only one makes
// the attempt (the other gets ErrLost). The claim carries a token of its
// own, so that the SDK's retry of a claim whose answer was lost finds it
// applied and goes on, where it would find the attempts moved on and take
// itself for another copy: the message dropped, the delivery left pending
// with nothing queued.
func (s *Store) Claim(ctx context.Context, d PendingDelivery) error {
	token := newToken()
	b, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("attempts"), expression.Value(d.Attempts+1)).
			Set(expression.Name(attrClaim), expression.Value(token))).
		WithCondition(expression.Name("attempts").Equal(expression.Value(d.Attempts)).
			And(expression.Name("status").Equal(expression.Value(Pending)))).
		Build()
	if err != nil {
		return err
	}
	old, lost, err := s.updateDelivery(ctx, d, b)
	switch {
	case lost:
		if mine, ok := old[attrClaim].(*types.AttributeValueMemberS); ok && mine.Value == token {
			return nil // this claim, applied, its answer lost
		}
		return ErrLost
	case err != nil:
		return fmt.Errorf("hookstore: claim: %w", err)
	}
	return nil
}

// attrClaim is the delivery item's token of the claim of its latest
// attempt.
const attrClaim = "claim"

// updateDelivery makes the conditional update b of the delivery's item;
// refused says its condition failed, and nothing was written: old is the
// item as the condition found it.
func (s *Store) updateDelivery(ctx context.Context, d PendingDelivery, b expression.Expression) (old map[string]types.AttributeValue, refused bool, err error) {
	_, err = s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Table), Key: key(d.Key.Account, d.Key.SK), UpdateExpression: b.Update(),
		ConditionExpression: b.Condition(), ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true, nil
	}
	return nil, false, err
}

// Outcome is what an attempt ended in, for the log.
type Outcome struct {
	// Status is the receiver's answer; 0 when there was none.
	Status int
	// Slow: the answer took webhook.SlowAnswer or longer.
	Slow bool
	At   time.Time
	// Next is when the next attempt is due; zero when there is none.
	Next time.Time
	// Final is succeeded or failed; empty while retries remain.
	Final string
}

// Record writes an attempt's outcome to the delivery's log (the attempt
// claimed by Claim), and the endpoint's health: a success clears its
// failing_since, a failure sets it if unset, and a failure DisableAfter
// after it disables the endpoint, which it returns whether it did; a
// failure or a slow answer marks it Struggling, a 2xx in time clears that.
func (s *Store) Record(ctx context.Context, d PendingDelivery, o Outcome) (disabled bool, err error) {
	status := Pending
	if o.Final != "" {
		status = o.Final
	}
	up := expression.Set(expression.Name("status"), expression.Value(status)).
		Set(expression.Name("last_attempt_at"), expression.Value(o.At.UTC().Format(time.RFC3339Nano)))
	if o.Status != 0 {
		up = up.Set(expression.Name("last_response_status"), expression.Value(o.Status))
	} else {
		up = up.Set(expression.Name("last_response_status"), expression.Value(nil))
	}
	if o.Next.IsZero() {
		up = up.Set(expression.Name("next_attempt_at"), expression.Value(nil))
	} else {
		up = up.Set(expression.Name("next_attempt_at"), expression.Value(o.Next.UTC().Format(time.RFC3339Nano)))
	}
	b, err := expression.NewBuilder().WithUpdate(up).Build()
	if err != nil {
		return false, err
	}
	if _, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Table), Key: key(d.Key.Account, d.Key.SK), UpdateExpression: b.Update(),
		ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values(),
	}); err != nil {
		return false, fmt.Errorf("hookstore: record attempt: %w", err)
	}
	ok := o.Final == Succeeded || o.Status >= 200 && o.Status < 300
	return s.health(ctx, d.Key.Account, d.Endpoint, ok, !ok || o.Slow, o.At)
}

// health keeps the endpoint's failing_since and struggling, and disables
// it after webhook.DisableAfter of failures only.
func (s *Store) health(ctx context.Context, account, endpoint string, ok, struggling bool, at time.Time) (bool, error) {
	var up expression.UpdateBuilder
	cond := expression.AttributeExists(expression.Name(AttrSK))
	if ok {
		up = expression.Remove(expression.Name("failing_since"))
	} else {
		up = expression.Set(expression.Name("failing_since"),
			expression.IfNotExists(expression.Name("failing_since"), expression.Value(at.Unix())))
	}
	if struggling {
		up = up.Set(expression.Name(attrStruggling), expression.Value(true))
	} else {
		up = up.Remove(expression.Name(attrStruggling))
	}
	it, found, err := s.updateEndpoint(ctx, account, endpoint, up, cond)
	if err != nil {
		return false, fmt.Errorf("hookstore: endpoint health: %w", err)
	}
	if !found {
		return false, nil // deleted meanwhile
	}
	if ok || !it.Enabled || it.FailingSince == 0 || !webhook.Disable(time.Unix(it.FailingSince, 0), at) {
		return false, nil
	}
	reason := "Every delivery failed for 5 days."
	// Only while it is failing since then: an account that enabled it
	// again meanwhile (Update) cleared failing_since, and its decision
	// stands.
	_, disabled, err := s.updateEndpoint(ctx, account, endpoint,
		expression.Set(expression.Name("enabled"), expression.Value(false)).Set(expression.Name("disabled_reason"), expression.Value(reason)),
		expression.Name("failing_since").Equal(expression.Value(it.FailingSince)))
	if err != nil {
		return false, fmt.Errorf("hookstore: disable endpoint: %w", err)
	}
	return disabled, nil
}

// attrStruggling is Endpoint.Struggling's attribute.
const attrStruggling = "struggling"

// Skip ends a pending delivery unsent, for reason: Skipped, no attempt
// claimed, none due (its earlier attempts, if any, stay in its log). A
// delivery no longer pending (another copy of its message ended it) is
// left as it is.
func (s *Store) Skip(ctx context.Context, d PendingDelivery, at time.Time, reason string) error {
	b, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("status"), expression.Value(Skipped)).
			Set(expression.Name("reason"), expression.Value(reason)).
			Set(expression.Name("next_attempt_at"), expression.Value(nil))).
		WithCondition(expression.Name("status").Equal(expression.Value(Pending))).
		Build()
	if err != nil {
		return err
	}
	if _, _, err := s.updateDelivery(ctx, d, b); err != nil {
		return fmt.Errorf("hookstore: skip a delivery: %w", err)
	}
	return nil
}
