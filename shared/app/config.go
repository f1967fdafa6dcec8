package app

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"
)

// Config is the service's configuration, read from the environment that
// template.yaml (in AWS) or the local stack sets.
type Config struct {
	Region string
	// DynamoDBEndpoint is set only for DynamoDB Local.
	DynamoDBEndpoint string
	ImagesTable      string
	DocumentsTable   string
	KeysTable        string
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
	LogLevel       slog.Level
	// LogOutput receives the JSON log lines; nil means standard output,
	// which Lambda sends to CloudWatch.
	LogOutput io.Writer
	// Clock, when set, replaces time.Now for storage and idempotency
	// (tests move it to age what a request left unfinished).
	Clock func() time.Time
}

// settleHorizon is how old an unfinished count change must be before
// another request settles it: well past any request's deadline, so the
// request that made it is done with it.
func (c Config) settleHorizon() time.Duration {
	return max(2*c.RequestTimeout, 10*time.Second)
}

// Environment variable names; template.yaml sets them (a test holds it).
const (
	EnvRegion         = "AWS_REGION"
	EnvEndpoint       = "DYNAMODB_ENDPOINT"
	EnvImagesTable    = "IMAGES_TABLE"
	EnvDocumentsTable = "DOCUMENTS_TABLE"
	EnvKeysTable      = "API_KEYS_TABLE"
	EnvIdempotency    = "IDEMPOTENCY_TABLE"
	EnvAuthCache      = "AUTH_CACHE_SECONDS"
	EnvRateLimit      = "RATE_LIMIT_PER_MINUTE"
	EnvRequestTimeout = "REQUEST_TIMEOUT_SECONDS"
	EnvAllowOrigin    = "CORS_ALLOW_ORIGIN"
	EnvLogLevel       = "LOG_LEVEL"
)

// ConfigFromEnv reads the configuration; malformed numbers are errors, not
// silent defaults.
func ConfigFromEnv() (Config, error) {
	c := Config{
		Region:           getenv(EnvRegion, "us-east-1"),
		DynamoDBEndpoint: os.Getenv(EnvEndpoint),
		ImagesTable:      os.Getenv(EnvImagesTable),
		DocumentsTable:   os.Getenv(EnvDocumentsTable),
		KeysTable:        os.Getenv(EnvKeysTable),
		IdempotencyTable: os.Getenv(EnvIdempotency),
		AllowOrigin:      getenv(EnvAllowOrigin, "*"),
	}
	if c.KeysTable == "" {
		return Config{}, fmt.Errorf("%s is not set", EnvKeysTable)
	}
	var err error
	seconds := func(name string, def int) time.Duration {
		n, e := intEnv(name, def)
		if e != nil && err == nil {
			err = e
		}
		return time.Duration(n) * time.Second
	}
	c.AuthCacheTTL = seconds(EnvAuthCache, 60)
	c.RequestTimeout = seconds(EnvRequestTimeout, 8)
	if c.RateLimitPerMinute, err = intEnv(EnvRateLimit, 0); err != nil {
		return Config{}, err
	}
	if err != nil {
		return Config{}, err
	}
	if err := c.LogLevel.UnmarshalText([]byte(getenv(EnvLogLevel, "INFO"))); err != nil {
		return Config{}, fmt.Errorf("%s: %w", EnvLogLevel, err)
	}
	return c, nil
}

func getenv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func intEnv(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be a whole number, got %q", name, v)
	}
	return n, nil
}
