// Package hookstore keeps an account's webhook endpoints and their
// deliveries in DynamoDB, one table (WebhooksTable) partitioned by account,
// so another account's endpoint is simply not found.
//
// Items by sort key:
//   - "count": how many endpoints the account has, at most MaxEndpoints;
//   - "wh#<id>": an endpoint, its signing key only sealed (webhook.Sealer),
//     and the keys a rotation replaced, which sign for a day more;
//   - "dl#<endpoint>#<event time, ms>#<webhook-id>": a delivery and its
//     log, kept DeliveryTTL; the key is the event's, so one event met
//     twice is written once. It holds the event's body only when the body
//     is too large for the queue's message, which otherwise carries it
//     (hooksender): every attempt updates the log, and an update pays for
//     the whole item, so a ~5 KB body in it would cost 6 WRU per update
//     where the log alone costs 1;
//   - "dlb#<endpoint>#<event time, ms>#<webhook-id>": the body of a
//     delivery that ended unsent or failed, which its message carried,
//     kept for the account's retry (KeepBody), outside the log's keys.
//
// Registering and deleting an endpoint move the count in the same
// transaction: they are rare, and the count must stay exact for the limit.
package hookstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/quota"
	"contentapi/shared/webhook"
)

const (
	// MaxEndpoints an account may register (openapi.yaml, createWebhook).
	MaxEndpoints = 10
	// MaxDeliveries a delivery log lists, newest first, on a page.
	MaxDeliveries = 100
	// MaxDeliveryLog is how far back a delivery log's pages reach: the
	// newest 10,000 deliveries, which a page past them reads through (some
	// 3 MB, 750 read units at most).
	MaxDeliveryLog = 10_000
	// DeliveryTTL is how long a delivery's record is kept after its event:
	// past the 28-hour schedule and long enough to look back a month.
	DeliveryTTL = 30 * 24 * time.Hour
)

// Attribute names; template.yaml's WebhooksTable uses them (Schema, and
// TTL on AttrTTL).
const (
	AttrAccount = "account"
	AttrSK      = "sk"
	AttrTTL     = "expires_at"

	attrBody       = "body" // deliveryItem's Body
	counterSK      = "count"
	endpointPrefix = "wh#"
	deliveryPrefix = "dl#"
)

// Schema is the webhooks' table as DynamoDB makes it, but for its name and
// its settings: an account's items by their sort key. template.yaml's
// WebhooksTable says the same: make generate writes it from here
// (cmd/listgen).
func Schema() dynamodb.CreateTableInput {
	return dynamodb.CreateTableInput{
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(AttrAccount), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(AttrSK), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(AttrAccount), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(AttrSK), KeyType: types.KeyTypeRange},
		},
	}
}

var (
	// ErrNotFound is an endpoint the account does not have.
	ErrNotFound = errors.New("hookstore: no such endpoint")
	// ErrTooMany is a registration past MaxEndpoints.
	ErrTooMany = errors.New("hookstore: the account has its maximum of endpoints")
)

// Endpoint is a registered URL, as the API shows it (never its key).
type Endpoint struct {
	ID             string    `dynamodbav:"id"`
	URL            string    `dynamodbav:"url"`
	Events         []string  `dynamodbav:"events"`
	Description    string    `dynamodbav:"description"`
	Enabled        bool      `dynamodbav:"enabled"`
	DisabledReason *string   `dynamodbav:"disabled_reason"`
	CreatedAt      time.Time `dynamodbav:"created_at"`
	// Struggling: its last attempt failed or was slow (Outcome.Slow), so
	// its deliveries go to the sender's slow lane until one is answered
	// 2xx in time again. The sender's business; the API does not show it.
	Struggling bool `dynamodbav:"struggling,omitempty"`
}

// endpointItem is an endpoint as stored.
type endpointItem struct {
	Account string `dynamodbav:"account"`
	SK      string `dynamodbav:"sk"`
	Endpoint
	KeySealed []byte `dynamodbav:"key_sealed"`
	// PreviousKeys are the keys rotations replaced (RotateSecret), newest
	// first, each with when it stops signing; those past it are dropped at
	// the next rotation.
	PreviousKeys []previousKey `dynamodbav:"previous_keys,omitempty"`
	FailingSince int64         `dynamodbav:"failing_since,omitempty"`
}

