package hookstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"strconv"
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
	// Manual is the attempt an account's retry reopened it for (Retry):
	// the number it will have once made; 0 for none.
	Manual int
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
	return d.pending(k), nil
}

func (d deliveryItem) pending(k DeliveryKey) PendingDelivery {
	return PendingDelivery{Key: k, Endpoint: k.EndpointOf(), Delivery: d.Delivery, Body: d.Body, Manual: d.Manual}
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

// An account may retry a delivery that ended failed or skipped (Retry):
// one more attempt, now. Its body must still be at hand then, but a
// delivery's item keeps it only when the queue's message could not carry
// it, and the message is gone once the delivery ends. So the sender keeps
// the body of a delivery that ends unsent or failed (KeepBody) in an item
// of its own beside the log ("dlb#" and the delivery's key past "dl#"),
// written once and never updated, outside the log's key range: the log's
// pages and every update of the delivery still pay for the log alone.
// A delivery that succeeded keeps no body and is not retried.
const bodyPrefix = "dlb#"

// bodyKey is the key of the item that keeps delivery k's body.
func bodyKey(k DeliveryKey) map[string]types.AttributeValue {
	return key(k.Account, bodyPrefix+strings.TrimPrefix(k.SK, deliveryPrefix))
}

// bodyItem keeps a delivery's body for a retry, expiring with it.
type bodyItem struct {
	Account   string `dynamodbav:"account"`
	SK        string `dynamodbav:"sk"`
	Body      []byte `dynamodbav:"body"`
	ExpiresAt int64  `dynamodbav:"expires_at"`
}

// KeepBody keeps the body of delivery d, which ended failed or skipped,
// for as long as its log (DeliveryTTL from its event); nothing when its
// item keeps the body already. Writing it again writes the same.
func (s *Store) KeepBody(ctx context.Context, d PendingDelivery, body []byte) error {
	if d.Body != nil {
		return nil
	}
	item, err := attributevalue.MarshalMap(bodyItem{Body: body, ExpiresAt: eventTime(d.Key).Add(DeliveryTTL).Unix()})
	if err != nil {
		return err
	}
	maps.Copy(item, bodyKey(d.Key))
	if _, err := s.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: item}); err != nil {
		return fmt.Errorf("hookstore: keep a delivery's body: %w", err)
	}
	return nil
}

// eventTime is the time of the event a delivery key names (deliverySK).
func eventTime(k DeliveryKey) time.Time {
	parts := strings.Split(k.SK, "#")
	if len(parts) != 4 {
		return time.Now()
	}
	ms, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return time.Now()
	}
	return time.UnixMilli(ms)
}

// Why a delivery cannot be retried (Retry).
var (
	// ErrRetryPending: its next attempt is scheduled already.
	ErrRetryPending = errors.New("hookstore: the delivery is pending, its next attempt scheduled")
	// ErrNotKept: it succeeded, or ended before its body was kept: there
	// is nothing to send again.
	ErrNotKept = errors.New("hookstore: the delivery's body is not kept")
)

// attrManual is the delivery item's Manual.
const attrManual = "manual"

// Retry reopens a delivery that ended failed or skipped, for one more
// attempt at now, and returns it with its body, for its message: pending,
// due at now, its reason cleared, Manual the number of that attempt, which
// the sender makes once and with no retry after it. The write is
// conditional on the delivery as read (ended, with its attempts), so of
// two retries at once one reopens it; a delivery found reopened for that
// very attempt (this write, its answer lost and retried by the SDK, or
// another call's) is returned as it is, for its message to be queued
// again, which the attempt's number makes harmless. A delivery whose next
// attempt is scheduled is ErrRetryPending; one that succeeded or whose
// body is not kept (KeepBody), ErrNotKept.
func (s *Store) Retry(ctx context.Context, d PendingDelivery, now time.Time) (PendingDelivery, error) {
	if err := retriable(d); err != nil {
		return PendingDelivery{}, err
	}
	if d.Body == nil {
		out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table), Key: bodyKey(d.Key), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return PendingDelivery{}, fmt.Errorf("hookstore: a delivery's body: %w", err)
		}
		var kept bodyItem
		if err := attributevalue.UnmarshalMap(out.Item, &kept); err != nil {
			return PendingDelivery{}, fmt.Errorf("hookstore: a delivery's body: %w", err)
		}
		if kept.Body == nil {
			return PendingDelivery{}, ErrNotKept
		}
		d.Body = kept.Body
	}
	if reopened(d) {
		return d, nil
	}
	next := d.Attempts + 1
	b, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("status"), expression.Value(Pending)).
			Set(expression.Name("reason"), expression.Value(nil)).
			Set(expression.Name("next_attempt_at"), expression.Value(now.UTC().Format(time.RFC3339Nano))).
			Set(expression.Name(attrManual), expression.Value(next))).
		WithCondition(expression.Name("status").Equal(expression.Value(d.Status)).
			And(expression.Name("attempts").Equal(expression.Value(d.Attempts)))).
		Build()
	if err != nil {
		return PendingDelivery{}, err
	}
	old, refused, err := s.updateDelivery(ctx, d, b)
	if err != nil {
		return PendingDelivery{}, fmt.Errorf("hookstore: retry a delivery: %w", err)
	}
	if refused {
		if old == nil {
			return PendingDelivery{}, ErrNotFound // expired meanwhile
		}
		var item deliveryItem
		if err := attributevalue.UnmarshalMap(old, &item); err != nil {
			return PendingDelivery{}, fmt.Errorf("hookstore: delivery item: %w", err)
		}
		found := item.pending(d.Key)
		if reopened(found) && found.Manual == next {
			found.Body = d.Body
			return found, nil
		}
		if err := retriable(found); err != nil {
			return PendingDelivery{}, err
		}
		return PendingDelivery{}, ErrRetryPending // retried and attempted meanwhile
	}
	d.Status, d.Reason, d.NextAttemptAt, d.Manual = Pending, nil, &now, next
	return d, nil
}

