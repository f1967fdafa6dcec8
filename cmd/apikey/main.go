// Command apikey creates, lists and revokes API keys, and sets accounts'
// monthly limits, in the local stack's DynamoDB Local or in AWS.
//
//	apikey create --account NAME [--scope read|write|read,write] [--expires 720h|2027-01-01T00:00:00Z]
//	apikey list [--account NAME]
//	apikey revoke KEY_ID
//	apikey limits --account NAME [--images N] [--documents N] [--words N] [--reads N]
//
// The key commands take --table (default $API_KEYS_TABLE, else
// ApiKeysTable, the local stack's name); limits takes the record tables
// instead (--images-table, default $IMAGES_TABLE, else ImagesTable, and so
// for each resource). A limit is a whole number (0 allows none), unlimited,
// or default (the deployment's); a kind not given keeps its limit. Every
// command takes --endpoint (default $DYNAMODB_ENDPOINT, else
// http://127.0.0.1:${DYNAMODB_PORT:-8000}, the local stack). --endpoint aws,
// or an explicitly empty --endpoint, means AWS itself, through the default
// credential chain, in --region (default: $AWS_REGION or the profile's).
//
// create makes the key's checksum with $KEY_CHECKSUM_SECRET, the deployed
// stack's secret (its KeyChecksumSecretArn output), so that the functions
// accept the key; without it, with the public checksum the local stack uses.
// Against AWS the secret is required: a key with the public checksum would
// be refused there.
//
// create prints a summary to stderr and the key alone on stdout, so that
//
//	KEY=$(go run ./cmd/apikey create --account demo --scope read,write)
//
// captures exactly the key. The key is shown this once and stored nowhere.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
)

const usage = `usage:
  apikey create --account NAME [--scope read|write|read,write] [--expires 720h|2027-01-01T00:00:00Z]
  apikey list [--account NAME]
  apikey revoke KEY_ID
  apikey limits --account NAME [--images N] [--documents N] [--words N] [--reads N]

limits sets an account's monthly limits and prints them: N is a whole number
(0 allows none), unlimited, or default (the deployment's); a kind not given
keeps its limit.

flags of create, list and revoke:
  --table NAME      keys table (default $API_KEYS_TABLE, else ApiKeysTable)

flags of limits:
  --images-table NAME, --documents-table NAME
                    record tables (default $IMAGES_TABLE, else ImagesTable;
                    $DOCUMENTS_TABLE, else DocumentsTable)

flags of every command:
  --endpoint URL    DynamoDB endpoint (default $DYNAMODB_ENDPOINT, else
                    http://127.0.0.1:${DYNAMODB_PORT:-8000}); "aws" or "" for AWS itself
  --region NAME     AWS region with --endpoint aws (default $AWS_REGION or the profile's)

environment: KEY_CHECKSUM_SECRET, the deployed stack's checksum secret, which
create needs for keys in AWS (see docs/deploying.md, "The first key")
`

// errUsage marks mistakes in the command line: exit status 2, not 1.
var errUsage = errors.New("usage")

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "apikey:", err)
	if errors.Is(err, errUsage) {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	os.Exit(1)
}

// run is the whole command, apart from the process around it.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no command given", errUsage)
	}
	var err error
	switch cmd, args := args[0], args[1:]; cmd {
	case "create":
		err = create(args, stdout, stderr)
	case "list":
		err = list(args, stdout, stderr)
	case "revoke":
		err = revoke(args, stdout, stderr)
	case "limits":
		err = limits(args, stdout, stderr)
	case "help", "-h", "-help", "--help":
		err = flag.ErrHelp
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, cmd)
	}
	if errors.Is(err, flag.ErrHelp) {
		// Asked for, so on stdout and no failure.
		fmt.Fprint(stdout, usage)
		return nil
	}
	return err
}

// target is where a command works: the flags every command shares.
type target struct {
	table    string
	endpoint string
	region   string
}

// newFlags are the flags of the key commands: the target's and the keys
// table.
func newFlags(name string, t *target) *flag.FlagSet {
	fs := newTargetFlags(name, t)
	fs.StringVar(&t.table, "table", envOr(app.EnvKeysTable, "ApiKeysTable"), "keys table")
	return fs
}

// newTargetFlags are the flags every command has: where DynamoDB is.
func newTargetFlags(name string, t *target) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Parse errors come back as errors and the usage is printed once, by main.
	fs.SetOutput(io.Discard)
	fs.StringVar(&t.endpoint, "endpoint", defaultEndpoint(), `DynamoDB endpoint; "aws" or "" for AWS`)
	fs.StringVar(&t.region, "region", "", "AWS region, with --endpoint aws")
	return fs
}

// envOr reads an environment variable, treating set-but-empty as unset, as
// the shell's ${VAR:-default} does: an empty variable left in an env file
// must not silently send the command to AWS.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func defaultEndpoint() string {
	return envOr(app.EnvEndpoint, "http://127.0.0.1:"+envOr(ddblocal.PortEnv, strconv.Itoa(ddblocal.DefaultPort)))
}

