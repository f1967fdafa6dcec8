package main

import (
	"context"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
)

// measureQuota is what the monthly limits cost: a create of an account with
// limits of its own (checked and counted in the counter write a create
// makes anyway), a create those limits refuse, and the usage endpoint. The
// limits are set with db, unmetered, and taken away again after.
func measureQuota(ctx context.Context, m *ddblocal.Meter, logs *bench.LogMeter, c *bench.Caller, db *dynamodb.Client, tables map[string]string) ([]operationResult, error) {
	set := func(limits quota.Limits, reset ...quota.Kind) error {
		_, err := app.SetLimits(ctx, db, tables, account, limits, reset)
		return err
	}
	document := url.Values{"name": {"Quarterly report: summary"}, "prompt": {"Summarise the quarter for the board."}}
	ops := []struct {
		limits quota.Limits
		op     operation
	}{
		{quota.Limits{quota.Images: quota.Max(100), quota.Documents: quota.Max(500), quota.Words: quota.Max(50_000)},
			operation{Name: "create_with_quota", What: "POST /api/v1/documents (as create) for an account with limits of its own, under them",
				method: "POST", path: "/api/v1/documents", status: 201, form: document}},
		{quota.Limits{quota.Documents: quota.Max(0)},
			operation{Name: "create_over_quota", What: "POST /api/v1/documents (as create) past the month's documents limit: 429, nothing written",
				method: "POST", path: "/api/v1/documents", status: 429, form: document}},
		{nil, operation{Name: "usage", What: "GET /api/v1/usage: the counter items of both tables", method: "GET", path: app.UsagePath, status: 200}},
		{nil, operation{Name: "usage_earlier", What: "GET /api/v1/usage?period= the month before: each table's history item too", method: "GET", path: app.UsagePath + "?period=" + quota.PeriodOf(time.Now()).Before(1).String(), status: 200}},
	}
	var results []operationResult
	for _, o := range ops {
		if err := set(o.limits); err != nil {
			return nil, err
		}
		r, _ := measure(m, logs, c, o.op)
		results = append(results, r)
	}
	return results, set(nil, app.Kinds...)
}
