package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"contentapi/shared/auth"
	"contentapi/shared/crud"
	"contentapi/shared/generation"
	"contentapi/shared/httpapi"
	"contentapi/shared/quota"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// Config is the service's configuration, read from the environment that
// template.yaml (in AWS) or the local stack sets.
type Config struct {
	Region string
	// Webhooks are the webhooks' table, queue and seal; the zero value is
	// a stack without them.
	Webhooks WebhooksConfig
	// DynamoDBEndpoint is set only for DynamoDB Local.
	DynamoDBEndpoint string
	// Tables names the resources' tables by their logical ID in
	// template.yaml ("ImagesTable"); a function is given only its own.
	Tables map[string]string
	// Resources are the resources served; nil serves Resources. A test
	// serves one it declares itself beside them.
	Resources []Resource
	KeysTable string
	// RateLimitTable holds the per-key rate-limit counters; it is needed
	// only when RateLimitPerMinute is set.
	RateLimitTable string
	// KeyChecksum is what a well-formed key's checksum must be: keyed by
	// the template's secret in AWS, so forged keys cost no read; the public
	// CRC-32 (the zero value) locally.
	KeyChecksum auth.Checksum
	// Cursors sign list cursors under a key derived from the same secret.
	Cursors records.Cursors
	// IdempotencyTable keeps Idempotency-Key answers; without it the header
	// is not honoured.
	IdempotencyTable string
	// AuthCacheTTL is how long a warm function trusts a key lookup: the
	// longest a revoked key keeps working.
	AuthCacheTTL time.Duration
	// RateLimitPerMinute per API key; 0 turns rate limiting off.
	RateLimitPerMinute int
	// RequestTimeout bounds every request's DynamoDB work, below the
	// function's own timeout so a slow dependency gets a JSON 503.
	RequestTimeout time.Duration
	AllowOrigin    string
	// QuotaDefaults are the monthly limits of accounts without their own;
	// a kind not in it is unlimited.
	QuotaDefaults quota.Limits
	LogLevel      slog.Level
	// Stack names the deployment in its metrics (metrics.DimStack): the
	// CloudFormation stack's name; metrics.LocalStack unless set.
	Stack string
	// LogOutput receives the JSON log lines; nil means standard output,
	// which Lambda sends to CloudWatch.
	LogOutput io.Writer
	// Generation is how records get their content; off unless GENERATION
	// is on.
	Generation Generation
	// ReadBudget is what one request may read, in read units (0: the
	// contract's 2,000); a list that would read more stops and says so.
	ReadBudget float64
	// MaxAnswerBytes bounds a list's body (0: the contract's 5 MB).
	MaxAnswerBytes int
	// ReadsBatch is how many read units an account's reads gather before
	// they count (0: store.DefaultReadsBatch); tests count every read.
	ReadsBatch float64
	// Clock, when set, replaces time.Now for storage and idempotency
	// (tests move it to age what a request left unfinished).
	Clock func() time.Time
}

// Generation configures content generation.
type Generation struct {
	On bool
	// TextModel and ImageModel are Bedrock model or inference profile ids,
	// called in Region (the function's own unless BEDROCK_REGION says).
	TextModel, ImageModel string
	Region                string
	// Prices price the models' calls: generation.DefaultPrices, with the
	// deployment's own (MODEL_PRICES, a JSON list) over them.
	Prices generation.Prices
	// Wait is how long create and regenerate wait for content unless the
	// request's Prefer says otherwise; 0 answers at once.
	Wait time.Duration
	// Bucket keeps the pictures; needed by a function that serves or
	// generates a resource with pictures.
	Bucket string
	// BedrockEndpoint and S3Endpoint are set only for local stand-ins
	// (the local S3 is addressed path-style).
	BedrockEndpoint, S3Endpoint string
	// ModelAttempts and ModelBackoff bound the model client's retries of
	// one call; MaxTries and Backoff the queue's retries of a generation
	// that failed for a reason that may pass. Zero values take the
	// defaults; tests shorten them.
	ModelAttempts int
	ModelBackoff  time.Duration
	MaxTries      int
	Backoff       func(tries int) time.Duration
}

