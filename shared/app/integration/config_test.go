package integration_test

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/generation"
	localstack "contentapi/shared/local/stack"
	"contentapi/shared/quota"
)

// configVars are every variable ConfigFromEnv reads; each test case starts
// from all of them unset, so the machine's own environment plays no part.
func configVars() []string {
	vars := []string{app.EnvRegion, app.EnvEndpoint, app.EnvKeysTable, app.EnvRateLimitTable, app.EnvKeyChecksum,
		app.EnvIdempotency, app.EnvAuthCache, app.EnvRateLimit, app.EnvRequestTimeout, app.EnvAllowOrigin, app.EnvLogLevel, app.EnvStack}
	for _, r := range app.Resources {
		vars = append(vars, r.TableEnv())
	}
	for _, k := range app.Kinds {
		vars = append(vars, app.EnvDefaultMonthly(k))
	}
	return append(vars, app.EnvGeneration, app.EnvTextModel, app.EnvImageModel, app.EnvModelPrices, app.EnvBedrockRegion,
		app.EnvGenerationWait, app.EnvPicturesBucket, app.EnvBedrockEndpoint, app.EnvS3Endpoint,
		app.EnvWebhooksTable, app.EnvWebhookQueue, app.EnvWebhookSlowQueue, app.EnvWebhookSeal, app.EnvSQSEndpoint)
}