// parse reads flags and returns the positional arguments. Unlike
// flag.Parse it accepts flags after positional ones (revoke KEY_ID --table
// T), as people type them; everything after "--" is positional.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos, rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

// parseNoArgs reads flags for a command that takes no positional
// arguments.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: %s takes no arguments, got %q", errUsage, fs.Name(), pos[0])
	}
	return nil
}

// checksumEnv holds the deployed stack's checksum secret: the functions'
// own variable, so one export serves both.
const checksumEnv = app.EnvKeyChecksum

func (t target) keys(ctx context.Context, checksum auth.Checksum) (*auth.Keys, error) {
	if t.table == "" {
		return nil, fmt.Errorf("%w: --table is empty", errUsage)
	}
	db, err := t.client(ctx)
	if err != nil {
		return nil, err
	}
	return auth.NewKeys(db, t.table, checksum), nil
}

// checksum is the checksum create makes keys with: the deployed stack's
// secret from the environment, or locally the public one.
func (t target) checksum(stderr io.Writer) (auth.Checksum, error) {
	secret := os.Getenv(checksumEnv)
	if secret == "" && t.aws() {
		return auth.Checksum{}, fmt.Errorf("keys in AWS need the stack's checksum secret in %s; "+
			"read it from the stack's KeyChecksumSecretArn output as docs/deploying.md, The first key, shows", checksumEnv)
	}
	c, err := auth.NewChecksum(secret)
	if err != nil {
		return auth.Checksum{}, fmt.Errorf("%s: %w", checksumEnv, err)
	}
	if c.Keyed() && !t.aws() {
		fmt.Fprintf(stderr, "%s is set: the key works only where the functions have that secret, not with make run.\n", checksumEnv)
	}
	return c, nil
}

// where names the table and endpoint for messages, so that nobody mistakes
// a key made locally for one made in AWS or the other way round.
func (t target) where() string {
	if t.aws() {
		return fmt.Sprintf("table %s in AWS", t.table)
	}
	return fmt.Sprintf("table %s at %s", t.table, t.endpoint)
}

func (t target) aws() bool { return t.endpoint == "" || t.endpoint == "aws" }

func (t target) client(ctx context.Context) (*dynamodb.Client, error) {
	if t.region != "" && !t.aws() {
		return nil, fmt.Errorf("%w: --region is for --endpoint aws", errUsage)
	}
	if t.aws() {
		var opts []func(*config.LoadOptions) error
		if t.region != "" {
			opts = append(opts, config.WithRegion(t.region))
		}
		cfg, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("loading AWS configuration: %w", err)
		}
		if cfg.Region == "" {
			return nil, errors.New("no AWS region configured: pass --region, or set AWS_REGION or a profile's region")
		}
		return dynamodb.NewFromConfig(cfg), nil
	}
	u, err := url.Parse(t.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: --endpoint %q is not an http(s) URL, nor \"aws\"", errUsage, t.endpoint)
	}
	// The local stack's own client settings (dummy credentials, fixed
	// region), so this command sees the same tables as the local gateway.
	return ddblocal.NewClient(ctx, t.endpoint)
}

func create(args []string, stdout, stderr io.Writer) error {
	var t target
	var account, scope, expires string
	fs := newFlags("create", &t)
	fs.StringVar(&account, "account", "", "account that owns the key (required)")
	fs.StringVar(&scope, "scope", "read", "read, write or read,write")
	fs.StringVar(&expires, "expires", "", "lifetime (720h) or end (2027-01-01T00:00:00Z); empty: never")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if account == "" {
		return fmt.Errorf("%w: create needs --account", errUsage)
	}
	scopes, err := auth.ParseScopes(scope)
	if err != nil {
		return fmt.Errorf("%w: --scope: %v", errUsage, err)
	}
	ctx := context.Background()
	exp, err := parseExpiry(expires, time.Now())
	if err != nil {
		return fmt.Errorf("%w: --expires: %v", errUsage, err)
	}
	checksum, err := t.checksum(stderr)
	if err != nil {
		return err
	}
	keys, err := t.keys(ctx, checksum)
	if err != nil {
		return err
	}
	key, info, err := keys.Create(ctx, account, scopes, exp)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Created %s for account %s, scopes %s, %s, in %s.\n",
		info.KeyID, info.Account, auth.FormatScopes(info.Scopes), expiryText(info.ExpiresAt), t.where())
	fmt.Fprintln(stderr, "The key is below. It is shown only this once: store it now.")
	fmt.Fprintln(stdout, key)
	return nil
}

// parseExpiry reads --expires: a positive duration from now, an RFC 3339
// time, or a date (midnight UTC). Empty means the key never expires.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("duration %s is not positive", s)
		}
		return now.Add(d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration like 720h nor a time like 2027-01-01T00:00:00Z", s)
}

func expiryText(t time.Time) string {
	if t.IsZero() {
		return "never expires"
	}
	return "expires " + t.Format(time.RFC3339)
}