// SettleHorizon is how old an unfinished count change must be before
// another request settles it: well past any request's deadline, so the
// request that made it is done with it. A create that waits for its
// generation may run up to httpapi.MaxWait plus its write budget.
func (c Config) SettleHorizon() time.Duration {
	longest := c.RequestTimeout
	if c.Generation.On {
		longest = max(longest, httpapi.MaxWait+crud.WriteBudget)
	}
	return max(2*longest, 10*time.Second)
}

// Environment variable names; make generate writes them as template.yaml's
// keys (DeployedEnv says which function gets which). Each resource's table
// comes from its own variable, Resource.TableEnv.
const (
	EnvRegion         = "AWS_REGION"
	EnvEndpoint       = "DYNAMODB_ENDPOINT"
	EnvKeysTable      = "API_KEYS_TABLE"
	EnvRateLimitTable = "RATE_LIMIT_TABLE"
	EnvKeyChecksum    = "KEY_CHECKSUM_SECRET"
	EnvIdempotency    = "IDEMPOTENCY_TABLE"
	EnvAuthCache      = "AUTH_CACHE_SECONDS"
	EnvRateLimit      = "RATE_LIMIT_PER_MINUTE"
	EnvRequestTimeout = "REQUEST_TIMEOUT_SECONDS"
	EnvAllowOrigin    = "CORS_ALLOW_ORIGIN"
	EnvLogLevel       = "LOG_LEVEL"
	EnvStack          = "STACK_NAME"

	EnvGeneration      = "GENERATION"
	EnvTextModel       = "TEXT_MODEL"
	EnvImageModel      = "IMAGE_MODEL"
	EnvModelPrices     = "MODEL_PRICES"
	EnvGenerationWait  = "GENERATION_WAIT_SECONDS"
	EnvPicturesBucket  = "PICTURES_BUCKET"
	EnvBedrockEndpoint = "BEDROCK_ENDPOINT"
	EnvBedrockRegion   = "BEDROCK_REGION"
	EnvS3Endpoint      = "S3_ENDPOINT"
)

// EnvDefaultMonthly is the variable of the deployment's monthly limit of a
// kind for accounts without their own: DEFAULT_MONTHLY_IMAGES. A whole
// number (0 allows none) or "unlimited", the default.
func EnvDefaultMonthly(k quota.Kind) string { return "DEFAULT_MONTHLY_" + strings.ToUpper(string(k)) }

