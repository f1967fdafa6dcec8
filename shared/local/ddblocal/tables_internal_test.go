package ddblocal

import (
	"context"
	"strings"
	"testing"
	"time"
)

// An index wait that the caller's deadline ends says so, and not that
// indexWait passed.
func TestWaitIndexNamesTheCallersDeadline(t *testing.T) {
	env := NewTestEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := waitIndex(ctx, env.Client, env.Tables["DocumentsTable"], "no-such-index")
	if err == nil || !strings.Contains(err.Error(), "when the caller's deadline passed") || strings.Contains(err.Error(), indexWait.String()) {
		t.Fatalf("waitIndex = %v, want it to name the caller's deadline, not indexWait (%v)", err, indexWait)
	}
}
