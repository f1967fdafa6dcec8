// Package awsenv builds the parts every AWS client of a function shares:
// the SDK's default configuration (config.LoadDefaultConfig) from the
// environment Lambda provides, and the retryer.
//
// The config package links the STS, SSO and IMDS clients for profiles a
// function never has. Measured against a configuration built by hand
// (BENCHMARKS.md, stand-ins): 1.6 MB more bootstrap (documents 11.27 ->
// 12.85 MB of a 16 MB budget) and 0.8 ms more init (5.0 -> 5.8 ms); the
// loading itself takes 0.15 ms. Too little to keep a hand-made stand-in.
package awsenv

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Load is the SDK's default configuration in region, as a function's
// clients share it: credentials from the environment (the function role's
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), and the
// SDK's own environment settings (AWS_ENDPOINT_URL, AWS_CA_BUNDLE...). A
// function without credentials in its environment stops at init
// (ErrNoCredentials) rather than look for a profile; a local server (local
// true) accepts any key, so it gets a placeholder. Each client sets its
// own endpoint, retryer and timeouts on top (NewFromConfig).
func Load(ctx context.Context, region string, local bool) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{config.WithRegion(region)}
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		creds, err := Credentials(local)
		if err != nil {
			return aws.Config{}, err
		}
		opts = append(opts, config.WithCredentialsProvider(creds))
	}
	return config.LoadDefaultConfig(ctx, opts...)
}

// ErrNoCredentials is an environment without AWS credentials.
var ErrNoCredentials = errors.New("no AWS credentials in the environment (AWS_ACCESS_KEY_ID)")

// Credentials are the function role's credentials (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN). A local server (local true)
// wants signed requests but accepts any key, so it gets a placeholder when
// the environment has none.
func Credentials(local bool) (aws.CredentialsProvider, error) {
	creds := credentials.NewStaticCredentialsProvider(
		os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))
	if creds.Value.AccessKeyID != "" {
		return creds, nil
	}
	if !local {
		return nil, ErrNoCredentials
	}
	return credentials.NewStaticCredentialsProvider("local", "local", ""), nil
}

// Retryer is the SDK's standard retryer with a bounded number of attempts
// and of backoff, retrying also the error codes given. It has no retry
// quota: a function's reserved concurrency already bounds how many callers
// retry at once, and a quota shared by a warm function's invocations would
// fail one caller for another's throttling.
func Retryer(maxAttempts int, maxBackoff time.Duration, codes ...string) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = maxAttempts
		o.MaxBackoff = maxBackoff
		o.Backoff = retry.NewExponentialJitterBackoff(maxBackoff)
		o.RateLimiter = ratelimit.None
		if len(codes) > 0 {
			extra := retry.RetryableErrorCode{Codes: map[string]struct{}{}}
			for _, c := range codes {
				extra.Codes[c] = struct{}{}
			}
			o.Retryables = append(append([]retry.IsErrorRetryable{}, o.Retryables...), extra)
		}
	})
}