// Store is the webhooks table.
type Store struct {
	Client *dynamodb.Client
	Table  string
	Sealer *webhook.Sealer
	// Quota counts deliveries (quota.Deliveries) on the account's counter
	// item, under the deployment's default; the zero Policy counts none.
	Quota quota.Policy
	// Now is time.Now when nil.
	Now func() time.Time
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func key(account, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrAccount: &types.AttributeValueMemberS{Value: account},
		AttrSK:      &types.AttributeValueMemberS{Value: sk},
	}
}

// newID is an endpoint's id: wh_ and 12 random bytes in hex.
func newID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "wh_" + hex.EncodeToString(b)
}

// wellFormed reports whether id is of newID's shape: any other is no
// endpoint, found without a read (and never a key too long for DynamoDB).
func wellFormed(id string) bool {
	hexPart, ok := strings.CutPrefix(id, "wh_")
	if !ok || len(hexPart) != 24 || strings.ToLower(hexPart) != hexPart {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil
}

// Create registers an endpoint (url, events and description already
// checked) and returns it with its secret, which is shown only now: the
// table keeps the signing key sealed.
func (s *Store) Create(ctx context.Context, account string, e Endpoint) (Endpoint, string, error) {
	e.ID, e.Enabled, e.DisabledReason = newID(), true, nil
	e.CreatedAt = s.now().UTC().Truncate(time.Second)
	signingKey, secret := webhook.NewSecret()
	item, err := attributevalue.MarshalMap(endpointItem{
		Account: account, SK: endpointPrefix + e.ID, Endpoint: e, KeySealed: s.Sealer.Seal(account, e.ID, signingKey),
	})
	if err != nil {
		return Endpoint{}, "", err
	}
	count, err := expression.NewBuilder().
		WithUpdate(expression.Add(expression.Name("n"), expression.Value(1))).
		WithCondition(expression.Or(expression.AttributeNotExists(expression.Name("n")), expression.Name("n").LessThan(expression.Value(MaxEndpoints)))).
		Build()
	if err != nil {
		return Endpoint{}, "", err
	}
	put, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name(AttrSK))).Build()
	if err != nil {
		return Endpoint{}, "", err
	}
	_, err = s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: aws.String(s.Table), Key: key(account, counterSK), UpdateExpression: count.Update(),
			ConditionExpression: count.Condition(), ExpressionAttributeNames: count.Names(), ExpressionAttributeValues: count.Values(),
		}},
		{Put: &types.Put{
			TableName: aws.String(s.Table), Item: item,
			ConditionExpression: put.Condition(), ExpressionAttributeNames: put.Names(),
		}},
	}})
	if failed(err, 0) {
		return Endpoint{}, "", ErrTooMany
	}
	if err != nil {
		return Endpoint{}, "", fmt.Errorf("hookstore: create: %w", err)
	}
	return e, secret, nil
}

// Change is what an update of an endpoint sets (already checked); a nil
// field stays as it is.
type Change struct {
	URL, Description *string
	Events           []string
	Enabled          *bool
}

// DisabledByAccount is the disabled_reason of an endpoint its account
// disabled.
const DisabledByAccount = "Disabled by the account."

// Update changes the account's endpoint id in one conditional write (the
// endpoint exists) and returns it as it is then. Enabling it clears what
// disabled it: its disabled_reason, its failing_since (the 5 days of
// failures that disable it count again from its next failure) and
// struggling (its next delivery takes the fast lane). Disabling it says
// the account did it (DisabledByAccount), whatever disabled it before:
// that is why it stays disabled now. The write sets
// values, so the SDK's retry of one whose answer was lost writes the same
// again.
func (s *Store) Update(ctx context.Context, account, id string, c Change) (Endpoint, error) {
	if !wellFormed(id) {
		return Endpoint{}, ErrNotFound
	}
	var up expression.UpdateBuilder
	if c.URL != nil {
		up = up.Set(expression.Name("url"), expression.Value(*c.URL))
	}
	if c.Description != nil {
		up = up.Set(expression.Name("description"), expression.Value(*c.Description))
	}
	if c.Events != nil {
		up = up.Set(expression.Name("events"), expression.Value(c.Events))
	}
	switch {
	case c.Enabled == nil:
	case *c.Enabled:
		up = up.Set(expression.Name("enabled"), expression.Value(true)).
			Set(expression.Name("disabled_reason"), expression.Value(nil)).
			Remove(expression.Name("failing_since")).Remove(expression.Name(attrStruggling))
	default:
		up = up.Set(expression.Name("enabled"), expression.Value(false)).
			Set(expression.Name("disabled_reason"), expression.Value(DisabledByAccount))
	}
	it, found, err := s.updateEndpoint(ctx, account, id, up, expression.AttributeExists(expression.Name(AttrSK)))
	if err != nil {
		return Endpoint{}, fmt.Errorf("hookstore: update: %w", err)
	}
	if !found {
		return Endpoint{}, ErrNotFound
	}
	return it.Endpoint, nil
}

