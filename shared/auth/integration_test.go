package auth_test

// These tests run against DynamoDB Local (shared/local/ddblocal), on tables
// created from template.yaml: no fake stands in for DynamoDB here.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/auth"
	"contentapi/shared/local/ddblocal"
)

func keysTable(t *testing.T) (*dynamodb.Client, string) {
	t.Helper()
	env := ddblocal.NewTestEnv(t)
	table := env.Tables["ApiKeysTable"]
	if table == "" {
		t.Fatalf("template.yaml has no ApiKeysTable; tables: %v", env.Tables)
	}
	return env.Client, table
}

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var readWrite = []auth.Scope{auth.ScopeRead, auth.ScopeWrite}

func TestCreateAuthenticateRevoke(t *testing.T) {
	db, table := keysTable(t)
	ctx := t.Context()
	keys := auth.NewKeys(db, table, auth.PublicChecksum)

	key, info, err := keys.Create(ctx, "acme", readWrite, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.PublicChecksum.Parse(key); err != nil {
		t.Fatalf("Create returned a key that does not parse: %v", err)
	}
	if !strings.HasPrefix(info.KeyID, "key_") || info.Account != "acme" || !slices.Equal(info.Scopes, readWrite) ||
		info.CreatedAt.IsZero() || !info.ExpiresAt.IsZero() || !info.RevokedAt.IsZero() {
		t.Errorf("KeyInfo = %+v", info)
	}

	// Stored under the hex SHA-256 of the key, and the plaintext nowhere.
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table),
		Key:       map[string]types.AttributeValue{"key_hash": &types.AttributeValueMemberS{Value: hexSHA256(key)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Item) == 0 {
		t.Fatal("no item under the key's SHA-256")
	}
	if dump := fmt.Sprintf("%#v", out.Item); strings.Contains(dump, key[3:20]) {
		t.Error("the stored item contains the plaintext key")
	}

	const ttl = time.Second
	cached := auth.NewAuthenticator(db, table, ttl, auth.PublicChecksum)
	uncached := auth.NewAuthenticator(db, table, 0, auth.PublicChecksum)
	p, err := cached.Authenticate(ctx, key)
	seen := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	want := auth.Principal{Account: "acme", KeyID: info.KeyID, Scopes: readWrite}
	if p.Account != want.Account || p.KeyID != want.KeyID || !slices.Equal(p.Scopes, want.Scopes) {
		t.Errorf("principal = %+v, want %+v", p, want)
	}

	if err := keys.Revoke(ctx, info.KeyID); err != nil {
		t.Fatal(err)
	}
	if _, err := uncached.Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("without a cache, a revoked key: %v, want ErrUnauthenticated at once", err)
	}
	// The documented revocation delay: the warm cache still answers...
	_, err = cached.Authenticate(ctx, key)
	if time.Since(seen) < ttl && err != nil {
		t.Errorf("within the cache TTL the revoked key was refused (%v): the cache was not used", err)
	}
	// ...until its TTL runs out.
	time.Sleep(ttl - time.Since(seen) + 10*time.Millisecond)
	if _, err := cached.Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("after the cache TTL, a revoked key: %v, want ErrUnauthenticated", err)
	}

	// Revoking again is no error and keeps the first revocation time.
	first := listOne(t, keys, info.KeyID).RevokedAt
	if first.IsZero() {
		t.Fatal("List shows the key as not revoked")
	}
	time.Sleep(2 * time.Millisecond)
	if err := keys.Revoke(ctx, info.KeyID); err != nil {
		t.Errorf("second Revoke: %v", err)
	}
	if again := listOne(t, keys, info.KeyID).RevokedAt; !again.Equal(first) {
		t.Errorf("second Revoke moved revoked_at from %v to %v", first, again)
	}
}

func listOne(t *testing.T, keys *auth.Keys, id string) auth.KeyInfo {
	t.Helper()
	all, err := keys.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if k.KeyID == id {
			return k
		}
	}
	t.Fatalf("List has no %s", id)
	return auth.KeyInfo{}
}