// Generation is off unless GENERATION=on says so, and then needs its models.
func TestGenerationConfig(t *testing.T) {
	on := map[string]string{app.EnvKeysTable: "keys", app.EnvGeneration: "on", app.EnvTextModel: "t", app.EnvImageModel: "i"}
	with := func(extra ...string) map[string]string {
		env := map[string]string{}
		for k, v := range on {
			env[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			env[extra[i]] = extra[i+1]
		}
		return env
	}
	testCases := []struct {
		name  string
		env   map[string]string
		want  app.Generation
		named []string
	}{
		{"off when unset", map[string]string{app.EnvKeysTable: "keys", app.EnvTextModel: "t"}, app.Generation{}, nil},
		{"off", with(app.EnvGeneration, "off"), app.Generation{}, nil},
		{"on, with the defaults", on, app.Generation{On: true, TextModel: "t", ImageModel: "i", Wait: 25 * time.Second,
			Prices: generation.DefaultPrices}, nil},
		{"on, with prices of its own", with(app.EnvModelPrices, `[{"model": "t", "input_tokens": 0.5, "output_tokens": 1.5, "taken": "2026-11-28"}]`),
			app.Generation{On: true, TextModel: "t", ImageModel: "i", Wait: 25 * time.Second, Prices: append(slices.Clone(generation.DefaultPrices),
				generation.Price{Model: "t", InputTokens: 500_000_000, OutputTokens: 1_500_000_000, Taken: "2026-11-28"})}, nil},
		{"prices that do not read", with(app.EnvModelPrices, `[{"model": "t", "input_tokens": "cheap"}]`), app.Generation{}, []string{app.EnvModelPrices}},
		{"on, every variable", with(app.EnvRegion, "eu-west-1", app.EnvBedrockRegion, "us-west-2", app.EnvGenerationWait, "0",
			app.EnvPicturesBucket, "pics", app.EnvBedrockEndpoint, "http://127.0.0.1:8002", app.EnvS3Endpoint, "http://127.0.0.1:8001"),
			app.Generation{On: true, TextModel: "t", ImageModel: "i", Region: "us-west-2", Bucket: "pics",
				BedrockEndpoint: "http://127.0.0.1:8002", S3Endpoint: "http://127.0.0.1:8001", Prices: generation.DefaultPrices}, nil},
		{"a word other than on or off", with(app.EnvGeneration, "yes"), app.Generation{}, []string{app.EnvGeneration}},
		{"on without its models", map[string]string{app.EnvKeysTable: "keys", app.EnvGeneration: "on"}, app.Generation{},
			[]string{app.EnvTextModel, app.EnvImageModel}},
		{"a wait past 25 s", with(app.EnvGenerationWait, "26"), app.Generation{}, []string{app.EnvGenerationWait}},
		{"a bad region and endpoint", with(app.EnvBedrockRegion, "west", app.EnvS3Endpoint, "127.0.0.1:8001"), app.Generation{},
			[]string{app.EnvBedrockRegion, app.EnvS3Endpoint}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			setConfigEnv(t, tc.env)
			c, err := app.ConfigFromEnv()
			if len(tc.named) > 0 {
				for _, name := range tc.named {
					if err == nil || !strings.Contains(err.Error(), name) {
						t.Errorf("error %v does not name %s", err, name)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := c.Generation
			got.Backoff = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("generation %+v, want %+v", got, tc.want)
			}
		})
	}
}

func setConfigEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, name := range configVars() {
		t.Setenv(name, env[name])
	}
}

func TestConfigFromEnv(t *testing.T) {
	first := app.Resources[0]
	testCases := []struct {
		name  string
		env   map[string]string
		check func(t *testing.T, c app.Config)
	}{
		{"defaults", map[string]string{app.EnvKeysTable: "keys"}, func(t *testing.T, c app.Config) {
			if c.Region != "us-east-1" || c.AuthCacheTTL != time.Minute || c.RequestTimeout != 8*time.Second ||
				c.RateLimitPerMinute != 0 || c.AllowOrigin != "*" || c.LogLevel != slog.LevelInfo ||
				c.DynamoDBEndpoint != "" || c.IdempotencyTable != "" || len(c.Tables) != 0 ||
				c.RateLimitTable != "" || c.KeyChecksum.Keyed() {
				t.Errorf("defaults: %+v", c)
			}
			for _, k := range app.Kinds {
				if c.QuotaDefaults[k] != quota.Unlimited {
					t.Errorf("default monthly %s: %v, want unlimited", k, c.QuotaDefaults[k])
				}
			}
		}},
		{"every variable set", map[string]string{
			app.EnvRegion: "eu-central-2", app.EnvEndpoint: "http://127.0.0.1:8000", app.EnvKeysTable: "keys",
			app.EnvRateLimitTable: "counters-1", app.EnvKeyChecksum: strings.Repeat("s", auth.MinSecretLen),
			app.EnvIdempotency: "idem-1", app.EnvAuthCache: "0", app.EnvRequestTimeout: "900",
			app.EnvRateLimit: "600", app.EnvAllowOrigin: "https://app.example.com:8443", app.EnvLogLevel: "warn",
			app.EnvStack: "contentapi-staging", first.TableEnv(): "stack-Table.1", "DEFAULT_MONTHLY_IMAGES": "100", "DEFAULT_MONTHLY_WORDS": "0",
			"DEFAULT_MONTHLY_DOCUMENTS": "unlimited", "DEFAULT_MONTHLY_DELIVERIES": "25000", "DEFAULT_MONTHLY_SPEND": "12.5",
		}, func(t *testing.T, c app.Config) {
			if want := (quota.Limits{quota.Images: quota.Max(100), quota.Words: quota.Max(0), quota.Documents: quota.Unlimited,
				quota.Deliveries: quota.Max(25000), quota.Reads: quota.Unlimited, quota.Spend: quota.Max(12_500_000_000)}); !maps.Equal(c.QuotaDefaults, want) {
				t.Errorf("quota defaults %v, want %v", c.QuotaDefaults, want)
			}
			if c.Region != "eu-central-2" || c.DynamoDBEndpoint != "http://127.0.0.1:8000" || c.KeysTable != "keys" ||
				c.IdempotencyTable != "idem-1" || c.AuthCacheTTL != 0 || c.RequestTimeout != 900*time.Second ||
				c.RateLimitPerMinute != 600 || c.AllowOrigin != "https://app.example.com:8443" || c.LogLevel != slog.LevelWarn ||
				c.Tables[first.Table()] != "stack-Table.1" || len(c.Tables) != 1 ||
				c.RateLimitTable != "counters-1" || !c.KeyChecksum.Keyed() || c.Stack != "contentapi-staging" {
				t.Errorf("config: %+v", c)
			}
		}},
		// DynamoDB's and CloudFormation's longest names.
		{"the longest names", map[string]string{app.EnvKeysTable: strings.Repeat("k", 255), first.TableEnv(): "t.-",
			app.EnvStack: "s" + strings.Repeat("-", 127)}, func(t *testing.T, c app.Config) {
			if len(c.KeysTable) != 255 || c.Tables[first.Table()] != "t.-" || len(c.Stack) != 128 {
				t.Errorf("config: %+v", c)
			}
		}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			setConfigEnv(t, tc.env)
			c, err := app.ConfigFromEnv()
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// Every malformed or out-of-range variable is an error that names it: none
// falls back to a default, or to no limit at all.
func TestConfigFromEnvRefuses(t *testing.T) {
	first := app.Resources[0]
	testCases := []struct {
		name  string
		env   map[string]string
		named []string
	}{
		{"no keys table", map[string]string{}, []string{app.EnvKeysTable}},
		{"auth cache not a number", map[string]string{app.EnvAuthCache: "abc"}, []string{app.EnvAuthCache}},
		{"auth cache negative", map[string]string{app.EnvAuthCache: "-1"}, []string{app.EnvAuthCache}},
		{"auth cache past an hour", map[string]string{app.EnvAuthCache: "3601"}, []string{app.EnvAuthCache}},
		{"auth cache fractional", map[string]string{app.EnvAuthCache: "1.5"}, []string{app.EnvAuthCache}},
		{"negative timeout", map[string]string{app.EnvRequestTimeout: "-5"}, []string{app.EnvRequestTimeout}},
		{"zero timeout", map[string]string{app.EnvRequestTimeout: "0"}, []string{app.EnvRequestTimeout}},
		{"timeout past Lambda's longest", map[string]string{app.EnvRequestTimeout: "901"}, []string{app.EnvRequestTimeout}},
		{"timeout with a unit", map[string]string{app.EnvRequestTimeout: "8s"}, []string{app.EnvRequestTimeout}},
		{"rate limit not a number", map[string]string{app.EnvRateLimit: "many"}, []string{app.EnvRateLimit}},
		{"rate limit negative", map[string]string{app.EnvRateLimit: "-1"}, []string{app.EnvRateLimit}},
		{"rate limit overflowing", map[string]string{app.EnvRateLimit: "99999999999999999999"}, []string{app.EnvRateLimit}},
		{"log level", map[string]string{app.EnvLogLevel: "loud"}, []string{app.EnvLogLevel}},
		{"stack name", map[string]string{app.EnvStack: "my stack"}, []string{app.EnvStack}},
		{"stack name past 128", map[string]string{app.EnvStack: "s" + strings.Repeat("-", 128)}, []string{app.EnvStack}},
		{"stack name not from a letter", map[string]string{app.EnvStack: "1stack"}, []string{app.EnvStack}},
		{"region", map[string]string{app.EnvRegion: "us east 1"}, []string{app.EnvRegion}},
		{"endpoint without a scheme", map[string]string{app.EnvEndpoint: "localhost:8000"}, []string{app.EnvEndpoint}},
		{"endpoint of another scheme", map[string]string{app.EnvEndpoint: "ftp://127.0.0.1"}, []string{app.EnvEndpoint}},
		{"origin with a path", map[string]string{app.EnvAllowOrigin: "https://app.example.com/"}, []string{app.EnvAllowOrigin}},
		{"origin with a header in it", map[string]string{app.EnvAllowOrigin: "https://a.example.com\r\nSet-Cookie: x=1"}, []string{app.EnvAllowOrigin}},
		{"idempotency table name", map[string]string{app.EnvIdempotency: "x"}, []string{app.EnvIdempotency}},
		{"resource table name", map[string]string{first.TableEnv(): "a table"}, []string{first.TableEnv()}},
		{"resource table name past 255", map[string]string{first.TableEnv(): strings.Repeat("t", 256)}, []string{first.TableEnv()}},
		{"resource table name under 3", map[string]string{first.TableEnv(): "t."}, []string{first.TableEnv()}},
		{"monthly limit negative", map[string]string{"DEFAULT_MONTHLY_IMAGES": "-1"}, []string{"DEFAULT_MONTHLY_IMAGES"}},
		{"spend limit not in dollars", map[string]string{"DEFAULT_MONTHLY_SPEND": "12.5.0"}, []string{"DEFAULT_MONTHLY_SPEND"}},
		{"monthly limit a word", map[string]string{"DEFAULT_MONTHLY_WORDS": "none"}, []string{"DEFAULT_MONTHLY_WORDS"}},
		{"monthly limit fractional", map[string]string{"DEFAULT_MONTHLY_DOCUMENTS": "2.5"}, []string{"DEFAULT_MONTHLY_DOCUMENTS"}},
		{"rate limit without its table", map[string]string{app.EnvRateLimit: "600"}, []string{app.EnvRateLimitTable}},
		// Either would refuse every key, quietly, as 401s.
		{"checksum secret too short", map[string]string{app.EnvKeyChecksum: "short-secret"}, []string{app.EnvKeyChecksum}},
		{"checksum secret unresolved by sam local", map[string]string{app.EnvKeyChecksum: "{{resolve:secretsmanager:KeyChecksumSecret:SecretString}}"},
			[]string{app.EnvKeyChecksum}},
		{"several at once", map[string]string{app.EnvAuthCache: "abc", app.EnvRequestTimeout: "-5"},
			[]string{app.EnvAuthCache, app.EnvRequestTimeout}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{app.EnvKeysTable: "keys"}
			if tc.name == "no keys table" {
				env = map[string]string{}
			}
			for k, v := range tc.env {
				env[k] = v
			}
			setConfigEnv(t, env)
			_, err := app.ConfigFromEnv()
			if err == nil {
				t.Fatal("no error")
			}
			for _, name := range tc.named {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error %q does not name %s", err, name)
				}
			}
			if secret := tc.env[app.EnvKeyChecksum]; secret != "" && strings.Contains(err.Error(), secret) {
				t.Errorf("error %q shows the checksum secret", err)
			}
		})
	}
}

// A function given no table of its own, or asked for a resource that does
// not exist, is refused by name.
func TestFunctionNeedsItsTable(t *testing.T) {
	a := app.New(app.Config{KeysTable: "keys", LogOutput: os.Stderr}, nil, localstack.Parts)
	for _, r := range app.Resources {
		if _, err := a.APIEntry(r.Def.Name); err == nil || !strings.Contains(err.Error(), r.TableEnv()) {
			t.Errorf("%s without its table: %v", r.Def.Name, err)
		}
	}
	// The first resource's function serves the usage of every resource.
	first, other := app.Resources[0], app.Resources[1]
	own := app.New(app.Config{KeysTable: "keys", LogOutput: os.Stderr, Tables: map[string]string{first.Table(): "own"}}, nil, localstack.Parts)
	if _, err := own.APIEntry(first.Def.Name); err == nil || !strings.Contains(err.Error(), other.TableEnv()) {
		t.Errorf("%s without %s: %v", first.Def.Name, other.TableEnv(), err)
	}
	if _, err := a.APIEntry("videos"); err == nil {
		t.Error("a function for an unknown resource")
	}
}

const (
	initHelperEnv = "APP_TEST_INIT_HELPER"
	// initHelperNoParts has the helper built without any app.Parts.
	initHelperNoParts = "APP_TEST_INIT_NO_PARTS"
)

// TestInitHelper is not a test: TestMisconfiguredFunctionStopsAtInit runs
// the test binary again with initHelperEnv set, and there this is a
// function's main.
func TestInitHelper(t *testing.T) {
	if os.Getenv(initHelperEnv) == "" {
		t.Skip("helper process for TestMisconfiguredFunctionStopsAtInit")
	}
	parts := localstack.Parts
	if os.Getenv(initHelperNoParts) != "" {
		parts = app.Parts{}
	}
	app.MustAPI(context.Background(), os.Getenv(initHelperEnv), parts)
	os.Exit(0)
}

// A function's main stops at init, with the variable in its log, rather
// than serving with a silent default.
func TestMisconfiguredFunctionStopsAtInit(t *testing.T) {
	first := app.Resources[0]
	testCases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"malformed number", map[string]string{app.EnvKeysTable: "keys", first.TableEnv(): "t1", app.EnvAuthCache: "abc"}, app.EnvAuthCache},
		{"no deadline", map[string]string{app.EnvKeysTable: "keys", first.TableEnv(): "t1", app.EnvRequestTimeout: "-5"}, app.EnvRequestTimeout},
		{"no table of its own", map[string]string{app.EnvKeysTable: "keys"}, first.TableEnv()},
		// A function built without a part its configuration calls for
		// (its main forgot it) says which.
		{"generating, built without the models", map[string]string{app.EnvKeysTable: "keys", first.TableEnv(): "images-1",
			app.EnvGeneration: "on", app.EnvTextModel: "t", app.EnvImageModel: "i", initHelperNoParts: "1"}, "app.Parts.Models"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestInitHelper$")
			cmd.Env = []string{initHelperEnv + "=" + first.Def.Name, app.EnvEndpoint + "=http://127.0.0.1:9"}
			for k, v := range tc.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
				t.Fatalf("exit %v, want 1: %s", err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("the log does not name %s: %s", tc.want, out)
			}
		})
	}
}