// updateEndpoint applies up to the account's endpoint id where cond holds
// and returns the endpoint as it is then; found is false where cond did
// not hold (for a condition of its existence: it is gone).
func (s *Store) updateEndpoint(ctx context.Context, account, id string, up expression.UpdateBuilder, cond expression.ConditionBuilder) (it endpointItem, found bool, err error) {
	b, err := expression.NewBuilder().WithUpdate(up).WithCondition(cond).Build()
	if err != nil {
		return endpointItem{}, false, err
	}
	out, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Table), Key: key(account, endpointPrefix+id), UpdateExpression: b.Update(),
		ConditionExpression: b.Condition(), ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values(),
		ReturnValues: types.ReturnValueAllNew,
	})
	var refused *types.ConditionalCheckFailedException
	if errors.As(err, &refused) {
		return endpointItem{}, false, nil
	}
	if err != nil {
		return endpointItem{}, false, err
	}
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return endpointItem{}, false, fmt.Errorf("endpoint item: %w", err)
	}
	return it, true, nil
}

// failed says whether err is a transaction cancelled by the condition of
// its item i.
func failed(err error, i int) bool {
	var tc *types.TransactionCanceledException
	return errors.As(err, &tc) && i < len(tc.CancellationReasons) &&
		aws.ToString(tc.CancellationReasons[i].Code) == "ConditionalCheckFailed"
}

// Get returns the account's endpoint id.
func (s *Store) Get(ctx context.Context, account, id string) (Endpoint, error) {
	it, err := s.get(ctx, account, id)
	return it.Endpoint, err
}

func (s *Store) get(ctx context.Context, account, id string) (endpointItem, error) {
	if !wellFormed(id) {
		return endpointItem{}, ErrNotFound
	}
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.Table), Key: key(account, endpointPrefix+id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return endpointItem{}, fmt.Errorf("hookstore: get: %w", err)
	}
	if out.Item == nil {
		return endpointItem{}, ErrNotFound
	}
	var it endpointItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return endpointItem{}, fmt.Errorf("hookstore: endpoint item: %w", err)
	}
	return it, nil
}

// SigningKeys opens the keys that sign the endpoint's deliveries now, for
// the sender: its current key first, then those a rotation replaced that
// are still in their grace (RotationGrace), newest first.
func (s *Store) SigningKeys(ctx context.Context, account, id string) (Endpoint, [][]byte, error) {
	it, err := s.get(ctx, account, id)
	if err != nil {
		return Endpoint{}, nil, err
	}
	keys, err := s.signingKeys(account, id, it, s.now())
	return it.Endpoint, keys, err
}

const (
	// RotationGrace is how long a signing key a rotation replaced still
	// signs deliveries, after the new one: receivers have a day to take
	// the new secret.
	RotationGrace = 24 * time.Hour
	// MaxSigningKeys is how many keys may sign at once: the current one
	// and those replaced within RotationGrace. A rotation that would make
	// more waits (ErrRotatedTooOften), so that a delivery's header stays
	// short and no secret a receiver may still hold stops signing early.
	MaxSigningKeys = 5
)

// previousKey is a signing key a rotation replaced, sealed as the current
// one is, and the Unix second it stops signing.
type previousKey struct {
	Sealed []byte `dynamodbav:"key_sealed"`
	Until  int64  `dynamodbav:"until"`
}

// ErrRotatedTooOften is a rotation refused because MaxSigningKeys already
// sign: RetryAfter is when the oldest of them stops.
type ErrRotatedTooOften struct{ RetryAfter time.Duration }