func TestAuthenticateAgainstTable(t *testing.T) {
	db, table := keysTable(t)
	ctx := t.Context()
	keys := auth.NewKeys(db, table, auth.PublicChecksum)
	a := auth.NewAuthenticator(db, table, time.Minute, auth.PublicChecksum)

	readKey, readInfo, err := keys.Create(ctx, "reader", []auth.Scope{auth.ScopeRead}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("read-only key", func(t *testing.T) {
		p, err := a.Authenticate(ctx, readKey)
		if err != nil {
			t.Fatal(err)
		}
		if p.Account != "reader" || p.KeyID != readInfo.KeyID || !p.Allows(auth.ScopeRead) || p.Allows(auth.ScopeWrite) {
			t.Errorf("principal = %+v: want account reader, read but not write", p)
		}
	})

	t.Run("expired key", func(t *testing.T) {
		const life = 1500 * time.Millisecond
		key, _, err := keys.Create(ctx, "brief", readWrite, time.Now().Add(life))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(ctx, key); err != nil {
			t.Fatalf("before expiry: %v", err)
		}
		time.Sleep(life)
		// Still in the cache, whose TTL is a minute: expiry is checked anyway.
		if _, err := a.Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("after expiry, from the cache: %v, want ErrUnauthenticated", err)
		}
		if _, err := auth.NewAuthenticator(db, table, time.Minute, auth.PublicChecksum).Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("after expiry, from the table: %v, want ErrUnauthenticated", err)
		}
	})

	t.Run("unknown and malformed keys", func(t *testing.T) {
		// The last character changed: to "x", or to "y" when the key
		// already ends in "x" (one key in 62), which would leave it valid.
		changed := readKey[:len(readKey)-1] + "x"
		if changed == readKey {
			changed = readKey[:len(readKey)-1] + "y"
		}
		for _, k := range []string{"ck_" + strings.Repeat("0", 49), auth.DemoKey, "", "Bearer " + readKey, changed} {
			if _, err := a.Authenticate(ctx, k); !errors.Is(err, auth.ErrUnauthenticated) {
				t.Errorf("Authenticate(%.12q...) = %v, want ErrUnauthenticated", k, err)
			}
		}
	})

	t.Run("missing table is a failure, not a refusal", func(t *testing.T) {
		_, err := auth.NewAuthenticator(db, table+"-missing", time.Minute, auth.PublicChecksum).Authenticate(ctx, readKey)
		if err == nil || errors.Is(err, auth.ErrUnauthenticated) {
			t.Fatalf("Authenticate on a missing table = %v, want an infrastructure error", err)
		}
		if strings.Contains(err.Error(), readKey[3:20]) || strings.Contains(err.Error(), hexSHA256(readKey)) {
			t.Errorf("error %q shows the key or its hash", err)
		}
	})
}

