// GET /api/v1/usage: what the account has used this month and the limits
// that apply, read from each resource's counter item (shared/quota says
// what is kept there). It was package usage, too small to stand alone.

package app

import (
	"net/http"
	"time"

	"contentapi/shared/httpapi"
	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// UsagePath is the usage endpoint's path.
const UsagePath = "/api/v1/usage"

// UsageRoute serves the usage of the kinds the tables count, by the clock now:
// one strongly consistent read of each table's counter item.
func UsageRoute(tables []*store.Table, now func() time.Time) httpapi.Route {
	return httpapi.Route{Method: http.MethodGet, Pattern: UsagePath, Handler: func(w http.ResponseWriter, r *http.Request) {
		p, _ := httpapi.PrincipalFrom(r.Context())
		period := quota.PeriodOf(now())
		data := map[string]any{"period": period.String()}
		for _, t := range tables {
			meters, err := t.Usage(r.Context(), p.Account, period)
			if err != nil {
				httpapi.WriteError(w, r, store.Classify(err))
				return
			}
			for k, m := range meters {
				if k == quota.Reads {
					// Each resource's reads count against the limit
					// on their own.
					reads, _ := data[string(k)].(map[string]quota.Meter)
					if reads == nil {
						reads = map[string]quota.Meter{}
						data[string(k)] = reads
					}
					reads[t.Resource()] = m
					continue
				}
				data[string(k)] = m
			}
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": data, "status": http.StatusOK})
	}}
}
