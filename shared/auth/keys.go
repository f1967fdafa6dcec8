package auth

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var (
	// ErrKeyNotFound: Revoke was given a key id that is not in the table.
	ErrKeyNotFound = errors.New("auth: no such key")
	// ErrKeyExists: Import was given a key that is stored already with
	// other attributes (account, scopes, expiry) or revoked.
	ErrKeyExists = errors.New("auth: key already exists with other attributes")
)

// Keys administers the keys table: the apikey command and the local stack
// use it; request handling never does.
type Keys struct {
	db       DB
	table    string
	checksum Checksum
	now      func() time.Time
	rand     io.Reader
}

// NewKeys returns a Keys for table, reached through db, making keys with
// checksum: the one the functions that will check them use.
func NewKeys(db DB, table string, checksum Checksum) *Keys {
	return &Keys{db: db, table: table, checksum: checksum, now: time.Now, rand: rand.Reader}
}

// Create makes a key for account with scopes, expiring at expires (zero:
// never). It returns the plaintext key, which is stored nowhere and so can
// never be shown again, and what may be shown about the key later.
func (k *Keys) Create(ctx context.Context, account string, scopes []Scope, expires time.Time) (plaintext string, info KeyInfo, err error) {
	info, err = k.newInfo(account, scopes)
	if err != nil {
		return "", KeyInfo{}, err
	}
	if !expires.IsZero() {
		if !expires.After(info.CreatedAt) {
			return "", KeyInfo{}, fmt.Errorf("auth: expiry %s is not in the future", formatTime(expires))
		}
		// Truncated as stored, so that List shows the same time.
		info.ExpiresAt = expires.UTC().Truncate(time.Microsecond)
	}
	if plaintext, err = k.checksum.newKey(k.rand); err != nil {
		return "", KeyInfo{}, err
	}
	_, err = k.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(k.table),
		Item:                     encodeKey(hashKey(plaintext), info),
		ConditionExpression:      aws.String("attribute_not_exists(#h)"),
		ExpressionAttributeNames: map[string]string{"#h": attrHash},
	})
	if _, ok := errors.AsType[*types.ConditionalCheckFailedException](err); ok {
		// 256 random bits do not collide; if they did, overwriting the other
		// key's owner would be the worst possible answer.
		return "", KeyInfo{}, errors.New("auth: new key collides with a stored one; is the random source broken?")
	}
	if err != nil {
		return "", KeyInfo{}, fmt.Errorf("auth: storing key: %w", err)
	}
	return plaintext, info, nil
}

// newInfo validates account and scopes and fills in a fresh key id and the
// creation time.
func (k *Keys) newInfo(account string, scopes []Scope) (KeyInfo, error) {
	if err := validateAccount(account); err != nil {
		return KeyInfo{}, err
	}
	scopes, err := checkScopes(scopes)
	if err != nil {
		return KeyInfo{}, fmt.Errorf("auth: %w", err)
	}
	id, err := newKeyID(k.rand)
	if err != nil {
		return KeyInfo{}, err
	}
	return KeyInfo{
		KeyID:     id,
		Account:   account,
		Scopes:    scopes,
		CreatedAt: k.now().UTC().Truncate(time.Microsecond),
	}, nil
}

// Import stores a given well-formed key, without expiry, for account with
// scopes: the local stack uses it for DemoKey. Importing a key that is
// already stored with the same account and scopes does nothing, so it can run
// on every start; a stored key that differs, or was revoked, is left alone and
// gives ErrKeyExists.
func (k *Keys) Import(ctx context.Context, plaintext, account string, scopes []Scope) error {
	hash, err := k.checksum.Parse(plaintext)
	if err != nil {
		return fmt.Errorf("auth: cannot import a malformed key, or one made with another checksum: %w", err)
	}
	info, err := k.newInfo(account, scopes)
	if err != nil {
		return err
	}
	_, err = k.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(k.table),
		Item:                     encodeKey(hash, info),
		ConditionExpression:      aws.String("attribute_not_exists(#h)"),
		ExpressionAttributeNames: map[string]string{"#h": attrHash},
		// The stored item comes back with the failure: no read before the
		// write, and none after it either.
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	ccf, ok := errors.AsType[*types.ConditionalCheckFailedException](err)
	if !ok {
		if err != nil {
			return fmt.Errorf("auth: storing key: %w", err)
		}
		return nil
	}
	if len(ccf.Item) == 0 {
		return errors.New("auth: key exists, but DynamoDB did not return it to compare")
	}
	old, err := decodeKey(ccf.Item)
	if err != nil {
		return err
	}
	switch {
	case old.Account != info.Account:
		return fmt.Errorf("%w: stored as %s for account %s", ErrKeyExists, old.KeyID, old.Account)
	case !slices.Equal(old.Scopes, info.Scopes):
		return fmt.Errorf("%w: stored as %s with scopes %s", ErrKeyExists, old.KeyID, FormatScopes(old.Scopes))
	case !old.ExpiresAt.IsZero():
		return fmt.Errorf("%w: stored as %s expiring %s", ErrKeyExists, old.KeyID, formatTime(old.ExpiresAt))
	case !old.RevokedAt.IsZero():
		return fmt.Errorf("%w: stored as %s and revoked", ErrKeyExists, old.KeyID)
	}
	return nil
}