func TestImport(t *testing.T) {
	db, table := keysTable(t)
	ctx := t.Context()
	keys := auth.NewKeys(db, table, auth.PublicChecksum)

	for range 2 { // idempotent: the local stack imports on every start
		if err := keys.Import(ctx, auth.DemoKey, auth.DemoAccount, readWrite); err != nil {
			t.Fatalf("Import(DemoKey): %v", err)
		}
	}
	p, err := auth.NewAuthenticator(db, table, time.Minute, auth.PublicChecksum).Authenticate(ctx, auth.DemoKey)
	if err != nil {
		t.Fatal(err)
	}
	if p.Account != "demo" || !p.Allows(auth.ScopeWrite) {
		t.Errorf("DemoKey principal = %+v, want demo with write", p)
	}
	if infos, err := keys.List(ctx, auth.DemoAccount); err != nil || len(infos) != 1 {
		t.Errorf("List(demo) after two imports = %v, %v; want one key", infos, err)
	}

	tests := []struct {
		name    string
		account string
		scopes  []auth.Scope
	}{
		{"other account", "acme", readWrite},
		{"other scopes", auth.DemoAccount, []auth.Scope{auth.ScopeRead}},
	}
	for _, tt := range tests {
		err := keys.Import(ctx, auth.DemoKey, tt.account, tt.scopes)
		if !errors.Is(err, auth.ErrKeyExists) {
			t.Errorf("%s: Import = %v, want ErrKeyExists", tt.name, err)
		}
	}
	if p2, err := auth.NewAuthenticator(db, table, 0, auth.PublicChecksum).Authenticate(ctx, auth.DemoKey); err != nil || p2.Account != "demo" {
		t.Errorf("a refused Import changed the stored key: %+v, %v", p2, err)
	}

	if err := keys.Import(ctx, auth.DemoKey[:len(auth.DemoKey)-1]+"0", "demo", readWrite); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("Import of a malformed key = %v, want ErrUnauthenticated", err)
	}

	if err := keys.Revoke(ctx, p.KeyID); err != nil {
		t.Fatal(err)
	}
	if err := keys.Import(ctx, auth.DemoKey, auth.DemoAccount, readWrite); !errors.Is(err, auth.ErrKeyExists) {
		t.Errorf("Import of a revoked key = %v, want ErrKeyExists (it must not come back to life)", err)
	}
}

