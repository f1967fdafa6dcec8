package bench

import (
	"contentapi/shared/app"
	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// maxAnswerBytesPerUnit bounds what one read unit can put in an answer: an
// eventually consistent unit reads 8 KB of a record, and a stored byte is
// at most two in the answer (a `"`, escaped). Lists read that way; a get
// reads strongly consistent, 4 KB a unit.
const maxAnswerBytesPerUnit = 2 * 8192

// KeyDay is usd_worst_key_day: the most one key (its account) can make the
// deployment spend in a day on reads and their data out, and on webhook
// deliveries with every endpoint failing, under the template's default
// limits. Reads: each resource counts its monthlyReads read units at most.
// The rate limit lets a key spend a month's reads within hours, so the
// month's limit is the day's: each resource's limit, plus what a function
// counts late (a batch and one request; a second warm instance of a
// function adds as much again, about $0.02), at the costliest dollars per
// unit: the bound above, or the report's measured requests if one ever
// passed it. Deliveries: the month's monthlyDeliveries attempts, which a
// key can also spend in a day, each at attemptUSD, the dearest an attempt
// costs (CostModel.WorstAttempt); the limit is checked in the write that
// counts each attempt, so none passes it.
func (r *WorstCaseReport) KeyDay(monthlyReads []float64, monthlyDeliveries, attemptUSD float64) Figure {
	perUnit := AWSPrices.DynamoDBRead/1e6 + maxAnswerBytesPerUnit/float64(1<<30)*AWSPrices.DataOut
	for _, q := range r.Requests {
		if q.Reads > 0 {
			perUnit = max(perUnit, (q.Reads*AWSPrices.DynamoDBRead/1e6+float64(q.Bytes)/float64(1<<30)*AWSPrices.DataOut)/q.Reads)
		}
	}
	// Each resource counts up to a batch and one request late.
	late := store.DefaultReadsBatch + r.Worst().Reads
	var units float64
	for _, reads := range monthlyReads {
		units += reads + late
	}
	return Figure{Name: "usd_worst_key_day", Value: units*perUnit + monthlyDeliveries*attemptUSD, Unit: "USD"}
}

// ResourceReads is each resource's default reads limit a month under the
// deployment's default of reads (a resource may get a share of it).
func ResourceReads(reads float64) []float64 {
	var each []float64
	for _, r := range app.Resources {
		limit, _ := r.Policy(quota.Limits{quota.Reads: quota.Max(int64(reads))}).Default(quota.Reads).Value()
		each = append(each, float64(limit))
	}
	return each
}
