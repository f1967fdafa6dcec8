package bench

import (
	"contentapi/shared/store"
)

// maxAnswerBytesPerUnit bounds what one read unit can put in an answer: an
// eventually consistent unit reads 8 KB of a record, and a stored byte is
// at most two in the answer (a `"`, escaped). Lists read that way; a get
// reads strongly consistent, 4 KB a unit.
const maxAnswerBytesPerUnit = 2 * 8192

// KeyDay is usd_worst_key_day: the most one key (its account) can make the
// deployment spend on reads and their data out in a day when each of
// resources counts monthlyReads read units at most (the template's
// default limit). The rate limit lets a key spend a month's reads within
// hours, so the month's limit is the day's: each resource's limit, plus
// what a function counts late (a batch and one request; a second warm
// instance of a function adds as much again, about $0.02), at the
// costliest dollars per unit: the bound above, or the report's measured
// requests if one ever passed it.
func (r *WorstCaseReport) KeyDay(monthlyReads float64, resources int) Figure {
	perUnit := AWSPrices.DynamoDBRead/1e6 + maxAnswerBytesPerUnit/float64(1<<30)*AWSPrices.DataOut
	for _, q := range r.Requests {
		if q.Reads > 0 {
			perUnit = max(perUnit, (q.Reads*AWSPrices.DynamoDBRead/1e6+float64(q.Bytes)/float64(1<<30)*AWSPrices.DataOut)/q.Reads)
		}
	}
	units := float64(resources) * (monthlyReads + store.DefaultReadsBatch + r.Worst().Reads)
	return Figure{Name: "usd_worst_key_day", Value: units * perUnit, Unit: "USD"}
}
