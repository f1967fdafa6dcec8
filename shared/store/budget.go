package store

import (
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/records"
)

// DefaultReadBudget is what one list may read, in read units, unless the
// Table says otherwise: the contract's bound on a request.
const DefaultReadBudget = 2000

// budget is what a request may still read, in read units as DynamoDB bills
// them (the consumed capacity it returns). A call is made only when its
// worst case fits, so the budget is never passed, whatever the data.
type budget struct{ left float64 }

func (b *budget) spend(ccs ...*types.ConsumedCapacity) {
	for _, cc := range ccs {
		if cc != nil && cc.CapacityUnits != nil {
			b.left -= *cc.CapacityUnits
		}
	}
}

func (b *budget) spendAll(ccs []types.ConsumedCapacity) {
	for i := range ccs {
		b.spend(&ccs[i])
	}
}

const (
	readUnitBytes = 4096
	// queryPageBytes is where DynamoDB ends a Query page: 1 MB read, plus
	// the entry that crossed it.
	queryPageBytes = 1 << 20
	// systemAttrBytes bounds what the service writes beside a record's
	// fields: keys, timestamps, version, attempt, generation state.
	systemAttrBytes = 8 << 10
	// maxFoldGrowth bounds how much folding (compatibility decomposition)
	// can grow text, in bytes: U+FDFA's 3 bytes become 33.
	maxFoldGrowth = 11
	// maxCounterBytes bounds the account's counter item: counts per scope,
	// usage and limits, and a bounded number of open intents.
	maxCounterBytes = 32 << 10
)

// units is what reading n bytes costs: 4 KB per unit, half as much read
// eventually consistent.
func units(n int, consistent bool) float64 {
	u := float64((n + readUnitBytes - 1) / readUnitBytes)
	if !consistent {
		u /= 2
	}
	return u
}

// maxItemBytes bounds a record's stored size: every text field at its
// longest in 4-byte characters, the folded name and its sort key, and what
// the service writes itself.
func maxItemBytes(res *records.Resource) int {
	n := systemAttrBytes + maxNameKeyBytes + 32
	for _, f := range res.Fields {
		copies := 1 // the field, and where it is kept as generated
		if o := res.Originals; o != nil && o.Fields[f.Name] != "" {
			original := o.Fields[f.Name]
			copies++
			n += len(original) + 16
		}
		if f.Name == res.Generated {
			// The variants after the first, beside it.
			copies += int(res.MaxVariants()) - 1
		}
		n += len(f.Name) + 16
		if k, ok := f.Kind.(records.Text); ok {
			n += copies * utf8.UTFMax * k.Max
			if f.Name == "name" {
				n += maxFoldGrowth * utf8.UTFMax * k.Max
			}
		}
	}
	return n
}

// itemWorst is the most one record costs to fetch (strongly consistent);
// indexPageWorst the most one page of an index Query costs.
func (t *Table) itemWorst() float64 { return units(t.maxItem, true) }

func (t *Table) indexPageWorst() float64 {
	return units(queryPageBytes+t.maxItem, false)
}

var counterWorst = units(maxCounterBytes, true)

func (t *Table) readBudget() budget {
	if t.ReadBudget > 0 {
		return budget{left: t.ReadBudget}
	}
	return budget{left: DefaultReadBudget}
}
