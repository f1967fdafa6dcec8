package awsenv_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"contentapi/shared/awsenv"
)

func TestCredentials(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	if _, err := awsenv.Credentials(false); !errors.Is(err, awsenv.ErrNoCredentials) {
		t.Fatalf("no credentials for AWS: %v", err)
	}
	local, err := awsenv.Credentials(true)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := local.Retrieve(context.Background()); v.AccessKeyID == "" {
		t.Fatal("a local server gets no placeholder key")
	}

	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	for _, local := range []bool{false, true} {
		p, err := awsenv.Credentials(local)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := p.Retrieve(context.Background())
		if v.AccessKeyID != "AKIDEXAMPLE" || v.SecretAccessKey != "secret" || v.SessionToken != "token" {
			t.Fatalf("local=%v: credentials %+v are not the environment's", local, v)
		}
	}
}

func TestRetryer(t *testing.T) {
	r := awsenv.Retryer(3, time.Millisecond, "ModelNotReadyException")
	if r.MaxAttempts() != 3 {
		t.Fatalf("MaxAttempts = %d", r.MaxAttempts())
	}
	testCases := []struct {
		code string
		want bool
	}{
		{"ThrottlingException", true},
		{"ModelNotReadyException", true},
		{"ValidationException", false},
		{"AccessDeniedException", false},
	}
	for _, tc := range testCases {
		if got := r.IsErrorRetryable(&smithy.GenericAPIError{Code: tc.code}); got != tc.want {
			t.Errorf("%s retryable = %v, want %v", tc.code, got, tc.want)
		}
	}
	if d, err := r.RetryDelay(10, &smithy.GenericAPIError{Code: "ThrottlingException"}); err != nil || d > time.Millisecond {
		t.Errorf("backoff %v past its bound (%v)", d, err)
	}
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	if _, err := awsenv.Load(ctx, "eu-west-1", false); !errors.Is(err, awsenv.ErrNoCredentials) {
		t.Fatalf("a function without credentials loads: %v", err)
	}
	cfg, err := awsenv.Load(ctx, "eu-west-1", true)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := cfg.Credentials.Retrieve(ctx); err != nil || v.AccessKeyID == "" {
		t.Fatalf("a local server gets no placeholder key: %+v, %v", v, err)
	}

	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	for _, local := range []bool{false, true} {
		cfg, err := awsenv.Load(ctx, "eu-west-1", local)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Region != "eu-west-1" {
			t.Errorf("local=%v: region %q", local, cfg.Region)
		}
		v, err := cfg.Credentials.Retrieve(ctx)
		if err != nil || v.AccessKeyID != "AKIDEXAMPLE" || v.SecretAccessKey != "secret" || v.SessionToken != "token" {
			t.Fatalf("local=%v: credentials %+v (%v) are not the environment's", local, v, err)
		}
		if cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != "http://127.0.0.1:1" {
			t.Errorf("local=%v: AWS_ENDPOINT_URL not read: %v", local, cfg.BaseEndpoint)
		}
	}
}