// The webhooks' settings come from the template's variables; the client's
// options and the schedule never do: no variable, WEBHOOKS_ALLOW_LOOPBACK
// included, lets a deployment reach loopback or shorten the retries.
func TestWebhooksConfigFromEnv(t *testing.T) {
	setConfigEnv(t, map[string]string{app.EnvKeysTable: "keys", app.EnvWebhooksTable: "hooks-1",
		app.EnvWebhookQueue: "https://sqs.us-east-1.amazonaws.com/1/q", app.EnvWebhookSlowQueue: "https://sqs.us-east-1.amazonaws.com/1/slow",
		app.EnvWebhookSeal: "seal", app.EnvSQSEndpoint: ""})
	t.Setenv("WEBHOOKS_ALLOW_LOOPBACK", "1")
	c, err := app.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	w := c.Webhooks
	if w.Table != "hooks-1" || w.QueueURL != "https://sqs.us-east-1.amazonaws.com/1/q" || w.SlowQueueURL != "https://sqs.us-east-1.amazonaws.com/1/slow" ||
		string(w.Seal) != "seal" || w.SQSEndpoint != "" {
		t.Errorf("webhooks: %+v", w)
	}
	if w.Client.AllowLoopback || w.Client.Resolver != nil || w.Client.Timeout != 0 || w.Schedule != nil {
		t.Errorf("the environment set the client or the schedule: %+v", w)
	}
}

