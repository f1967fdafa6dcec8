package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
)

func TestRunUsageErrors(t *testing.T) {
	// An endpoint where nothing listens: every case must fail before any
	// DynamoDB call, as a usage error.
	nowhere := []string{"--endpoint", "http://127.0.0.1:1"}
	tests := []struct {
		name string
		args []string
	}{
		{"no command", nil},
		{"unknown command", []string{"delete"}},
		{"create without account", []string{"create"}},
		{"create with bad scope", []string{"create", "--account", "a", "--scope", "admin"}},
		{"create with empty scope", []string{"create", "--account", "a", "--scope", ""}},
		{"create with bad expiry", []string{"create", "--account", "a", "--expires", "soon"}},
		{"create with negative expiry", []string{"create", "--account", "a", "--expires", "-5m"}},
		{"create with an argument", []string{"create", "--account", "a", "extra"}},
		{"unknown flag", []string{"create", "--acount", "a"}},
		{"list with an argument", []string{"list", "acme"}},
		{"revoke without id", []string{"revoke"}},
		{"revoke two ids", []string{"revoke", "key_000000000000", "key_000000000001"}},
		{"revoke given the key itself", []string{"revoke", auth.DemoKey}},
		{"endpoint not a URL", []string{"list", "--endpoint", "localhost:8000"}},
		{"endpoint of another scheme", []string{"list", "--endpoint", "ftp://127.0.0.1:8000"}},
		{"region without aws", []string{"list", "--region", "us-east-1"}},
		{"empty table", []string{"list", "--table", ""}},
		{"limits without account", []string{"limits", "--images", "5"}},
		{"limits negative", []string{"limits", "--account", "a", "--images", "-1"}},
		{"limits in words", []string{"limits", "--account", "a", "--words", "lots"}},
		{"limits fractional", []string{"limits", "--account", "a", "--documents", "2.5"}},
		{"limits with an argument", []string{"limits", "--account", "a", "extra"}},
		{"limits with an empty table", []string{"limits", "--account", "a", "--images-table", ""}},
		{"limits on the keys table", []string{"limits", "--account", "a", "--table", "ApiKeysTable"}},
		{"limits with region without aws", []string{"limits", "--account", "a", "--region", "us-east-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if len(args) > 0 && args[0] != "delete" {
				args = append(append([]string{args[0]}, nowhere...), args[1:]...)
			}
			var stdout, stderr bytes.Buffer
			err := run(args, &stdout, &stderr)
			if !errors.Is(err, errUsage) {
				t.Fatalf("run(%q) = %v, want a usage error", args, err)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			if strings.Contains(err.Error(), auth.DemoKey[3:20]) {
				t.Errorf("error %q repeats the key", err)
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"list", "-h"}, {"create", "--account", "a", "-help"}} {
		var stdout, stderr bytes.Buffer
		if err := run(args, &stdout, &stderr); err != nil {
			t.Fatalf("run(%q) = %v", args, err)
		}
		if !strings.Contains(stdout.String(), "apikey create --account NAME") {
			t.Errorf("run(%q) printed %q, want the usage", args, stdout.String())
		}
	}
}

func TestTargetDefaults(t *testing.T) {
	tests := []struct {
		name               string
		env                map[string]string
		args               []string
		wantTable, wantEnd string
		wantAWS            bool
	}{
		{name: "local stack", env: map[string]string{},
			wantTable: "ApiKeysTable", wantEnd: "http://127.0.0.1:8000"},
		{name: "local stack on another port", env: map[string]string{"DYNAMODB_PORT": "8123"},
			wantTable: "ApiKeysTable", wantEnd: "http://127.0.0.1:8123"},
		{name: "from the environment", env: map[string]string{"API_KEYS_TABLE": "prod-keys", "DYNAMODB_ENDPOINT": "http://ddb:9000", "DYNAMODB_PORT": "1"},
			wantTable: "prod-keys", wantEnd: "http://ddb:9000"},
		{name: "empty variables count as unset", env: map[string]string{"API_KEYS_TABLE": "", "DYNAMODB_ENDPOINT": ""},
			wantTable: "ApiKeysTable", wantEnd: "http://127.0.0.1:8000"},
		{name: "flags win", env: map[string]string{"API_KEYS_TABLE": "x", "DYNAMODB_ENDPOINT": "http://ddb:9000"},
			args:      []string{"--table", "k", "--endpoint", "http://127.0.0.1:7000"},
			wantTable: "k", wantEnd: "http://127.0.0.1:7000"},
		{name: "aws by name", env: map[string]string{"DYNAMODB_ENDPOINT": "http://ddb:9000"},
			args:      []string{"--endpoint", "aws"},
			wantTable: "ApiKeysTable", wantEnd: "aws", wantAWS: true},
		{name: "aws by explicit empty flag", env: map[string]string{"DYNAMODB_ENDPOINT": "http://ddb:9000"},
			args:      []string{"--endpoint="},
			wantTable: "ApiKeysTable", wantEnd: "", wantAWS: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range []string{"API_KEYS_TABLE", "DYNAMODB_ENDPOINT", "DYNAMODB_PORT"} {
				t.Setenv(name, tt.env[name])
			}
			var tg target
			if _, err := parse(newFlags("list", &tg), tt.args); err != nil {
				t.Fatal(err)
			}
			if tg.table != tt.wantTable || tg.endpoint != tt.wantEnd || tg.aws() != tt.wantAWS {
				t.Errorf("target = %+v (aws %v), want table %q, endpoint %q, aws %v", tg, tg.aws(), tt.wantTable, tt.wantEnd, tt.wantAWS)
			}
			if where := tg.where(); tt.wantAWS != strings.Contains(where, "in AWS") {
				t.Errorf("where() = %q", where)
			}
		})
	}
}

func TestParseInterleaved(t *testing.T) {
	tests := []struct {
		args      []string
		wantPos   []string
		wantTable string
	}{
		{[]string{"key_a", "--table", "T"}, []string{"key_a"}, "T"},
		{[]string{"--table", "T", "key_a"}, []string{"key_a"}, "T"},
		{[]string{"a", "--table=T", "b"}, []string{"a", "b"}, "T"},
		{[]string{"--", "--table", "T"}, []string{"--table", "T"}, "ApiKeysTable"},
	}
	for _, tt := range tests {
		t.Setenv("API_KEYS_TABLE", "")
		var tg target
		pos, err := parse(newFlags("revoke", &tg), tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(pos, " ") != strings.Join(tt.wantPos, " ") || tg.table != tt.wantTable {
			t.Errorf("parse(%q) = %q, table %q; want %q, table %q", tt.args, pos, tg.table, tt.wantPos, tt.wantTable)
		}
	}
}

func TestParseExpiry(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{in: "", want: time.Time{}},
		{in: "720h", want: now.Add(720 * time.Hour)},
		{in: "90m", want: now.Add(90 * time.Minute)},
		{in: "2027-01-01T00:00:00Z", want: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{in: "2027-01-01T02:00:00+02:00", want: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{in: "2027-01-01", want: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{in: "0s", wantErr: true},
		{in: "-1h", wantErr: true},
		{in: "30d", wantErr: true},
		{in: "tomorrow", wantErr: true},
		{in: "2027-13-01", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseExpiry(tt.in, now)
		if (err != nil) != tt.wantErr || !got.Equal(tt.want) {
			t.Errorf("parseExpiry(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// The whole command against DynamoDB Local.
func TestRunAgainstDynamoDBLocal(t *testing.T) {
	t.Setenv(checksumEnv, "")
	env := ddblocal.NewTestEnv(t)
	table := env.Tables["ApiKeysTable"]
	at := []string{"--table", table, "--endpoint", env.Endpoint}
	cmd := func(args ...string) (stdout, stderr string, err error) {
		var out, errOut bytes.Buffer
		err = run(append(args[:1:1], append(at, args[1:]...)...), &out, &errOut)
		return out.String(), errOut.String(), err
	}

	stdout, stderr, err := cmd("create", "--account", "acme", "--scope", "read,write", "--expires", "720h")
	if err != nil {
		t.Fatalf("create: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	key := lines[len(lines)-1]
	if len(lines) != 1 || !strings.HasSuffix(stdout, "\n") {
		t.Errorf("create stdout = %q, want the key alone on one line", stdout)
	}
	if _, err := auth.PublicChecksum.Parse(key); err != nil {
		t.Fatalf("create printed %q, which is not a key: %v", key, err)
	}
	if strings.Contains(stderr, key) {
		t.Error("create's summary on stderr repeats the key")
	}
	for _, want := range []string{"acme", "read,write", "expires", table} {
		if !strings.Contains(stderr, want) {
			t.Errorf("create summary %q lacks %q", stderr, want)
		}
	}

	// The key works, with the scopes asked for.
	p, err := auth.NewAuthenticator(env.Client, table, 0, auth.PublicChecksum).Authenticate(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if p.Account != "acme" || !p.Allows(auth.ScopeWrite) || !strings.Contains(stderr, p.KeyID) {
		t.Errorf("principal %+v; summary %q", p, stderr)
	}

	// Default scope is read: least privilege unless asked.
	stdout, _, err = cmd("create", "--account", "other")
	if err != nil {
		t.Fatal(err)
	}
	readOnly := strings.TrimSpace(stdout)
	if p, err := auth.NewAuthenticator(env.Client, table, 0, auth.PublicChecksum).Authenticate(t.Context(), readOnly); err != nil || p.Allows(auth.ScopeWrite) {
		t.Errorf("key made without --scope: %+v, %v; want read only", p, err)
	}

	stdout, _, err = cmd("list")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, p.KeyID) || !strings.Contains(stdout, "active") || strings.Count(stdout, "\n") != 3 {
		t.Errorf("list = %q, want a header and two active keys", stdout)
	}
	for _, secret := range []string{key[3:20], readOnly[3:20], hexSHA(key), hexSHA(readOnly)} {
		if strings.Contains(stdout, secret) {
			t.Fatal("list shows a key or its hash")
		}
	}
	stdout, _, err = cmd("list", "--account", "other")
	if err != nil || strings.Contains(stdout, p.KeyID) || strings.Count(stdout, "\n") != 2 {
		t.Errorf("list --account other = %q, %v; want only other's key", stdout, err)
	}

	stdout, _, err = cmd("revoke", p.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "Revoked "+p.KeyID) {
		t.Errorf("revoke printed %q", stdout)
	}
	if _, err := auth.NewAuthenticator(env.Client, table, 0, auth.PublicChecksum).Authenticate(t.Context(), key); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("revoked key: %v, want ErrUnauthenticated", err)
	}
	stdout, _, _ = cmd("list", "--account", "acme")
	if !strings.Contains(stdout, "revoked") {
		t.Errorf("list after revoke = %q, want the key shown revoked", stdout)
	}

	_, _, err = cmd("revoke", "key_000000000000")
	if !errors.Is(err, auth.ErrKeyNotFound) || errors.Is(err, errUsage) {
		t.Errorf("revoke of an unknown id = %v, want ErrKeyNotFound", err)
	}
	if _, _, err := cmd("create", "--account", "acme", "--expires", "2020-01-01T00:00:00Z"); err == nil {
		t.Error("create with an expiry in the past succeeded")
	}

	// With no flags, the table and endpoint come from the environment.
	t.Setenv("API_KEYS_TABLE", table)
	t.Setenv("DYNAMODB_ENDPOINT", env.Endpoint)
	var out bytes.Buffer
	if err := run([]string{"list", "--account", "other"}, &out, &out); err != nil || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("list from the environment = %q, %v", out.String(), err)
	}
}

// limits sets and prints an account's own limits in the record tables and
// the webhooks' (the deliveries'); a kind not given keeps its limit.
func TestLimitsAgainstDynamoDBLocal(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	at := []string{"--endpoint", env.Endpoint, "--webhooks-table", env.Tables[app.WebhooksTable]}
	for _, r := range app.Resources {
		at = append(at, "--"+r.Def.Name+"-table", env.Tables[r.Table()])
	}
	limits := func(args ...string) map[string]string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(append(append([]string{"limits"}, at...), args...), &out, &errOut); err != nil {
			t.Fatalf("limits %q: %v\n%s", args, err, errOut.String())
		}
		if !strings.Contains(errOut.String(), env.Tables["DocumentsTable"]) {
			t.Errorf("limits does not say where: %q", errOut.String())
		}
		got := map[string]string{}
		for i, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if f := strings.Fields(line); i > 0 && len(f) == 2 {
				got[f[0]] = f[1]
			}
		}
		return got
	}
	want := func(got map[string]string, images, documents, words string) {
		t.Helper()
		if got["images"] != images || got["documents"] != documents || got["words"] != words {
			t.Errorf("limits %v, want images %s, documents %s, words %s", got, images, documents, words)
		}
	}
	want(limits("--account", "acme"), "default", "default", "default")
	want(limits("--account", "acme", "--images", "100", "--words", "50000", "--documents", "500"), "100", "500", "50000")
	want(limits("--account", "acme", "--images", "0"), "0", "500", "50000")
	want(limits("--account", "acme", "--documents", "unlimited", "--words", "default"), "0", "unlimited", "default")
	want(limits("--account", "globex"), "default", "default", "default")
	// As make limits passes them: each kind's variable, a flag first.
	t.Setenv("IMAGES", "7")
	t.Setenv("WORDS", "unlimited")
	want(limits("--account", "globex"), "default", "default", "default")
	want(limits("--account", "globex", "--from-env", "--images", "8"), "8", "default", "unlimited")
	t.Setenv("IMAGES", "")
	t.Setenv("WORDS", "")
	// The deliveries' limit, kept in the webhooks' table, as make limits
	// DELIVERIES=n passes it.
	t.Setenv("DELIVERIES", "300")
	if got := limits("--account", "acme", "--from-env"); got["deliveries"] != "300" || got["images"] != "0" {
		t.Errorf("limits %v, want deliveries 300 beside images 0", got)
	}
	t.Setenv("DELIVERIES", "")
	// The spend limit, in dollars, as make limits SPEND_USD=12.5 passes it,
	// or --spend-usd; shown as it is typed.
	t.Setenv("SPEND_USD", "12.5")
	if got := limits("--account", "acme", "--from-env"); got["spend_usd"] != "12.5" {
		t.Errorf("limits %v, want spend_usd 12.5", got)
	}
	t.Setenv("SPEND_USD", "")
	if got := limits("--account", "acme"); got["spend_usd"] != "12.5" {
		t.Errorf("limits %v, want spend_usd 12.5 kept", got)
	}
	if got := limits("--account", "acme", "--spend-usd", "0.000000001"); got["spend_usd"] != "0.000000001" {
		t.Errorf("limits %v, want spend_usd 0.000000001", got)
	}
	limits("--account", "acme", "--spend-usd", "12.5")

	// What the service then applies: no image, documents without limit,
	// 300 deliveries, $12.50 of spend.
	own, err := app.SetLimits(t.Context(), env.Client, env.Tables, "acme", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(own) != 4 || own[quota.Images] != quota.Max(0) || own[quota.Documents] != quota.Unlimited || own[quota.Deliveries] != quota.Max(300) ||
		own[quota.Spend] != quota.Max(12_500_000_000) {
		t.Errorf("stored limits %v", own)
	}
}

func hexSHA(key string) string {
	h, err := auth.PublicChecksum.Parse(key)
	if err != nil {
		panic(err)
	}
	return h
}

// Keys for a deployed stack carry its checksum secret, taken from the
// environment; without it, create refuses to make a key AWS would refuse,
// before any call.
func TestCreateWithTheStackSecret(t *testing.T) {
	t.Setenv(checksumEnv, "")
	var stdout, stderr bytes.Buffer
	err := run([]string{"create", "--endpoint", "aws", "--region", "us-east-1", "--table", "t", "--account", "acme"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), checksumEnv) || stdout.Len() != 0 {
		t.Fatalf("create in AWS without the secret = %v, stdout %q; want an error naming %s", err, stdout.String(), checksumEnv)
	}
	t.Setenv(checksumEnv, "short")
	if err := run([]string{"create", "--endpoint", "http://127.0.0.1:1", "--account", "acme"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), checksumEnv) {
		t.Errorf("create with a short secret = %v, want an error", err)
	}

	env := ddblocal.NewTestEnv(t)
	table := env.Tables["ApiKeysTable"]
	secret := strings.Repeat("q", auth.MinSecretLen)
	t.Setenv(checksumEnv, secret)
	stdout.Reset()
	stderr.Reset()
	if err := run([]string{"create", "--table", table, "--endpoint", env.Endpoint, "--account", "acme"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(stdout.String())
	if !strings.Contains(stderr.String(), "not with make run") {
		t.Errorf("stderr %q does not warn that the local stack will refuse the key", stderr.String())
	}
	keyed, err := auth.NewChecksum(secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.NewAuthenticator(env.Client, table, 0, keyed).Authenticate(t.Context(), key); err != nil {
		t.Errorf("the stack's functions refuse the key: %v", err)
	}
	if _, err := auth.NewAuthenticator(env.Client, table, 0, auth.PublicChecksum).Authenticate(t.Context(), key); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("the public checksum accepts a key made with the secret: %v", err)
	}
}

// revoke finds the key through the key-id index: one Query, one UpdateItem,
// and no Scan, as DynamoDB Local sees the command's requests.
func TestRevokeMakesNoScan(t *testing.T) {
	t.Setenv(checksumEnv, "")
	env := ddblocal.NewTestEnv(t)
	table := env.Tables["ApiKeysTable"]
	var mu sync.Mutex
	var ops []string
	target, err := url.Parse(env.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		mu.Lock()
		ops = append(ops, op)
		mu.Unlock()
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	keys := auth.NewKeys(env.Client, table, auth.PublicChecksum)
	var id string
	for range 3 {
		_, info, err := keys.Create(t.Context(), "acme", []auth.Scope{auth.ScopeRead}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		id = info.KeyID
	}
	var stdout, stderr bytes.Buffer
	if err := run([]string{"revoke", id, "--table", table, "--endpoint", proxy.URL}, &stdout, &stderr); err != nil {
		t.Fatalf("revoke: %v\n%s", err, stderr.String())
	}
	if got := strings.Join(ops, ","); got != "Query,UpdateItem" {
		t.Errorf("revoke made %s; want Query,UpdateItem and no Scan", got)
	}
}