// DeployedEnv is what a deployment of resources (Resources, as the
// service deploys them) sets of the environment a function reads: common, what ConfigFromEnv reads in every function (the
// template's Globals), and own, what the function's parts read beyond it
// (its own Environment). make generate refuses a template that gives a
// function less, or gives it in its own Environment anything else
// (shared/local/listgen). Left to their defaults, so in neither: AWS_REGION (Lambda
// sets it), REQUEST_TIMEOUT_SECONDS and CORS_ALLOW_ORIGIN.
func DeployedEnv(resources []Resource, function string) (common, own []string) {
	common = []string{EnvEndpoint, EnvKeysTable, EnvRateLimitTable, EnvIdempotency, EnvKeyChecksum,
		EnvAuthCache, EnvRateLimit, EnvLogLevel, EnvStack}
	for _, k := range KindsOf(resources) {
		common = append(common, EnvDefaultMonthly(k))
	}
	common = append(common, EnvGeneration, EnvTextModel, EnvImageModel, EnvModelPrices, EnvBedrockRegion, EnvGenerationWait,
		EnvBedrockEndpoint, EnvS3Endpoint, EnvSQSEndpoint)

	webhooks := []string{EnvWebhooksTable, EnvWebhookQueue, EnvWebhookSlowQueue, EnvWebhookSeal}
	pictures := func(rs ...Resource) []string {
		if slices.ContainsFunc(rs, func(r Resource) bool { return r.Def.Content != nil && r.Def.Content.Picture }) {
			return []string{EnvPicturesBucket}
		}
		return nil
	}
	switch function {
	case GeneratorFunction:
		// Every generated resource's table; the ends it publishes go to
		// the webhooks' table and the lanes' queues (no seal: it signs nothing).
		var generated []Resource
		for _, r := range resources {
			if r.Def.Content != nil {
				generated = append(generated, r)
				own = append(own, r.TableEnv())
			}
		}
		own = slices.Concat(own, tableEnvs(NamedBy(generated...)), webhooks[:3], pictures(generated...))
	case TallyFunction:
		for _, r := range resources {
			own = append(own, r.TableEnv())
		}
	case SenderFunction:
		// An image event's url is presigned for each attempt.
		own = slices.Concat(webhooks, pictures(resources...))
	}
	for _, r := range resources {
		if r.Function() != function {
			continue
		}
		own = append(own, r.TableEnv())
		if len(ExtraRoutes(function)) == 0 {
			// The records its records name (the first function has
			// every table already).
			own = append(own, tableEnvs(NamedBy(r))...)
			// Its generations' spend is held on the accounts' spend
			// ledger, in the first generated resource's table.
			if i := slices.IndexFunc(resources, func(o Resource) bool { return o.Def.Content != nil }); r.Def.Content != nil && resources[i].Def != r.Def {
				own = append(own, resources[i].TableEnv())
			}
		}
		if len(ExtraRoutes(function)) > 0 {
			// The usage reads every resource's counter; the webhook
			// endpoints are served here.
			for _, other := range resources {
				if other.Def != r.Def {
					own = append(own, other.TableEnv())
				}
			}
			own = append(own, webhooks...)
		}
		own = append(own, pictures(r)...)
	}
	return common, own
}

// tableEnvs are the table variables of the named resources.
func tableEnvs(names []string) []string {
	var envs []string
	for _, r := range Resources {
		if slices.Contains(names, r.Def.Name) {
			envs = append(envs, r.TableEnv())
		}
	}
	return envs
}

// Ranges and defaults of the numeric settings; template.yaml's parameters
// say the same (make generate writes them there).
const (
	DefaultAuthCacheSeconds = 60
	// MaxAuthCacheSeconds: a revoked key must stop working within the hour.
	MaxAuthCacheSeconds = 3600
	// DefaultWaitSeconds is how long a create or regenerate waits for its
	// content: the longest a request may wait.
	DefaultWaitSeconds = MaxWaitSeconds
	// MaxWaitSeconds is the longest wait a request may have.
	MaxWaitSeconds = int(httpapi.MaxWait / time.Second)
	// maxRequestTimeoutSeconds is Lambda's longest function timeout.
	maxRequestTimeoutSeconds = 900
	maxRateLimitPerMinute    = 1_000_000_000
)