// reopened says whether d is pending for the attempt a retry reopened it
// for, not yet made.
func reopened(d PendingDelivery) bool {
	return d.Status == Pending && d.Manual == d.Attempts+1
}

// retriable says why d, as read, cannot be retried, or nil: one reopened
// by a retry still can (its message queued again).
func retriable(d PendingDelivery) error {
	switch {
	case reopened(d):
		return nil
	case d.Status == Pending:
		return ErrRetryPending
	case d.Status == Succeeded:
		return ErrNotKept
	}
	return nil
}

// FindDelivery is the account's endpoint and its delivery id (its
// webhook-id), read through the endpoint's log from the newest, as far as
// the log's pages reach (MaxDeliveryLog): a delivery's key holds its
// event's time, which its id does not. An endpoint or a delivery the
// account does not have is ErrNotFound.
func (s *Store) FindDelivery(ctx context.Context, account, endpoint, id string) (Endpoint, PendingDelivery, error) {
	e, err := s.Get(ctx, account, endpoint)
	if err != nil {
		return Endpoint{}, PendingDelivery{}, err
	}
	d, err := s.findDelivery(ctx, account, endpoint, id)
	return e, d, err
}

func (s *Store) findDelivery(ctx context.Context, account, endpoint, id string) (PendingDelivery, error) {
	if !wellFormedDelivery(id) {
		return PendingDelivery{}, ErrNotFound
	}
	b, err := expression.NewBuilder().
		WithKeyCondition(expression.Key(AttrAccount).Equal(expression.Value(account)).
			And(expression.Key(AttrSK).BeginsWith(deliveryPrefix + endpoint + "#"))).
		WithFilter(expression.Name("id").Equal(expression.Value(id))).
		Build()
	if err != nil {
		return PendingDelivery{}, err
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.Table), KeyConditionExpression: b.KeyCondition(), FilterExpression: b.Filter(),
		ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values(),
		ScanIndexForward: aws.Bool(false), ConsistentRead: aws.Bool(true),
	}
	for read := 0; read < MaxDeliveryLog; {
		in.Limit = aws.Int32(int32(min(10*MaxDeliveries, MaxDeliveryLog-read)))
		out, err := s.Client.Query(ctx, in)
		if err != nil {
			return PendingDelivery{}, fmt.Errorf("hookstore: find a delivery: %w", err)
		}
		if len(out.Items) > 0 {
			var d deliveryItem
			if err := attributevalue.UnmarshalMap(out.Items[0], &d); err != nil {
				return PendingDelivery{}, fmt.Errorf("hookstore: delivery item: %w", err)
			}
			return d.pending(DeliveryKey{Account: account, SK: d.SK}), nil
		}
		read += int(out.ScannedCount)
		if out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return PendingDelivery{}, ErrNotFound
}

// wellFormedDelivery reports whether id is of webhook.EventID's shape:
// msg_ and 16 bytes in unpadded base64url.
func wellFormedDelivery(id string) bool {
	b64, ok := strings.CutPrefix(id, "msg_")
	if !ok || len(b64) != 22 {
		return false
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(b64)
	return err == nil
}
