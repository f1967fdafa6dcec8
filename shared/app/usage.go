// GET /api/v1/usage: what the account has used this month and the limits
// that apply, read from each resource's counter item and the webhooks'
// (shared/quota says what is kept there). It was package usage, too small to stand alone.

package app

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"contentapi/shared/generation"
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

// EarlierCounter is a Counter that keeps the months before the current
// one (quota.HistoryMonths of them): UsageIn reads one of them.
type EarlierCounter interface {
	UsageIn(ctx context.Context, account string, period quota.Period) (map[quota.Kind]quota.Meter, error)
}

// usagePeriod is the month the usage is asked for: the query's period, as
// the answer's period is written (2026-11), or the current month. A month
// malformed, to come, or older than the history keeps is a 422 naming
// period.
func usagePeriod(r *http.Request, current quota.Period) (quota.Period, error) {
	q, err := httpapi.ParseQuery(r)
	if err != nil {
		return quota.Period{}, err
	}
	s, given, repeated := q.Get("period")
	if !given {
		return current, nil
	}
	if repeated {
		return quota.Period{}, httpapi.InvalidField("period", "Give one period.")
	}
	period, err := quota.ParsePeriod(s)
	switch {
	case err != nil:
		return quota.Period{}, httpapi.InvalidField("period", "The period must be a month written YYYY-MM, as "+current.String()+".")
	case period.Start().After(current.Start()):
		return quota.Period{}, httpapi.InvalidField("period", "The period "+period.String()+" has not begun; the current one is "+current.String()+".")
	case !quota.Kept(period, current):
		return quota.Period{}, httpapi.InvalidField("period", "The usage of a month is kept "+strconv.Itoa(quota.HistoryMonths)+
			" months after it: the earliest period is "+current.Before(quota.HistoryMonths).String()+".")
	}
	return period, nil
}

// readsMeter is a resource's reads as the usage shows them: what is
// counted, and the batch it is counted in, which says how far used may
// trail the reads (store.Table.CountReads).
type readsMeter struct {
	quota.Meter
	Batch int64 `json:"batch"`
}

// UsageRoute serves the usage of the kinds the tables and the other
// counters count in the current month, by the clock now, or in the
// earlier month the query's period names: one strongly consistent read of
// each one's counter item, and for an earlier month of each table's
// history item too.
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
		current := quota.PeriodOf(now())
		period, err := usagePeriod(r, current)
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		data := map[string]any{"period": period.String()}
		for _, src := range sources {
			read := src.Usage
			if earlier, ok := src.Counter.(EarlierCounter); ok && period != current {
				read = earlier.UsageIn
			}
			meters, err := read(r.Context(), p.Account, period)
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
		spend, err := spending(r.Context(), tables, p.Account, period)
		if err != nil {
			httpapi.WriteError(w, r, store.Classify(err))
			return
		}
		data["spend"] = spend
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": data, "status": http.StatusOK})
	}}
}

// Spend is what the account's generations cost in a period, in dollars:
// in all and by day, with the monthly spend limit (null: none).
type Spend struct {
	UsedUSD  generation.USD  `json:"used_usd"`
	LimitUSD *generation.USD `json:"limit_usd"`
	ByDay    []DaySpend      `json:"by_day"`
}

// DaySpend is what was spent on one day (UTC).
type DaySpend struct {
	Date    string         `json:"date"`
	UsedUSD generation.USD `json:"used_usd"`
}

// spending sums what the generated resources' tables say the account
// spent in period, with its spend limit, which the first of them (where
// the spend ledgers are) says: one strongly consistent read of each one's
// spend item.
func spending(ctx context.Context, tables []*store.Table, account string, period quota.Period) (Spend, error) {
	spend := Spend{ByDay: []DaySpend{}}
	byDay := map[string]generation.USD{}
	first := true
	for _, t := range tables {
		if !t.Generates() {
			continue
		}
		s, err := t.Spent(ctx, account, period)
		if err != nil {
			return Spend{}, err
		}
		if n, ok := s.Limit.Value(); ok && first {
			limit := generation.USD(n)
			spend.LimitUSD = &limit
		}
		first = false
		spend.UsedUSD += s.Used
		for _, d := range s.Days {
			byDay[d.Date] += d.Used
		}
	}
	for _, date := range slices.Sorted(maps.Keys(byDay)) {
		spend.ByDay = append(spend.ByDay, DaySpend{Date: date, UsedUSD: byDay[date]})
	}
	return spend, nil
}