// List returns the keys of account, or of every account when account is
// empty, ordered by account, then creation time. It scans the table, which is
// fine for an admin tool and a table of keys, not for a request path.
func (k *Keys) List(ctx context.Context, account string) ([]KeyInfo, error) {
	names := map[string]string{
		"#id": attrKeyID, "#acct": attrAccount, "#sc": attrScopes,
		"#cr": attrCreatedAt, "#exp": attrExpiresAt, "#rev": attrRevokedAt,
	}
	in := &dynamodb.ScanInput{
		TableName: aws.String(k.table),
		// The hash is not asked for, so it cannot leak from here.
		ProjectionExpression:     aws.String("#id, #acct, #sc, #cr, #exp, #rev"),
		ExpressionAttributeNames: names,
	}
	if account != "" {
		if err := validateAccount(account); err != nil {
			return nil, err
		}
		in.FilterExpression = aws.String("#acct = :acct")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":acct": &types.AttributeValueMemberS{Value: account}}
	}
	var keys []KeyInfo
	pages := dynamodb.NewScanPaginator(k.db, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("auth: listing keys: %w", err)
		}
		for _, item := range page.Items {
			info, err := decodeKey(item)
			if err != nil {
				return nil, err
			}
			keys = append(keys, info)
		}
	}
	slices.SortFunc(keys, func(a, b KeyInfo) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.KeyID, b.KeyID))
	})
	return keys, nil
}

// Revoke marks the key with id keyID revoked. Revoking a revoked key keeps
// the first revocation time and is not an error; an unknown id is
// ErrKeyNotFound. Warm functions may accept the key for up to their cache TTL.
func (k *Keys) Revoke(ctx context.Context, keyID string) error {
	if !validKeyID(keyID) {
		// Not echoed: what was pasted here may be the key itself.
		return fmt.Errorf("%w: not a key id (want key_ and 12 characters of [0-9a-z])", ErrKeyNotFound)
	}
	hash, err := k.hashOf(ctx, keyID)
	if err != nil {
		return err
	}
	_, err = k.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(k.table),
		Key:              map[string]types.AttributeValue{attrHash: &types.AttributeValueMemberS{Value: hash}},
		UpdateExpression: aws.String("SET #rev = if_not_exists(#rev, :now)"),
		// The key may have been deleted since the index was read; without
		// this condition the update would create a stray item.
		ConditionExpression:      aws.String("#id = :id"),
		ExpressionAttributeNames: map[string]string{"#rev": attrRevokedAt, "#id": attrKeyID},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": &types.AttributeValueMemberS{Value: formatTime(k.now())},
			":id":  &types.AttributeValueMemberS{Value: keyID},
		},
	})
	if _, ok := errors.AsType[*types.ConditionalCheckFailedException](err); ok {
		return fmt.Errorf("%w: %s", ErrKeyNotFound, keyID)
	}
	if err != nil {
		return fmt.Errorf("auth: revoking key %s: %w", keyID, err)
	}
	return nil
}

// hashOf finds the partition key of the key with id keyID: one Query of
// the table's key-id index, which holds only the ids and hashes. The index
// is eventually consistent, so a key created within the last second or so
// may not be found yet; that is an ErrKeyNotFound worth retrying, not a
// wrong answer.
func (k *Keys) hashOf(ctx context.Context, keyID string) (string, error) {
	out, err := k.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(k.table),
		IndexName:                 aws.String(IndexByKeyID),
		KeyConditionExpression:    aws.String("#id = :id"),
		ExpressionAttributeNames:  map[string]string{"#id": attrKeyID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberS{Value: keyID}},
	})
	if err != nil {
		return "", fmt.Errorf("auth: finding key %s: %w", keyID, err)
	}
	hashes := make([]string, 0, len(out.Items))
	for _, item := range out.Items {
		h, err := stringAttr(item, attrHash, true)
		if err != nil {
			return "", fmt.Errorf("auth: finding key %s: %w", keyID, err)
		}
		hashes = append(hashes, h)
	}
	switch len(hashes) {
	case 0:
		return "", fmt.Errorf("%w: %s", ErrKeyNotFound, keyID)
	case 1:
		return hashes[0], nil
	default:
		// Ids are random, not unique by construction; revoking one of two
		// keys at random would be worse than refusing.
		return "", fmt.Errorf("auth: %d keys share id %s; revoke by hand", len(hashes), keyID)
	}
}
