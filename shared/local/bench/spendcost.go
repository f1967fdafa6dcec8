package bench

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/generation"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/stack"
	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// spendCostCreates is how many creates each of the cost figures is the
// mean of.
const spendCostCreates = 5

// SpendCost is where the cost figures are measured: the bench's
// configuration and tables, the caller of an account whose creates
// generate, and the metered client's meter, whose calls are the requests'.
type SpendCost struct {
	Config   app.Config
	Plain    *dynamodb.Client // unmetered
	Endpoint string
	Template *sam.Template
	Tables   map[string]string
	Meter    *ddblocal.Meter
	Caller   *Caller
	Account  string
}

// AddSpendCost adds the write units the cost bookkeeping adds to a create
// that generates (issue 38: at most 1 more than before it), for an account
// without a spend limit, the default (wru_cost_create, which the target
// is on), and beside it for one under a limit (wru_cost_create_limited).
// Each is the mean over spendCostCreates creates of the same document
// (form), made one after another as a client makes them, of:
//   - in the request, what the limit adds: the hold on the ledger (the
//     create's own write units under the limit less without it; nothing
//     without a limit);
//   - in the tally, when the generation ends: the sum on the account's
//     spend item, which every account pays, once for each batch of the
//     account's records the tally's mapping delivers, and under a limit
//     the settle of the hold on the ledger, once for each generation.
//
// The tally's part is measured as it is deployed: the template's tally
// mappings, run by the local stream poller, hand the creates' stream
// records to the tally function on a client of its own meter, and only its
// writes of the cost items (store.CostItem) count.
func AddSpendCost(ctx context.Context, b *Board, s SpendCost, form url.Values) {
	names := []string{"wru_cost_create", "wru_cost_create_limited"}
	requests, tallied, err := s.measure(ctx, form)
	if err != nil {
		b.Missing(err.Error(), names...)
		return
	}
	b.Add(Figure{Name: names[0], Value: tallied[0], Unit: "wru"})
	b.Add(Figure{Name: names[1], Value: requests[1] - requests[0] + tallied[1], Unit: "wru"})
}

// measure returns, without a spend limit and under one, the mean write
// units of a create's request, and of the tally's cost items for it.
func (s SpendCost) measure(ctx context.Context, form url.Values) (requests, tallied [2]float64, err error) {
	meter, err := ddblocal.NewMeter(s.Template, s.Tables)
	if err != nil {
		return requests, tallied, err
	}
	fn, err := app.New(s.Config, dynamodb.New(s.Plain.Options(), meter.Options), stack.Parts).Tally()
	if err != nil {
		return requests, tallied, err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	poller, err := stack.DeliverTally(ctx, s.Plain, s.Endpoint, s.Template, s.Tables, fn, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return requests, tallied, err
	}
	// Its mappings read from now on: once they read, every record after
	// is delivered.
	if err := poller.Drained(ctx); err != nil {
		return requests, tallied, err
	}
	defer app.SetLimits(ctx, s.Plain, s.Tables, s.Account, nil, []quota.Kind{quota.Spend})
	for i, set := range []quota.Limits{nil, {quota.Spend: quota.Max(int64(generation.Dollars(1_000)))}} {
		reset := []quota.Kind{quota.Spend} // none of the account's own: the deployment's, none
		if set != nil {
			reset = nil
		}
		if _, err := app.SetLimits(ctx, s.Plain, s.Tables, s.Account, set, reset); err != nil {
			return requests, tallied, err
		}
		var problem string
		tally := meter.Measure(func() {
			for range spendCostCreates {
				var a Answer
				own := s.Meter.Measure(func() { a = s.Caller.Do("POST", "/api/v1/documents", form, nil) })
				if problem = Generated(a); problem != "" {
					return
				}
				requests[i] += ddblocal.SumMetered(slices.DeleteFunc(own, func(call ddblocal.MeteredCall) bool { return call.Purpose != "" })).Writes
			}
			err = poller.Drained(ctx)
		})
		if problem != "" {
			return requests, tallied, errors.New(problem)
		}
		if err != nil {
			return requests, tallied, err
		}
		costs := slices.DeleteFunc(tally, func(call ddblocal.MeteredCall) bool { return !call.Write || !costItem(call.Key) })
		requests[i] /= spendCostCreates
		tallied[i] = ddblocal.SumMetered(costs).Writes / spendCostCreates
	}
	return requests, tallied, nil
}

// costItem says whether key is a cost item's (store.CostItem).
func costItem(key map[string]types.AttributeValue) bool {
	id, ok := key[store.AttrID].(*types.AttributeValueMemberN)
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(id.Value, 10, 64)
	return err == nil && store.CostItem(n)
}
