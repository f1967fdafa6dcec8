package store

// How totals settle when the account writes no more.
//
// An intent that an outage left open is settled by the account's next
// counter write once it is older than Horizon (counter.go). An account that
// writes nothing more would keep it, and a total off by it, for good. So the
// counter write that opens an intent also sets two attributes of the
// counter item:
//
//   - unsettled: when the first intent was opened since the counter last had
//     none (Unix seconds of its token). It is set only if missing, so no
//     intent on the counter is older than it, and it changes only then.
//   - last_intent: the token of the latest intent opened.
//
// unsettled is the sort key of the index by_unsettled (partition account,
// keys only): a sparse index, holding only the counters that may have an
// intent open, whatever the number of accounts. The tally function's
// sweep (shared/tally), on a schedule, reads it (Unsettled) and runs
// Settle, the settling a later write does, on each counter whose unsettled
// is older than Horizon. Settle, once it leaves no
// intent open, removes unsettled, on condition that last_intent is still
// the one it read: an intent opened meanwhile keeps its counter in the
// index. An intent that landed and is waiting to ride away on its process's
// next write (counter.go) is settled the same way when that write never
// comes: its record is there, so it is kept.
//
// The index is read with a Scan, not a Query: a Query needs one partition
// key value, which would put every unsettled counter in one index
// partition, whose write throughput would then throttle the table's
// creates. A Scan of a sparse index reads only its entries (account, id and
// unsettled: under 100 bytes each), and an index entry is written only when
// unsettled appears or goes, not on every create (last_intent is not
// projected). A counter whose intents keep being young (an account that
// writes all the time) stays in the index: each sweep reads it once.

import (
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// maxSweepers bounds the counters one sweep settles at a time.
const maxSweepers = 16

// Swept is what a sweep did.
type Swept struct {
	// Counters is how many counters it read, Settled how many intents it
	// closed on them.
	Counters, Settled int
	// Left is how many counters it left to the next sweep, out of time.
	Left int
}

// Sweep settles, on every counter Unsettled lists, what Settle would: the
// intents older than Horizon. It starts no counter once ctx has less than
// settleReserve left, leaving those to the next sweep. A counter it cannot
// settle now (DynamoDB failing) is an error, after the others are done.
func (t *Table) Sweep(ctx context.Context) (Swept, error) {
	accounts, err := t.Unsettled(ctx)
	if err != nil {
		return Swept{}, err
	}
	var (
		mu   sync.Mutex
		done Swept
		errs []error
		wg   sync.WaitGroup
	)
	left := 0
	sem := make(chan struct{}, maxSweepers)
	for i, account := range accounts {
		sem <- struct{}{}
		if !hasTime(ctx, settleReserve) {
			left = len(accounts) - i
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			n, err := t.Settle(ctx, account)
			mu.Lock()
			defer mu.Unlock()
			done.Counters++
			done.Settled += n
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	done.Left = left
	return done, errors.Join(errs...)
}

// Unsettled returns the accounts whose counters have had an intent open
// since before Horizon: the ones Settle may find something to settle on,
// read from the sparse index IndexUnsettled.
func (t *Table) Unsettled(ctx context.Context) ([]string, error) {
	cutoff := t.Now().Add(-t.Horizon).Unix()
	p := dynamodb.NewScanPaginator(t.db, &dynamodb.ScanInput{
		TableName:                 &t.name,
		IndexName:                 ptr(IndexUnsettled),
		FilterExpression:          ptr("#u <= :cutoff"),
		ExpressionAttributeNames:  map[string]string{"#u": AttrUnsettled},
		ExpressionAttributeValues: Item{":cutoff": num(cutoff)},
	})
	var accounts []string
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, item := range out.Items {
			if account := StrAttr(item, AttrAccount); account != "" {
				accounts = append(accounts, account)
			}
		}
	}
	return accounts, nil
}

// markSettled takes the counter, as read before its intents were settled,
// out of the index of unsettled ones, unless an intent was opened since.
func (t *Table) markSettled(ctx context.Context, account string, counter Item) error {
	if _, ok := counter[AttrUnsettled]; !ok {
		return nil
	}
	u := newUpdate()
	unsettled, last := u.name(AttrUnsettled), u.name(attrLastIntent)
	u.remove(AttrUnsettled)
	u.cond("attribute_exists(" + unsettled + ")")
	if seen, ok := counter[attrLastIntent].(*types.AttributeValueMemberS); ok {
		u.cond(last + " = " + u.value(str(seen.Value)))
	} else {
		u.cond("attribute_not_exists(" + last + ")")
	}
	_, err := t.writeCounter(ctx, account, u)
	if _, failed := conditionFailed(err); failed {
		return nil // an intent opened since: the counter stays in the index
	}
	return err
}
