// GET /api/v1/usage: what the account has used this month and the limits
// that apply, read from each resource's counter item and the webhooks'
// (shared/quota says what is kept there). It was package usage, too small to stand alone.

package app

import (
	"context"
	"net/http"
	"time"

	"contentapi/shared/httpapi"
	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// UsagePath is the usage endpoint's path.
const UsagePath = "/api/v1/usage"

// Counter is what keeps an account's usage of some kinds beside the
// resources' tables: the webhooks' table its deliveries
// (hookstore.Store).
type Counter interface {
	Usage(ctx context.Context, account string, period quota.Period) (map[quota.Kind]quota.Meter, error)
}

// readsMeter is a resource's reads as the usage shows them: what is
// counted, and the batch it is counted in, which says how far used may
// trail the reads (store.Table.CountReads).
type readsMeter struct {
	quota.Meter
	Batch int64 `json:"batch"`
}

// UsageRoute serves the usage of the kinds the tables and the other
// counters count, by the clock now: one strongly consistent read of each
// one's counter item.
func UsageRoute(tables []*store.Table, now func() time.Time, others ...Counter) httpapi.Route {
	// Each resource's reads count against the limit on their own, shown
	// by resource: a counter of no resource has no reads.
	type source struct {
		Counter
		resource string
		batch    int64
	}
	var sources []source
	for _, t := range tables {
		sources = append(sources, source{t, t.Resource(), t.ReadsBatchSize()})
	}
	for _, c := range others {
		sources = append(sources, source{Counter: c})
	}
	return httpapi.Route{Method: http.MethodGet, Pattern: UsagePath, Handler: func(w http.ResponseWriter, r *http.Request) {
		p, _ := httpapi.PrincipalFrom(r.Context())
		period := quota.PeriodOf(now())
		data := map[string]any{"period": period.String()}
		for _, src := range sources {
			meters, err := src.Usage(r.Context(), p.Account, period)
			if err != nil {
				httpapi.WriteError(w, r, store.Classify(err))
				return
			}
			for k, m := range meters {
				if k == quota.Reads {
					reads, _ := data[string(k)].(map[string]readsMeter)
					if reads == nil {
						reads = map[string]readsMeter{}
						data[string(k)] = reads
					}
					reads[src.resource] = readsMeter{m, src.batch}
					continue
				}
				data[string(k)] = m
			}
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": data, "status": http.StatusOK})
	}}
}
