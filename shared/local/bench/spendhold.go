package bench

import (
	"context"
	"net/url"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/generation"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
)

// SpendHoldFigure is wru_spend_hold_create: what the monthly spend limit
// adds to the write units of a create that generates (issue 38, at most
// 1): the worst case held on the account's ledger, in the request. It is
// the difference of the own write units (auth and rate limit aside) of the
// same document (form) created by c for account without a spend limit and
// under one, the limit set with db, unmetered, and taken away after. A
// create that does not generate, or a limit not set, leaves it missing.
// The tally's writes when the generation ends (the hold settled, the spend
// summed) are not a create's request's, and not in it.
func SpendHoldFigure(ctx context.Context, m *ddblocal.Meter, c *Caller, db *dynamodb.Client, tables map[string]string, account string, form url.Values) Figure {
	f := Figure{Name: "wru_spend_hold_create", Unit: "wru"}
	limits := []quota.Limits{nil, {quota.Spend: quota.Max(int64(generation.Dollars(1_000)))}}
	var writes [2]float64
	for i, set := range limits {
		reset := []quota.Kind{quota.Spend} // none of the account's own: the deployment's, none
		if set != nil {
			reset = nil
		}
		if _, err := app.SetLimits(ctx, db, tables, account, set, reset); err != nil {
			f.Missing = err.Error()
			return f
		}
		var a Answer
		calls := m.Measure(func() { a = c.Do("POST", "/api/v1/documents", form, nil) })
		if f.Missing = Generated(a); f.Missing != "" {
			return f
		}
		writes[i] = ddblocal.SumMetered(slices.DeleteFunc(calls, func(call ddblocal.MeteredCall) bool { return call.Purpose != "" })).Writes
	}
	if _, err := app.SetLimits(ctx, db, tables, account, nil, []quota.Kind{quota.Spend}); err != nil {
		f.Missing = err.Error()
	}
	f.Value = writes[1] - writes[0]
	return f
}
