package integration_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"contentapi/shared/generation"
	"contentapi/shared/quota"
)

// usageSpend is /usage's spend, as the account sees it.
func (g *genStack) usageSpend(t *testing.T) map[string]any {
	t.Helper()
	r := g.get("/api/v1/usage")
	expect(t, r, 200)
	spend, _ := r.data()["spend"].(map[string]any)
	return spend
}

// What the account's generations cost shows in /usage: in all and by day,
// each generation's cost_usd summed across resources (an image and a
// document of two variants), once the tally has read their write-backs;
// a regenerate adds what it cost.
func TestUsageShowsWhatGenerationsSpent(t *testing.T) {
	g := newGenStack(t, genOptions{})
	if spend := g.usageSpend(t); spend["used_usd"] != 0.0 || spend["limit_usd"] != nil || len(spend["by_day"].([]any)) != 0 {
		t.Fatalf("a new account's spend: %v", spend)
	}
	image := g.form("POST", "/api/v1/images", "name", "Cliff", "description", "A red lighthouse", "resolution", "256x256")
	expect(t, image, 201)
	doc := g.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine", "variants", "2")
	expect(t, doc, 201)
	var want generation.USD
	for _, r := range []response{image, doc} {
		if genStatus(r.data()) != "done" {
			t.Fatalf("not generated: %v", r.data())
		}
		st := state(r.data())
		want += costOf(t, st)
	}
	if want <= 40_000_000 {
		t.Fatalf("an image and a document cost %s: the document cost nothing", want)
	}
	g.wantSpend(t, "the image's and the document's cost", want)

	again := g.form("POST", fmt.Sprintf("/api/v1/documents/%v/regenerate", doc.data()["id"]), "prompt", "Our new grinder")
	expect(t, again, 200)
	g.wantSpend(t, "the regenerate's cost added", want+costOf(t, state(again.data())))
}

// costOf is a generation's cost_usd, read to the nano-dollar.
func costOf(t *testing.T, st map[string]any) generation.USD {
	t.Helper()
	f, _ := st["cost_usd"].(float64)
	c, err := generation.ParseUSD(fmt.Sprintf("%.9f", f))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantSpend waits for the tally to bring /usage's spend to want, its days
// summing to it (a run across midnight UTC has two).
func (g *genStack) wantSpend(t *testing.T, what string, want generation.USD) {
	t.Helper()
	eventually(t, what, func() (bool, string) {
		spend := g.usageSpend(t)
		days, _ := spend["by_day"].([]any)
		var byDay generation.USD
		for _, d := range days {
			d := d.(map[string]any)
			date, err := time.Parse(time.DateOnly, fmt.Sprint(d["date"]))
			if err != nil || time.Since(date) > 48*time.Hour {
				return false, fmt.Sprintf("a day of %v is not today's", spend)
			}
			byDay += costOf(t, map[string]any{"cost_usd": d["used_usd"]})
		}
		used := costOf(t, map[string]any{"cost_usd": spend["used_usd"]})
		return used == want && byDay == want && len(days) > 0, fmt.Sprintf("%v, want %s", spend, want.Decimal())
	})
}

// Under a monthly spend limit (the account's own, as make limits
// SPEND_USD=0.1 sets it; /usage shows it as limit_usd), each create holds
// its generation's worst case until the tally settles it to what it cost:
// an image ($0.04 at most, one try) past what is left is 429
// quota_exceeded naming the spend limit and creates nothing, while a
// document, whose worst case still fits, is created.
func TestSpendLimitRefusesWhatNoLongerFits(t *testing.T) {
	g := newGenStack(t, genOptions{})
	limit, err := quota.ParseSpendLimit("0.1")
	if err != nil {
		t.Fatal(err)
	}
	g.setLimits("acme", quota.Limits{quota.Spend: limit})
	if spend := g.usageSpend(t); spend["limit_usd"] != 0.1 {
		t.Fatalf("/usage's spend under a limit of $0.10: %v", spend)
	}
	var spent generation.USD
	for i := range 2 {
		r := g.form("POST", "/api/v1/images", "name", fmt.Sprint("Cliff ", i), "description", "A red lighthouse", "resolution", "256x256")
		expect(t, r, 201)
		spent += costOf(t, state(r.data()))
	}
	g.wantSpend(t, "two images' cost", spent)
	before := time.Now()
	r := g.form("POST", "/api/v1/images", "name", "One too many", "description", "A red lighthouse", "resolution", "256x256")
	expect(t, r, 429)
	if r.Body["code"] != "quota_exceeded" || r.Body["message"] != "The monthly spend limit of $0.1 is reached." {
		t.Errorf("the spend limit's answer: %s", r.Raw)
	}
	if retry, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || retry > int(quota.PeriodOf(before).End().Sub(before).Seconds())+1 {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	list := g.get("/api/v1/images")
	expect(t, list, 200)
	if n := len(list.Body["data"].([]any)); n != 2 {
		t.Errorf("%d images after the refusal, want 2", n)
	}
	doc := g.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine")
	expect(t, doc, 201)
	g.wantSpend(t, "the document's cost added", spent+costOf(t, state(doc.data())))
}
