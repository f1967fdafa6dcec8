// Package awsenv builds the parts every AWS client of a function shares,
// from the environment Lambda provides, without the SDK's config package:
// that package links the STS, SSO and IMDS clients for shared profiles a
// function never has, about a tenth of a bootstrap.
package awsenv

import (
	"errors"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

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
