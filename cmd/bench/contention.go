package main

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/auth"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
)

// Contention: this many clients create on one account at once, each this
// many documents, each client with a key of its own (the deployed rate
// limit is per key).
const (
	contentionClients   = 64
	contentionPerClient = 4
	contentionAccount   = "contention"
)

// measureContention has 64 clients create documents on one fresh account at
// the same time, through the real handler on the metered client, and
// reports what that costs beyond the same creates made one at a time: every
// round trip past a create's two is a retry (the SDK's, or the store's own).
// It checks what must hold whatever the load: no errors, distinct ids, and
// a total that counts exactly the documents made.
func measureContention(ctx context.Context, b *bench.Board, meter *ddblocal.Meter, plain *dynamodb.Client, keysTable string, handlers *bench.Caller) error {
	keys := make([]*bench.Caller, contentionClients)
	for i := range keys {
		key, _, err := auth.NewKeys(plain, keysTable, auth.PublicChecksum).Create(ctx, contentionAccount,
			[]auth.Scope{auth.ScopeRead, auth.ScopeWrite}, time.Time{})
		if err != nil {
			return err
		}
		keys[i] = handlers.WithKey(key)
		// Each key's first request looks it up; that is not contention.
		if a := keys[i].Do("GET", "/api/v1/documents?per_page=10", nil, nil); a.Status != 200 {
			return fmt.Errorf("contention: list with a new key: %d %s", a.Status, a.Raw)
		}
	}
	var mu sync.Mutex
	ids := map[int64]bool{}
	var failures []string
	var wg sync.WaitGroup
	start := make(chan struct{})
	calls := meter.Measure(func() {
		for i, c := range keys {
			wg.Go(func() {
				<-start
				for n := range contentionPerClient {
					a := c.Do("POST", "/api/v1/documents", url.Values{
						"name": {fmt.Sprintf("Contention %d.%d", i, n)}, "prompt": {"Write a haiku about queues."},
					}, nil)
					mu.Lock()
					if a.Status != 201 {
						failures = append(failures, fmt.Sprintf("%d %.120s", a.Status, a.Raw))
					} else if id := a.ID(); ids[id] {
						failures = append(failures, fmt.Sprintf("id %d handed out twice", id))
					} else {
						ids[id] = true
					}
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
	})
	creates := contentionClients * contentionPerClient
	t := ddblocal.SumMetered(calls)
	retries := float64(t.RoundTrips-t.Auth-2*creates) / float64(creates)
	total := keys[0].Do("GET", "/api/v1/documents", nil, nil).Total
	var issue string
	switch {
	case len(failures) > 0:
		issue = fmt.Sprintf("%d of %d creates failed or repeated an id; first: %s", len(failures), creates, failures[0])
	case total != int64(len(ids)):
		issue = fmt.Sprintf("total %d after %d creates", total, len(ids))
	}
	if issue != "" {
		logf("contention: %s", issue)
	}
	b.Add(bench.Figure{Name: "retries_per_create_64", Value: retries, Unit: "retries", Missing: issue})
	b.Add(bench.Figure{Name: "errors_create_64", Value: float64(len(failures)), Unit: "errors"})
	b.Add(bench.Figure{Name: "wru_create_64", Value: t.Writes / float64(creates), Unit: "wru"})
	return nil
}