// ConfigFromEnv reads the configuration. Every variable that is malformed
// or out of range is an error naming it (all of them, not just the first),
// never a silent default: a misconfigured function stops at init.
func ConfigFromEnv() (Config, error) {
	var env envReader
	c := Config{
		Region:           env.match(EnvRegion, "us-east-1", region, "an AWS region such as eu-west-1"),
		DynamoDBEndpoint: env.endpoint(EnvEndpoint),
		Tables:           map[string]string{},
		KeysTable:        env.table(EnvKeysTable, true),
		RateLimitTable:   env.table(EnvRateLimitTable, false),
		IdempotencyTable: env.table(EnvIdempotency, false),
		AuthCacheTTL:     env.seconds(EnvAuthCache, DefaultAuthCacheSeconds, 0, MaxAuthCacheSeconds),
		RequestTimeout:   env.seconds(EnvRequestTimeout, 8, 1, maxRequestTimeoutSeconds),
		// 0 is off: make run's default, and the tests'.
		RateLimitPerMinute: env.int(EnvRateLimit, 0, 0, maxRateLimitPerMinute),
		AllowOrigin:        env.origin(EnvAllowOrigin),
		Stack:              env.match(EnvStack, "", stackName, "a CloudFormation stack name (a letter, then letters, digits and -)"),
		QuotaDefaults:      quota.Limits{},
	}
	c.KeyChecksum, c.Cursors = env.checksum(EnvKeyChecksum)
	for _, k := range Kinds {
		c.QuotaDefaults[k] = env.limit(k, EnvDefaultMonthly(k))
	}
	for _, r := range Resources {
		if name := env.table(r.TableEnv(), false); name != "" {
			c.Tables[r.Table()] = name
		}
	}
	if c.RateLimitPerMinute > 0 && c.RateLimitTable == "" {
		env.errs = append(env.errs, fmt.Errorf("%s is set but %s is not", EnvRateLimit, EnvRateLimitTable))
	}
	c.Generation = env.generation()
	c.Webhooks = WebhooksConfig{
		Table:        env.table(EnvWebhooksTable, false),
		QueueURL:     env.endpoint(EnvWebhookQueue),
		SlowQueueURL: env.endpoint(EnvWebhookSlowQueue),
		SQSEndpoint:  env.endpoint(EnvSQSEndpoint),
		Seal:         []byte(os.Getenv(EnvWebhookSeal)),
	}
	if v := os.Getenv(EnvLogLevel); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			env.fail(EnvLogLevel, v, "one of "+strings.Join(LogLevels, ", "))
		}
	}
	if err := errors.Join(env.errs...); err != nil {
		return Config{}, err
	}
	return c, nil
}

// LogLevels are the levels LOG_LEVEL names (the template's LogLevel
// allows these: make generate).
var LogLevels = []string{"debug", "info", "warn", "error"}

// GenerationValues is what GENERATION may say, on or off; unset is off (the
// template's Generation allows these: make generate).
var GenerationValues = []string{generationOn, generationOff}

const generationOn, generationOff = "on", "off"

// generation reads the generation settings: with GENERATION=on, the
// models and the bucket must be named.
func (e *envReader) generation() Generation {
	switch v := os.Getenv(EnvGeneration); v {
	case "", generationOff:
		return Generation{}
	case generationOn:
	default:
		e.fail(EnvGeneration, v, strings.Join(GenerationValues, " or "))
		return Generation{}
	}
	g := Generation{
		On:              true,
		TextModel:       e.required(EnvTextModel),
		ImageModel:      e.required(EnvImageModel),
		Region:          e.match(EnvBedrockRegion, os.Getenv(EnvRegion), region, "an AWS region such as us-west-2"),
		Wait:            e.seconds(EnvGenerationWait, DefaultWaitSeconds, 0, MaxWaitSeconds),
		Bucket:          os.Getenv(EnvPicturesBucket),
		BedrockEndpoint: e.endpoint(EnvBedrockEndpoint),
		S3Endpoint:      e.endpoint(EnvS3Endpoint),
	}
	prices, err := generation.DefaultPrices.With(os.Getenv(EnvModelPrices))
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s: %w", EnvModelPrices, err))
	}
	g.Prices = prices
	return g
}

func (e *envReader) required(name string) string {
	v := os.Getenv(name)
	if v == "" {
		e.errs = append(e.errs, fmt.Errorf("%s is not set", name))
	}
	return v
}

// envReader reads variables and collects what is wrong with them.
type envReader struct{ errs []error }

func (e *envReader) fail(name, value, want string) {
	e.errs = append(e.errs, fmt.Errorf("%s=%q: want %s", name, value, want))
}