// deployedWithWebhooks is the configuration of a deployment in AWS with
// every table and the webhooks' queues, but no seal secret, with AWS
// credentials in the environment, as Lambda gives them.
func deployedWithWebhooks(t *testing.T) app.Config {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	tables := map[string]string{}
	for _, r := range app.Resources {
		tables[r.Table()] = r.Table()
	}
	return app.Config{Region: "us-east-1", KeysTable: "keys", Tables: tables,
		Webhooks: app.WebhooksConfig{Table: "hooks", QueueURL: "https://sqs.us-east-1.amazonaws.com/1/q", SlowQueueURL: "https://sqs.us-east-1.amazonaws.com/1/slow"}}
}

// A deployment's sender and endpoints API refuse to start without the
// seal secret: the signing keys would be sealed under a key anyone can
// derive. Only a local stack (DynamoDB Local) runs without one.
func TestWebhooksNeedTheSealSecretInAWS(t *testing.T) {
	cfg := deployedWithWebhooks(t)
	a := app.New(cfg, nil, localstack.Parts)
	if _, err := a.SenderEntry(); err == nil || !strings.Contains(err.Error(), app.EnvWebhookSeal) {
		t.Errorf("sender without a seal: %v", err)
	}
	if _, err := a.Handler(app.Resources[0].Def.Name); err == nil || !strings.Contains(err.Error(), app.EnvWebhookSeal) {
		t.Errorf("endpoints API without a seal: %v", err)
	}
	cfg.Webhooks.Seal = []byte("a deployment's secret")
	if _, err := app.New(cfg, nil, localstack.Parts).SenderEntry(); err != nil {
		t.Errorf("sender with a seal: %v", err)
	}
}