func list(args []string, stdout, _ io.Writer) error {
	var t target
	var account string
	fs := newFlags("list", &t)
	fs.StringVar(&account, "account", "", "only this account's keys")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	ctx := context.Background()
	// Listing reads no key, so the checksum does not matter.
	keys, err := t.keys(ctx, auth.PublicChecksum)
	if err != nil {
		return err
	}
	infos, err := keys.List(ctx, account)
	if err != nil {
		return err
	}
	now := time.Now()
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "KEY_ID\tACCOUNT\tSCOPES\tSTATUS\tCREATED\tEXPIRES\tREVOKED")
	for _, k := range infos {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.KeyID, k.Account, auth.FormatScopes(k.Scopes),
			status(k, now), stamp(k.CreatedAt), stamp(k.ExpiresAt), stamp(k.RevokedAt))
	}
	return w.Flush()
}

func status(k auth.KeyInfo, now time.Time) string {
	switch {
	case !k.RevokedAt.IsZero():
		return "revoked"
	case !k.Active(now):
		return "expired"
	default:
		return "active"
	}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func revoke(args []string, stdout, _ io.Writer) error {
	var t target
	fs := newFlags("revoke", &t)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: revoke takes one KEY_ID, got %d arguments", errUsage, len(pos))
	}
	id := pos[0]
	if strings.HasPrefix(id, auth.KeyPrefix) {
		// Someone pasted the key itself. Do not repeat it anywhere.
		return fmt.Errorf("%w: revoke takes the key's id (key_...), not the key; find it with apikey list", errUsage)
	}
	ctx := context.Background()
	// Revoking goes by key id, so the checksum does not matter.
	keys, err := t.keys(ctx, auth.PublicChecksum)
	if err != nil {
		return err
	}
	if err := keys.Revoke(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Revoked %s in %s. Warm functions may accept it for up to their cache TTL (AuthCacheSeconds, %s by default).\n",
		id, t.where(), auth.DefaultCacheTTL)
	return nil
}

// limitsUsage is what limits says when a limit does not parse.
const limitsUsage = "a whole number (0 allows none; for spend_usd, dollars such as 12.50), unlimited, or default"

func limits(args []string, stdout, stderr io.Writer) error {
	var t target
	var account string
	fs := newTargetFlags("limits", &t)
	fs.StringVar(&account, "account", "", "account whose limits to set (required)")
	tables := map[string]*string{}
	for _, r := range app.Resources {
		tables[r.Table()] = fs.String(r.Def.Name+"-table", envOr(r.TableEnv(), r.Table()), r.Def.Name+" table")
	}
	tables[app.WebhooksTable] = fs.String("webhooks-table", envOr(app.EnvWebhooksTable, app.WebhooksTable), "webhooks table (the deliveries' limit)")
	set, reset := quota.Limits{}, []quota.Kind{}
	given := map[quota.Kind]bool{}
	take := func(k quota.Kind, v string) error {
		given[k] = true
		delete(set, k)
		reset = slices.DeleteFunc(reset, func(r quota.Kind) bool { return r == k })
		if v == "default" {
			reset = append(reset, k)
			return nil
		}
		l, err := quota.ParseKindLimit(k, v)
		if err != nil {
			return fmt.Errorf("want %s", limitsUsage)
		}
		set[k] = l
		return nil
	}
	for _, k := range app.Kinds {
		fs.Func(strings.ReplaceAll(quota.LimitName(k), "_", "-"), "monthly limit of "+quota.LimitName(k)+": "+limitsUsage, func(v string) error { return take(k, v) })
	}
	fromEnv := fs.Bool("from-env", false, "also take each kind's limit from the variable of its name in capitals (IMAGES=100) where its flag gives none, as make limits passes them")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	for _, k := range app.Kinds {
		// make passes the variables of its command line in the
		// environment, so `make limits` needs no list of the kinds.
		if v := os.Getenv(strings.ToUpper(quota.LimitName(k))); *fromEnv && !given[k] && v != "" {
			if err := take(k, v); err != nil {
				return fmt.Errorf("%w: %s=%s: %v", errUsage, strings.ToUpper(quota.LimitName(k)), v, err)
			}
		}
	}
	if account == "" {
		return fmt.Errorf("%w: limits needs --account", errUsage)
	}
	names := map[string]string{}
	var where []string
	for id, name := range tables {
		if *name == "" {
			return fmt.Errorf("%w: the table of %s is empty", errUsage, id)
		}
		names[id] = *name
		where = append(where, *name)
	}
	slices.Sort(where)
	ctx := context.Background()
	db, err := t.client(ctx)
	if err != nil {
		return err
	}
	own, err := app.SetLimits(ctx, db, names, account, set, reset)
	if err != nil {
		return err
	}
	place := "at " + t.endpoint
	if t.aws() {
		place = "in AWS"
	}
	fmt.Fprintf(stderr, "Monthly limits of account %s in tables %s %s (default: the deployment's, for accounts without their own):\n",
		account, strings.Join(where, ", "), place)
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tLIMIT")
	for _, k := range app.Kinds {
		limit := "default"
		if l, ok := own[k]; ok {
			limit = quota.FormatLimit(k, l)
		}
		fmt.Fprintf(w, "%s\t%s\n", quota.LimitName(k), limit)
	}
	return w.Flush()
}
