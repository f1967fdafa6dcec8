package integration_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/documents"
	"contentapi/shared/httpapi"
	"contentapi/shared/images"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// The usage is the month's, by the clock: across the end of a month, the
// period moves on and what the last one used no longer shows.
func TestUsageByTheMonth(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	now := time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)
	clock := func() time.Time { return now }
	img := store.New(env.Client, env.Tables["ImagesTable"], images.Resource)
	doc := store.New(env.Client, env.Tables["DocumentsTable"], documents.Resource)
	img.Quota = quota.Policy{Counts: quota.Images, Defaults: quota.Limits{quota.Images: quota.Max(100)}, History: true}
	doc.Quota = quota.Policy{Counts: quota.Documents, Checks: []quota.Kind{quota.Words}, History: true}
	img.Now, doc.Now = clock, clock
	route := app.UsageRoute([]*store.Table{img, doc}, clock)

	ask := func(query string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", app.UsagePath+query, nil)
		r = r.WithContext(httpapi.WithPrincipal(r.Context(), auth.Principal{Account: "acme", Scopes: []auth.Scope{auth.ScopeRead}}))
		w := httptest.NewRecorder()
		route.Handler(w, r)
		return w
	}
	getPeriod := func(query string) map[string]any {
		t.Helper()
		w := ask(query)
		var body struct {
			Data   map[string]any
			Status int
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != 200 || body.Status != 200 {
			t.Fatalf("usage%s: %d %s", query, w.Code, w.Body)
		}
		return body.Data
	}
	get := func() map[string]any { t.Helper(); return getPeriod("") }
	ctx := t.Context()
	if _, err := img.Create(ctx, "acme", records.Values{"name": "x", "description": "d", "resolution": "256x256"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := doc.CountUsage(ctx, "acme", quota.Words, 1234); err != nil {
		t.Fatal(err)
	}
	// A generation's write-back that spent $0.0000015, as the tally counts it.
	if err := doc.Apply(ctx, "shard-1", "acme", []store.Change{{Spent: 1500, Seq: "1", At: now}}); err != nil {
		t.Fatal(err)
	}
	data := get()
	november := map[string]any{"period": "2026-11",
		"images":    map[string]any{"used": 1.0, "limit": 100.0},
		"documents": map[string]any{"used": 0.0, "limit": nil},
		"words":     map[string]any{"used": 1234.0, "limit": nil},
		"spend": map[string]any{"used_usd": 0.0000015, "limit_usd": nil,
			"by_day": []any{map[string]any{"date": "2026-11-30", "used_usd": 0.0000015}}}}
	if !equalJSON(data, november) {
		t.Errorf("November: %v, want %v", data, november)
	}

	now = now.Add(time.Second)
	data = get()
	want := map[string]any{"period": "2026-12",
		"images":    map[string]any{"used": 0.0, "limit": 100.0},
		"documents": map[string]any{"used": 0.0, "limit": nil},
		"words":     map[string]any{"used": 0.0, "limit": nil},
		"spend":     map[string]any{"used_usd": 0.0, "limit_usd": nil, "by_day": []any{}}}
	if !equalJSON(data, want) {
		t.Errorf("December: %v, want %v", data, want)
	}
	if data := getPeriod("?period=2026-12"); !equalJSON(data, want) {
		t.Errorf("December by its period: %v, want %v", data, want)
	}

	// November, asked for by its period: before its usage moves off the
	// counters, and after December's first create and words moved it.
	if data := getPeriod("?period=2026-11"); !equalJSON(data, november) {
		t.Errorf("November before the move: %v, want %v", data, november)
	}
	if _, err := img.Create(ctx, "acme", records.Values{"name": "y", "description": "d", "resolution": "256x256"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := doc.CountUsage(ctx, "acme", quota.Words, 10); err != nil {
		t.Fatal(err)
	}
	if data := getPeriod("?period=2026-11"); !equalJSON(data, november) {
		t.Errorf("November after the move: %v, want %v", data, november)
	}
	// A month with no use answers zeros; the oldest kept is 13 months back.
	empty := map[string]any{"period": "2025-11",
		"images":    map[string]any{"used": 0.0, "limit": 100.0},
		"documents": map[string]any{"used": 0.0, "limit": nil},
		"words":     map[string]any{"used": 0.0, "limit": nil},
		"spend":     map[string]any{"used_usd": 0.0, "limit_usd": nil, "by_day": []any{}}}
	if data := getPeriod("?period=2025-11"); !equalJSON(data, empty) {
		t.Errorf("a month without use: %v, want %v", data, empty)
	}
	// Limits changed in December: the earlier months, used or not, keep
	// the limits they ended with.
	if _, err := img.SetLimits(ctx, "acme", quota.Limits{quota.Images: quota.Max(50)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := img.SetSpendLimit(ctx, "acme", ptr(quota.Max(25_000_000_000)), true); err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string]map[string]any{"?period=2026-11": november, "?period=2025-11": empty} {
		if data := getPeriod(query); !equalJSON(data, want) {
			t.Errorf("usage%s after the limits changed: %v, want %v", query, data, want)
		}
	}
	if data := get(); !equalJSON(data["images"], map[string]any{"used": 1.0, "limit": 50.0}) ||
		!equalJSON(data["spend"].(map[string]any)["limit_usd"], 25.0) {
		t.Errorf("December after the limits changed: %v", data)
	}
	// A period malformed, to come, past keeping or repeated is a 422
	// naming period.
	for _, query := range []string{"?period=2026-13", "?period=2026-1", "?period=%202026-11", "?period=", "?period=2027-01",
		"?period=2025-10", "?period=2026-11&period=2026-11"} {
		w := ask(query)
		var body struct{ Errors map[string][]string }
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != 422 || len(body.Errors["period"]) != 1 || len(body.Errors) != 1 {
			t.Errorf("usage%s: %d %s, want a 422 naming period", query, w.Code, w.Body)
		}
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