// A function built without a part its configuration calls for stops at
// init naming the part; one given the name of a bucket it never uses (the
// documents' function, where a stack sets PICTURES_BUCKET for all) starts
// without linking S3.
func TestFunctionsNeedOnlyTheirParts(t *testing.T) {
	cfg := deployedWithWebhooks(t)
	cfg.Webhooks.Seal = []byte("a deployment's secret")
	cfg.Generation = app.Generation{On: true, TextModel: "t", ImageModel: "i", Bucket: "pics"}
	all := localstack.Parts
	without := func(drop string) app.Parts {
		p := all
		switch drop {
		case "Models":
			p.Models = nil
		case "Pictures":
			p.Pictures = nil
		case "Queue":
			p.Queue = nil
		}
		return p
	}
	entries := map[string]func(*app.App) error{
		"the first resource's function": func(a *app.App) error { _, err := a.Handler(app.Resources[0].Def.Name); return err },
		"the generator":                 func(a *app.App) error { _, err := a.GeneratorEntry(); return err },
		"the sender":                    func(a *app.App) error { _, err := a.SenderEntry(); return err },
	}
	for name, entry := range entries {
		if err := entry(app.New(cfg, nil, all)); err != nil {
			t.Errorf("%s with every part: %v", name, err)
		}
		for _, part := range []string{"Models", "Pictures", "Queue"} {
			if name == "the sender" && part == "Models" {
				continue // it calls no model
			}
			if err := entry(app.New(cfg, nil, without(part))); err == nil || !strings.Contains(err.Error(), "app.Parts."+part) {
				t.Errorf("%s without app.Parts.%s: %v", name, part, err)
			}
		}
	}
	documents := app.New(cfg, nil, app.Parts{Models: all.Models})
	if _, err := documents.Handler("documents"); err != nil {
		t.Errorf("documents with the models alone: %v", err)
	}
	if _, err := app.New(cfg, nil, app.Parts{}).Handler("voices"); err != nil {
		t.Errorf("voices with no part: %v", err)
	}
	cfg.Generation.Bucket = ""
	if _, err := app.New(cfg, nil, all).Handler(app.Resources[0].Def.Name); err == nil || !strings.Contains(err.Error(), app.EnvPicturesBucket+" is not set") {
		t.Errorf("pictures without a bucket: %v", err)
	}
}