func TestList(t *testing.T) {
	db, table := keysTable(t)
	ctx := t.Context()
	keys := auth.NewKeys(db, table, auth.PublicChecksum)

	var plain []string
	made := map[string]auth.KeyInfo{}
	for _, acct := range []string{"zeta", "acme", "acme", "acme"} {
		key, info, err := keys.Create(ctx, acct, []auth.Scope{auth.ScopeRead}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		plain = append(plain, key)
		made[info.KeyID] = info
	}
	all, err := keys.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 {
		t.Fatalf("List(\"\") = %d entries, want the 4 keys: %+v", len(all), all)
	}
	for i, k := range all {
		if want, ok := made[k.KeyID]; !ok || want.Account != k.Account || !want.CreatedAt.Equal(k.CreatedAt) || !slices.Equal(want.Scopes, k.Scopes) {
			t.Errorf("List entry %+v, created as %+v", k, want)
		}
		if i > 0 && (all[i-1].Account > k.Account || all[i-1].Account == k.Account && all[i-1].CreatedAt.After(k.CreatedAt)) {
			t.Errorf("List not ordered by account, then creation: %v before %v", all[i-1], k)
		}
	}
	dump := fmt.Sprintf("%+v %#v", all, all)
	for _, k := range plain {
		if strings.Contains(dump, k[3:20]) || strings.Contains(dump, hexSHA256(k)) {
			t.Fatal("List output holds a key or its hash")
		}
	}

	acme, err := keys.List(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(acme) != 3 {
		t.Errorf("List(acme) = %d entries, want 3", len(acme))
	}
	for _, k := range acme {
		if k.Account != "acme" {
			t.Errorf("List(acme) returned a key of %s", k.Account)
		}
	}
	if none, err := keys.List(ctx, "nobody"); err != nil || len(none) != 0 {
		t.Errorf("List(nobody) = %v, %v; want nothing", none, err)
	}
	if _, err := keys.List(ctx, "bad name"); err == nil {
		t.Error("List accepted an invalid account name")
	}
}

func TestKeysRefuseBadInput(t *testing.T) {
	db, table := keysTable(t)
	ctx := t.Context()
	keys := auth.NewKeys(db, table, auth.PublicChecksum)

	creates := []struct {
		name    string
		account string
		scopes  []auth.Scope
		expires time.Time
	}{
		{"empty account", "", readWrite, time.Time{}},
		{"account with a space", "ac me", readWrite, time.Time{}},
		{"account too long", strings.Repeat("a", 65), readWrite, time.Time{}},
		{"no scopes", "acme", nil, time.Time{}},
		{"unknown scope", "acme", []auth.Scope{"admin"}, time.Time{}},
		{"expiry in the past", "acme", readWrite, time.Now().Add(-time.Minute)},
	}
	for _, tt := range creates {
		if key, _, err := keys.Create(ctx, tt.account, tt.scopes, tt.expires); err == nil || key != "" {
			t.Errorf("%s: Create = %q, %v; want an error and no key", tt.name, key, err)
		}
	}
	if err := keys.Import(ctx, auth.DemoKey, "", readWrite); err == nil {
		t.Error("Import with an empty account succeeded")
	}
	if all, err := keys.List(ctx, ""); err != nil || len(all) != 0 {
		t.Errorf("after refused creates the table holds %v, %v", all, err)
	}

	for _, id := range []string{"key_000000000000", "key_nope", "", auth.DemoKey} {
		err := keys.Revoke(ctx, id)
		if !errors.Is(err, auth.ErrKeyNotFound) {
			t.Errorf("Revoke(%.16q) = %v, want ErrKeyNotFound", id, err)
		}
		if err != nil && strings.Contains(err.Error(), auth.DemoKey[3:20]) {
			t.Errorf("Revoke error %q repeats the key it was given", err)
		}
	}
}

// Revoke finds the key through the key-id index: one Query and one
// conditional UpdateItem, never a Scan, however many keys the table holds.
func TestRevokeLooksUpOneKey(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	ctx := t.Context()
	db, meter := env.Metered(t)
	keys := auth.NewKeys(db, env.Tables["ApiKeysTable"], auth.PublicChecksum)
	var ids []string
	for range 5 {
		_, info, err := keys.Create(ctx, "acme", readWrite, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.KeyID)
	}
	calls := meter.Measure(func() {
		if err := keys.Revoke(ctx, ids[2]); err != nil {
			t.Fatal(err)
		}
	})
	if ops := strings.Join(ddblocal.MeteredOps(calls), ","); ops != "Query,UpdateItem" {
		t.Errorf("Revoke made %s; want Query,UpdateItem and no Scan", ops)
	}
	for i, id := range ids {
		if revoked := !listOne(t, keys, id).RevokedAt.IsZero(); revoked != (i == 2) {
			t.Errorf("key %d revoked = %v", i, revoked)
		}
	}

	calls = meter.Measure(func() {
		if err := keys.Revoke(ctx, "key_000000000000"); !errors.Is(err, auth.ErrKeyNotFound) {
			t.Errorf("Revoke of an unknown id = %v, want ErrKeyNotFound", err)
		}
	})
	if ops := strings.Join(ddblocal.MeteredOps(calls), ","); ops != "Query" {
		t.Errorf("Revoke of an unknown id made %s, want the one Query", ops)
	}
}

// Keys made with a secret work with that secret only, end to end.
func TestKeyedChecksumAgainstTable(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	db, table := env.Client, env.Tables["ApiKeysTable"]
	ctx := t.Context()
	secret, err := auth.NewChecksum(strings.Repeat("x", auth.MinSecretLen))
	if err != nil {
		t.Fatal(err)
	}
	key, info, err := auth.NewKeys(db, table, secret).Create(ctx, "acme", readWrite, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := auth.NewAuthenticator(db, table, 0, secret).Authenticate(ctx, key); err != nil || p.KeyID != info.KeyID {
		t.Fatalf("with the secret: %+v, %v", p, err)
	}
	metered, meter := env.Metered(t)
	calls := meter.Measure(func() {
		if _, err := auth.NewAuthenticator(metered, table, 0, auth.PublicChecksum).Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("with the public checksum: %v, want ErrUnauthenticated", err)
		}
		if err := auth.NewKeys(metered, table, secret).Import(ctx, auth.DemoKey, auth.DemoAccount, readWrite); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("importing the demo key under a secret = %v, want ErrUnauthenticated", err)
		}
	})
	if len(calls) != 0 {
		t.Errorf("keys refused by their checksum cost calls: %v", calls)
	}
}
