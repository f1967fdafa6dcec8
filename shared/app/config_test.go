package app_test

import (
	"strings"
	"testing"

	"contentapi/shared/app"
	"contentapi/shared/auth"
)

// The checksum secret comes from the environment: empty is the local stack's
// public checksum; a real secret makes the checksum keyed; anything that
// would quietly refuse every key is a configuration error instead.
func TestConfigKeyChecksum(t *testing.T) {
	tests := []struct {
		name, secret string
		keyed, fails bool
	}{
		{"unset: the public checksum", "", false, false},
		{"the stack's secret", strings.Repeat("a", auth.MinSecretLen), true, false},
		{"too short to be a secret", "short", false, true},
		{"unresolved reference from sam local", "{{resolve:secretsmanager:KeyChecksumSecret:SecretString}}", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(app.EnvKeysTable, "keys")
			t.Setenv(app.EnvKeyChecksum, tt.secret)
			c, err := app.ConfigFromEnv()
			if (err != nil) != tt.fails {
				t.Fatalf("ConfigFromEnv error = %v, want failure %v", err, tt.fails)
			}
			if err == nil && c.KeyChecksum.Keyed() != tt.keyed {
				t.Errorf("keyed = %v, want %v", c.KeyChecksum.Keyed(), tt.keyed)
			}
			if err != nil && tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("the error %q repeats the secret", err)
			}
		})
	}
	t.Run("rate limits need their table", func(t *testing.T) {
		t.Setenv(app.EnvKeysTable, "keys")
		t.Setenv(app.EnvRateLimit, "600")
		t.Setenv(app.EnvRateLimitTable, "")
		if _, err := app.ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), app.EnvRateLimitTable) {
			t.Errorf("ConfigFromEnv = %v, want an error naming %s", err, app.EnvRateLimitTable)
		}
	})
	t.Run("a malformed number is an error", func(t *testing.T) {
		t.Setenv(app.EnvKeysTable, "keys")
		t.Setenv(app.EnvAuthCache, "soon")
		if _, err := app.ConfigFromEnv(); err == nil {
			t.Error("AUTH_CACHE_SECONDS=soon was accepted")
		}
	})
}