func (e *ErrRotatedTooOften) Error() string {
	return fmt.Sprintf("hookstore: %d signing keys in force, the oldest for %s more", MaxSigningKeys, e.RetryAfter)
}

// inGrace are the keys of it replaced and still signing at now, newest
// first (as the rotations kept them).
func (it endpointItem) inGrace(now time.Time) []previousKey {
	var keep []previousKey
	for _, p := range it.PreviousKeys {
		if p.Until > now.Unix() {
			keep = append(keep, p)
		}
	}
	return keep
}

// RotateSecret gives the account's endpoint id a new signing key and
// returns it with its new secret, shown only now. The key it replaces goes on signing
// for RotationGrace (its signature after the new one's), as do those
// earlier rotations replaced within theirs; so a client that rotates
// again, having lost an answer, still has its old secret verify while it
// takes the new one. The write is conditional on the key it replaces: of
// two rotations at once each takes its turn (the later on top of the
// earlier), and the SDK's retry of a write whose answer was lost finds its
// own new key in place and takes it as made, never rotating twice.
func (s *Store) RotateSecret(ctx context.Context, account, id string) (Endpoint, string, error) {
	for range 3 {
		it, err := s.get(ctx, account, id)
		if err != nil {
			return Endpoint{}, "", err
		}
		now := s.now()
		previous := append([]previousKey{{Sealed: it.KeySealed, Until: now.Add(RotationGrace).Unix()}}, it.inGrace(now)...)
		if len(previous) >= MaxSigningKeys {
			oldest := time.Unix(previous[len(previous)-1].Until, 0)
			return Endpoint{}, "", &ErrRotatedTooOften{RetryAfter: oldest.Sub(now)}
		}
		signingKey, secret := webhook.NewSecret()
		sealed := s.Sealer.Seal(account, id, signingKey)
		kept, err := attributevalue.Marshal(previous)
		if err != nil {
			return Endpoint{}, "", err
		}
		b, err := expression.NewBuilder().
			WithUpdate(expression.Set(expression.Name(attrKeySealed), expression.Value(sealed)).
				Set(expression.Name(attrPreviousKeys), expression.Value(kept))).
			WithCondition(expression.Name(attrKeySealed).Equal(expression.Value(it.KeySealed))).
			Build()
		if err != nil {
			return Endpoint{}, "", err
		}
		_, err = s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.Table), Key: key(account, endpointPrefix+id), UpdateExpression: b.Update(),
			ConditionExpression: b.Condition(), ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		var ccf *types.ConditionalCheckFailedException
		switch {
		case errors.As(err, &ccf):
			found, ok := ccf.Item[attrKeySealed].(*types.AttributeValueMemberB)
			switch {
			case ccf.Item == nil:
				return Endpoint{}, "", ErrNotFound // deleted meanwhile
			case ok && bytes.Equal(found.Value, sealed):
				return it.Endpoint, secret, nil // this write, applied, its answer lost
			}
			continue // another rotation came first: rotate on top of it
		case err != nil:
			return Endpoint{}, "", fmt.Errorf("hookstore: rotate a secret: %w", err)
		}
		return it.Endpoint, secret, nil
	}
	return Endpoint{}, "", fmt.Errorf("hookstore: rotate a secret: other rotations kept coming first")
}

