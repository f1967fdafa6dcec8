package auth

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestKeyItemRoundTrip(t *testing.T) {
	created := time.Date(2026, 11, 21, 16, 48, 30, 123456000, time.UTC)
	tests := []KeyInfo{
		{KeyID: "key_0123456789az", Account: "demo", Scopes: []Scope{ScopeRead, ScopeWrite}, CreatedAt: created},
		{KeyID: "key_0123456789az", Account: "acme", Scopes: []Scope{ScopeRead}, CreatedAt: created,
			ExpiresAt: created.Add(720 * time.Hour), RevokedAt: created.Add(time.Minute)},
	}
	for _, in := range tests {
		item := encodeKey("h", in)
		if got := item[attrCreatedAt].(*types.AttributeValueMemberS).Value; got != "2026-11-21T16:48:30.123456Z" {
			t.Errorf("created_at stored as %q, want the API's microsecond form", got)
		}
		if _, ok := item[attrExpiresAt]; ok == in.ExpiresAt.IsZero() {
			t.Errorf("expires_at present = %v for ExpiresAt %v", ok, in.ExpiresAt)
		}
		out, err := decodeKey(item)
		if err != nil {
			t.Fatalf("decodeKey: %v", err)
		}
		if !reflect.DeepEqual(out, in) {
			t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
		}
	}
}

func TestDecodeKey(t *testing.T) {
	good := func() map[string]types.AttributeValue {
		return encodeKey("h", KeyInfo{KeyID: "key_0123456789az", Account: "demo",
			Scopes: []Scope{ScopeRead}, CreatedAt: time.Unix(0, 0)})
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	tests := []struct {
		name    string
		change  func(map[string]types.AttributeValue)
		scopes  []Scope
		wantErr string
	}{
		{"string set", func(map[string]types.AttributeValue) {}, []Scope{ScopeRead}, ""},
		{"list of strings", func(m map[string]types.AttributeValue) {
			m[attrScopes] = &types.AttributeValueMemberL{Value: []types.AttributeValue{s("write"), s("read")}}
		}, []Scope{ScopeRead, ScopeWrite}, ""},
		{"no key_id: not a key item", func(m map[string]types.AttributeValue) { delete(m, attrKeyID) }, nil, "key_id is missing"},
		{"no account", func(m map[string]types.AttributeValue) { delete(m, attrAccount) }, nil, "account is missing"},
		{"empty account", func(m map[string]types.AttributeValue) { m[attrAccount] = s("") }, nil, "account is empty"},
		{"no scopes", func(m map[string]types.AttributeValue) { delete(m, attrScopes) }, nil, "scopes is missing"},
		{"unknown scope", func(m map[string]types.AttributeValue) {
			m[attrScopes] = &types.AttributeValueMemberSS{Value: []string{"root"}}
		}, nil, "unknown scope"},
		{"scopes as a string", func(m map[string]types.AttributeValue) { m[attrScopes] = s("read") }, nil, "want a string set"},
		{"number in scope list", func(m map[string]types.AttributeValue) {
			m[attrScopes] = &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: "1"}}}
		}, nil, "want strings"},
		{"bad time", func(m map[string]types.AttributeValue) { m[attrExpiresAt] = s("tomorrow") }, nil, "expires_at is not an ISO-8601 time"},
		{"time as number", func(m map[string]types.AttributeValue) {
			m[attrRevokedAt] = &types.AttributeValueMemberN{Value: "1"}
		}, nil, "want a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			item := good()
			tt.change(item)
			k, err := decodeKey(item)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("decodeKey error = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(k.Scopes, tt.scopes) {
				t.Errorf("scopes = %v, want %v", k.Scopes, tt.scopes)
			}
		})
	}
}

func TestKeyInfoActive(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		k    KeyInfo
		want bool
	}{
		{"plain", KeyInfo{}, true},
		{"expires later", KeyInfo{ExpiresAt: now.Add(time.Second)}, true},
		{"expires now", KeyInfo{ExpiresAt: now}, false},
		{"expired", KeyInfo{ExpiresAt: now.Add(-time.Second)}, false},
		{"revoked", KeyInfo{RevokedAt: now.Add(-time.Hour)}, false},
	}
	for _, tt := range tests {
		if got := tt.k.Active(now); got != tt.want {
			t.Errorf("%s: Active = %v, want %v", tt.name, got, tt.want)
		}
	}
}
