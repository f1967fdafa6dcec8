package auth

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names of a key item; see the package doc.
const (
	attrHash      = "key_hash"
	attrKeyID     = "key_id"
	attrAccount   = "account"
	attrScopes    = "scopes"
	attrCreatedAt = "created_at"
	attrExpiresAt = "expires_at"
	attrRevokedAt = "revoked_at"
)

// IndexByKeyID is the keys table's global secondary index on key_id,
// projecting only the keys (key_id and key_hash): what Revoke needs to find
// a key's item without a scan.
const IndexByKeyID = "by_key_id"

// Schema is the keys table as DynamoDB makes it, but for its name and its
// settings: a key's item by its hash, and IndexByKeyID from its public id.
// template.yaml's ApiKeysTable says the same: make generate writes it from
// here (cmd/listgen).
func Schema() dynamodb.CreateTableInput {
	return dynamodb.CreateTableInput{
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrHash), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrKeyID), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String(attrHash), KeyType: types.KeyTypeHash}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String(IndexByKeyID),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String(attrKeyID), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}},
	}
}

// timeLayout matches the API's timestamps (microseconds, UTC, "Z") and sorts
// lexicographically in time order.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// KeyInfo is what may be shown about a key: never its plaintext or hash.
type KeyInfo struct {
	KeyID     string
	Account   string
	Scopes    []Scope
	CreatedAt time.Time
	ExpiresAt time.Time // zero: never expires
	RevokedAt time.Time // zero: not revoked
}

// Active reports whether the key would be accepted at now (cache aside).
func (k KeyInfo) Active(now time.Time) bool {
	return k.RevokedAt.IsZero() && (k.ExpiresAt.IsZero() || now.Before(k.ExpiresAt))
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// encodeKey builds the item stored for a key with the given hash.
func encodeKey(hash string, k KeyInfo) map[string]types.AttributeValue {
	scopes := make([]string, len(k.Scopes))
	for i, sc := range k.Scopes {
		scopes[i] = string(sc)
	}
	item := map[string]types.AttributeValue{
		attrHash:      &types.AttributeValueMemberS{Value: hash},
		attrKeyID:     &types.AttributeValueMemberS{Value: k.KeyID},
		attrAccount:   &types.AttributeValueMemberS{Value: k.Account},
		attrScopes:    &types.AttributeValueMemberSS{Value: scopes},
		attrCreatedAt: &types.AttributeValueMemberS{Value: formatTime(k.CreatedAt)},
	}
	if !k.ExpiresAt.IsZero() {
		item[attrExpiresAt] = &types.AttributeValueMemberS{Value: formatTime(k.ExpiresAt)}
	}
	if !k.RevokedAt.IsZero() {
		item[attrRevokedAt] = &types.AttributeValueMemberS{Value: formatTime(k.RevokedAt)}
	}
	return item
}

// decodeKey reads a key item. Scopes may be a string set (what this package
// writes) or a list of strings (what a hand-written item or another tool may
// hold). An item that is not a well-formed key is an error, not a refusal: it
// means the table is damaged, which an operator must hear about.
func decodeKey(item map[string]types.AttributeValue) (KeyInfo, error) {
	var k KeyInfo
	var err error
	if k.KeyID, err = stringAttr(item, attrKeyID, true); err != nil {
		return KeyInfo{}, err
	}
	// Name the key in every later error, so the damaged item can be found.
	fail := func(err error) (KeyInfo, error) {
		return KeyInfo{}, fmt.Errorf("auth: key item %s: %w", k.KeyID, err)
	}
	if k.Account, err = stringAttr(item, attrAccount, true); err != nil {
		return fail(err)
	}
	if k.Scopes, err = scopesAttr(item); err != nil {
		return fail(err)
	}
	if k.CreatedAt, err = timeAttr(item, attrCreatedAt, true); err != nil {
		return fail(err)
	}
	if k.ExpiresAt, err = timeAttr(item, attrExpiresAt, false); err != nil {
		return fail(err)
	}
	if k.RevokedAt, err = timeAttr(item, attrRevokedAt, false); err != nil {
		return fail(err)
	}
	return k, nil
}

func stringAttr(item map[string]types.AttributeValue, name string, required bool) (string, error) {
	switch v := item[name].(type) {
	case *types.AttributeValueMemberS:
		if v.Value == "" && required {
			return "", fmt.Errorf("attribute %s is empty", name)
		}
		return v.Value, nil
	case nil:
		if required {
			return "", fmt.Errorf("attribute %s is missing", name)
		}
		return "", nil
	default:
		return "", fmt.Errorf("attribute %s is %T, want a string", name, v)
	}
}

func timeAttr(item map[string]types.AttributeValue, name string, required bool) (time.Time, error) {
	s, err := stringAttr(item, name, required)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("attribute %s is not an ISO-8601 time", name)
	}
	return t.UTC(), nil
}

func scopesAttr(item map[string]types.AttributeValue) ([]Scope, error) {
	var names []string
	switch v := item[attrScopes].(type) {
	case *types.AttributeValueMemberSS:
		names = v.Value
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			s, ok := e.(*types.AttributeValueMemberS)
			if !ok {
				return nil, fmt.Errorf("attribute %s holds a %T, want strings", attrScopes, e)
			}
			names = append(names, s.Value)
		}
	case nil:
		return nil, fmt.Errorf("attribute %s is missing", attrScopes)
	default:
		return nil, fmt.Errorf("attribute %s is %T, want a string set", attrScopes, v)
	}
	scopes := make([]Scope, len(names))
	for i, n := range names {
		scopes[i] = Scope(n)
	}
	scopes, err := checkScopes(scopes)
	if err != nil {
		return nil, fmt.Errorf("attribute %s: %w", attrScopes, err)
	}
	return scopes, nil
}