// signingKeys opens the keys that sign the endpoint's deliveries at now:
// its current key first, then those still in their grace, newest first.
func (s *Store) signingKeys(account, id string, it endpointItem, now time.Time) ([][]byte, error) {
	sealed := [][]byte{it.KeySealed}
	for _, p := range it.inGrace(now) {
		sealed = append(sealed, p.Sealed)
	}
	keys := make([][]byte, len(sealed))
	for i, k := range sealed {
		var err error
		if keys[i], err = s.Sealer.Open(account, id, k); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// Attributes of an endpoint's keys (endpointItem).
const (
	attrKeySealed    = "key_sealed"
	attrPreviousKeys = "previous_keys"
)

// List returns the account's endpoints, oldest first (at most
// MaxEndpoints, so one page).
func (s *Store) List(ctx context.Context, account string) ([]Endpoint, error) {
	items, err := s.query(ctx, account, endpointPrefix, true, MaxEndpoints+1)
	if err != nil {
		return nil, err
	}
	out := make([]Endpoint, 0, len(items))
	for _, item := range items {
		var it endpointItem
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return nil, fmt.Errorf("hookstore: endpoint item: %w", err)
		}
		out = append(out, it.Endpoint)
	}
	// Ids are random: the API lists in registration order.
	slices.SortStableFunc(out, func(a, b Endpoint) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// query reads up to limit of the account's items whose key starts with
// prefix, in key order or (forward false) against it.
func (s *Store) query(ctx context.Context, account, prefix string, forward bool, limit int) ([]map[string]types.AttributeValue, error) {
	q, err := expression.NewBuilder().WithKeyCondition(
		expression.Key(AttrAccount).Equal(expression.Value(account)).And(expression.Key(AttrSK).BeginsWith(prefix)),
	).Build()
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.Table), KeyConditionExpression: q.KeyCondition(),
		ExpressionAttributeNames: q.Names(), ExpressionAttributeValues: q.Values(),
		ScanIndexForward: aws.Bool(forward), ConsistentRead: aws.Bool(true),
	}
	// A Query answers at most 1 MB: the next takes up where it stopped.
	var items []map[string]types.AttributeValue
	for len(items) < limit {
		in.Limit = aws.Int32(int32(limit - len(items)))
		out, err := s.Client.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("hookstore: query: %w", err)
		}
		items = append(items, out.Items...)
		if out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return items, nil
}

// Delete removes the account's endpoint id; its deliveries expire with
// their TTL, unreadable meanwhile (their endpoint is gone).
func (s *Store) Delete(ctx context.Context, account, id string) error {
	if !wellFormed(id) {
		return ErrNotFound
	}
	gone, err := expression.NewBuilder().WithCondition(expression.AttributeExists(expression.Name(AttrSK))).Build()
	if err != nil {
		return err
	}
	count, err := expression.NewBuilder().
		WithUpdate(expression.Add(expression.Name("n"), expression.Value(-1))).
		WithCondition(expression.Name("n").GreaterThan(expression.Value(0))).
		Build()
	if err != nil {
		return err
	}
	_, err = s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{
			TableName: aws.String(s.Table), Key: key(account, endpointPrefix+id),
			ConditionExpression: gone.Condition(), ExpressionAttributeNames: gone.Names(),
		}},
		{Update: &types.Update{
			TableName: aws.String(s.Table), Key: key(account, counterSK), UpdateExpression: count.Update(),
			ConditionExpression: count.Condition(), ExpressionAttributeNames: count.Names(), ExpressionAttributeValues: count.Values(),
		}},
	}})
	if failed(err, 0) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("hookstore: delete: %w", err)
	}
	return nil
}

// Delivery is one event for one endpoint and its log, as the API shows it.
type Delivery struct {
	ID     string `dynamodbav:"id"`
	Type   string `dynamodbav:"type"`
	Status string `dynamodbav:"status"`
	// Reason says why a delivery was Skipped; nil otherwise.
	Reason             *string    `dynamodbav:"reason"`
	Attempts           int        `dynamodbav:"attempts"`
	LastResponseStatus *int       `dynamodbav:"last_response_status"`
	LastAttemptAt      *time.Time `dynamodbav:"last_attempt_at"`
	NextAttemptAt      *time.Time `dynamodbav:"next_attempt_at"`
}

// Delivery statuses.
const (
	Pending   = "pending"
	Succeeded = "succeeded"
	Failed    = "failed"
	// Skipped: not sent, and never to be: its Reason says why (the
	// account's monthly limit of deliveries was reached).
	Skipped = "skipped"
)

// deliveryItem is a delivery as stored, with its payload when the
// message could not carry it.
type deliveryItem struct {
	Account string `dynamodbav:"account"`
	SK      string `dynamodbav:"sk"`
	Delivery
	Body      storedBody `dynamodbav:"body,omitempty"`
	ExpiresAt int64      `dynamodbav:"expires_at"`
	Manual    int        `dynamodbav:"manual,omitempty"` // PendingDelivery.Manual
}

// storedBody is a delivery item's body attribute: the event's body (B)
// when the item keeps it, or the string bodyInMessage (S) when the queue's
// message carries it (AddDelivery writes it). The string, not an absent
// attribute, so that a sender of a release that read every body from the
// item (a rollback, or a deploy that updates it last) fails to decode the
// item and leaves the message to be retried, and at worst to the
// dead-letter queue, rather than sending an empty body.
type storedBody []byte