// A pattern is a regular expression over ASCII and bounds on the length.
// The bounds stay out of the expression: a counted repeat such as {3,255}
// compiles to one state per count, thousands of allocations in every
// function's package init (a cold start's milliseconds) for a check that
// is a comparison of lengths.
type pattern struct {
	re       *regexp.Regexp
	min, max int
}

func (p pattern) matches(v string) bool {
	return len(v) >= p.min && len(v) <= p.max && p.re.MatchString(v)
}

var (
	region = pattern{regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`), 0, math.MaxInt}
	// tableName is DynamoDB's rule for table names: 3 to 255 of these.
	tableName = pattern{regexp.MustCompile(`^[A-Za-z0-9_.-]+$`), 3, 255}
	// stackName is CloudFormation's rule for stack names: a letter, then
	// up to 127 of these.
	stackName = pattern{regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*$`), 1, 128}
)

// match is name's value if it matches p, def when unset.
func (e *envReader) match(name, def string, p pattern, want string) string {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	if !p.matches(v) {
		e.fail(name, v, want)
	}
	return v
}

func (e *envReader) table(name string, required bool) string {
	v := os.Getenv(name)
	if v == "" && required {
		e.errs = append(e.errs, fmt.Errorf("%s is not set", name))
	}
	if v == "" {
		return ""
	}
	return e.match(name, "", tableName, "a DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -)")
}

func (e *envReader) int(name string, def, lo, hi int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		e.fail(name, v, fmt.Sprintf("a whole number from %d to %d", lo, hi))
		return def
	}
	return n
}

func (e *envReader) seconds(name string, def, lo, hi int) time.Duration {
	return time.Duration(e.int(name, def, lo, hi)) * time.Second
}

// limit is a monthly limit; unset is unlimited.
func (e *envReader) limit(k quota.Kind, name string) quota.Limit {
	v := os.Getenv(name)
	if v == "" {
		return quota.Unlimited
	}
	l, err := quota.ParseKindLimit(k, v)
	if err != nil {
		e.fail(name, v, "a whole number from 0 (for spend, dollars such as 12.50), or unlimited")
	}
	return l
}

// endpoint is an http(s) URL, or empty for AWS itself.
func (e *envReader) endpoint(name string) string {
	v := os.Getenv(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		e.fail(name, v, "an http or https URL such as http://127.0.0.1:8000")
	}
	return v
}

// checksum is the keys' checksum for the secret in name, and the cursors
// signed under a key derived from it; unset is the public one of each.
// Errors never show the value: it is a secret.
func (e *envReader) checksum(name string) (auth.Checksum, records.Cursors) {
	v := os.Getenv(name)
	if strings.HasPrefix(v, "{{resolve:") {
		// What sam local passes when events/env.json does not set it:
		// taken as the secret, it would refuse every key.
		e.errs = append(e.errs, fmt.Errorf("%s is an unresolved CloudFormation reference; set it to empty for local runs", name))
		return auth.Checksum{}, records.Cursors{}
	}
	c, err := auth.NewChecksum(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s: %w", name, err))
	}
	cursors, err := records.NewCursors([]byte(v))
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s: %w", name, err))
	}
	return c, cursors
}

// origin is "*" (the default) or one origin, scheme://host[:port]: the
// value goes into a response header as it is.
func (e *envReader) origin(name string) string {
	v := os.Getenv(name)
	if v == "" || v == "*" {
		return "*"
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.String() != v {
		e.fail(name, v, `"*" or an origin such as https://app.example.com`)
	}
	return v
}

// keyLookupUnits is the most a request's key lookup reads: one key item,
// well under 4 KB, strongly consistent.
const keyLookupUnits = 1

// listBudget is what a list's storage may read: the request's budget but
// for its key lookup.
func (c Config) listBudget() float64 {
	b := c.ReadBudget
	if b <= 0 {
		b = store.DefaultReadBudget
	}
	return b - keyLookupUnits
}