const bodyInMessage = "message"

// UnmarshalDynamoDBAttributeValue is attributevalue.Unmarshaler's.
func (b *storedBody) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	switch v := av.(type) {
	case *types.AttributeValueMemberB:
		*b = v.Value
	case *types.AttributeValueMemberS:
		*b = nil // the message carries it
	default:
		return fmt.Errorf("hookstore: a delivery's body is a %T", av)
	}
	return nil
}

// DeliveryKey names a delivery, as the queue's message names it.
type DeliveryKey struct {
	Account string `json:"account"`
	SK      string `json:"sk"`
}

// deliverySK orders an endpoint's deliveries by their event's time, and
// is the same for the same event (its time and webhook-id are the event's).
func deliverySK(endpoint string, at time.Time, msgID string) string {
	return fmt.Sprintf("%s%s#%013d#%s", deliveryPrefix, endpoint, at.UnixMilli(), msgID)
}

// AddDelivery records a pending delivery of an event (its webhook-id,
// type and time) to an endpoint, once: the same event added again (a
// stream record delivered twice) finds it there and reports created
// false, with the same key. body, when not nil, is kept with it, for a
// payload the queue's message cannot carry; every attempt's update of
// the log then pays for it too. When nil, the item says the message
// carries it (storedBody).
func (s *Store) AddDelivery(ctx context.Context, account, endpoint, msgID, eventType string, at time.Time, body []byte) (DeliveryKey, bool, error) {
	k := DeliveryKey{Account: account, SK: deliverySK(endpoint, at, msgID)}
	now := s.now().UTC().Truncate(time.Second)
	item, err := attributevalue.MarshalMap(deliveryItem{
		Account: account, SK: k.SK, Body: body, ExpiresAt: at.Add(DeliveryTTL).Unix(),
		Delivery: Delivery{ID: msgID, Type: eventType, Status: Pending, NextAttemptAt: &now},
	})
	if err != nil {
		return k, false, err
	}
	if body == nil {
		item[attrBody] = &types.AttributeValueMemberS{Value: bodyInMessage}
	}
	cond, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name(AttrSK))).Build()
	if err != nil {
		return k, false, err
	}
	_, err = s.Client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.Table), Item: item,
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(),
	})
	var exists *types.ConditionalCheckFailedException
	if errors.As(err, &exists) {
		return k, false, nil
	}
	if err != nil {
		return k, false, fmt.Errorf("hookstore: add delivery: %w", err)
	}
	return k, true, nil
}

// Deliveries is the endpoint's delivery log: the latest MaxDeliveries,
// newest first. An endpoint the account does not have is ErrNotFound.
func (s *Store) Deliveries(ctx context.Context, account, endpoint string) ([]Delivery, error) {
	ds, _, err := s.DeliveriesPage(ctx, account, endpoint, 0, MaxDeliveries)
	return ds, err
}

// DeliveriesPage is n deliveries of the endpoint's log, newest first, after
// the newest offset ones, and whether older ones follow. The log's key
// orders it, so the offset is read through (a delivery's item is some 300
// bytes): MaxDeliveryLog bounds offset+n. An endpoint the account does not
// have is ErrNotFound.
func (s *Store) DeliveriesPage(ctx context.Context, account, endpoint string, offset, n int) ([]Delivery, bool, error) {
	if offset < 0 || n < 1 || offset+n > MaxDeliveryLog {
		return nil, false, fmt.Errorf("hookstore: a delivery log's page %d+%d is out of its bounds", offset, n)
	}
	if _, err := s.get(ctx, account, endpoint); err != nil {
		return nil, false, err
	}
	// One more than the page, to tell whether older deliveries follow.
	want := offset + n + 1
	items, err := s.query(ctx, account, deliveryPrefix+endpoint+"#", false, want)
	if err != nil {
		return nil, false, err
	}
	more := len(items) == want
	items = items[min(offset, len(items)):min(offset+n, len(items))]
	out := make([]Delivery, 0, len(items))
	for _, item := range items {
		var d deliveryItem
		if err := attributevalue.UnmarshalMap(item, &d); err != nil {
			return nil, false, fmt.Errorf("hookstore: delivery item: %w", err)
		}
		out = append(out, d.Delivery)
	}
	return out, more, nil
}
