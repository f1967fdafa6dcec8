package store

import (
	"context"
	"math"
	"sync"
	"time"

	ddbexpr "github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"contentapi/shared/quota"
)

// DefaultReadsBatch is how many read units a function gathers per account
// before it adds them to the account's month (quota.Reads) in one write on
// the counter item: a read costs no extra DynamoDB call, and one write of
// about a unit's price counts up to $0.0013 of reads. The price is a
// looser bound: a function counts an account's reads at most this much
// (plus one request) late, so a limit is reached late by as much per warm
// instance, and an instance that stops loses what it had not counted yet.
const DefaultReadsBatch = 10_000

// readMeter is a function's count of its accounts' reads not yet added,
// and what the last addition learned of each account's limit.
type readMeter struct {
	mu       sync.Mutex
	accounts map[string]*accountReads
}

type accountReads struct {
	period  quota.Period
	pending float64
	// limit and over are the account's limit of reads and whether its
	// month's reads had reached it, as of the last addition in period.
	limit quota.Limit
	over  bool
	// learned is when limit and over were learned.
	learned time.Time
}

// readsRecheck is how long an account found over its limit is refused on
// that finding; then one read of its counter item learns again whether it
// still is (a higher limit, or another month), once a minute at most.
const readsRecheck = time.Minute

// account is the account's entry for period, a fresh one in a new month.
// The caller holds mu.
func (m *readMeter) account(account string, period quota.Period) *accountReads {
	if m.accounts == nil {
		m.accounts = map[string]*accountReads{}
	}
	a := m.accounts[account]
	if a == nil || a.period != period {
		a = &accountReads{period: period}
		m.accounts[account] = a
	}
	return a
}

// CheckReads is a *records.QuotaError when the account's reads of the
// month had reached its limit when this function last counted them (or,
// that finding older than readsRecheck, when they still have); nil
// otherwise, and always for a table that does not meter reads.
func (t *Table) CheckReads(ctx context.Context, account string) error {
	if !t.Quota.MetersReads {
		return nil
	}
	now := t.Now()
	period := quota.PeriodOf(now)
	t.reads.mu.Lock()
	a := t.reads.account(account, period)
	over, limit, stale := a.over, a.limit, now.Sub(a.learned) >= readsRecheck
	t.reads.mu.Unlock()
	if over && stale {
		meters, err := t.Usage(ctx, account, period)
		if err != nil {
			return err
		}
		over, limit = t.reads.learn(account, period, meters[quota.Reads], now)
	}
	if over {
		return quota.Exceeded(quota.Reads, limit, now)
	}
	return nil
}

// learn keeps what a read of the counter item told of the account's reads
// and returns it.
func (m *readMeter) learn(account string, period quota.Period, meter quota.Meter, now time.Time) (bool, quota.Limit) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.account(account, period)
	a.limit, a.over, a.learned = meter.Limit, !meter.Limit.Allows(meter.Used), now
	return a.over, a.limit
}

// ReadsBatchSize is how many read units of an account a function gathers
// before it adds them to the month's usage: what the usage's reads trail
// by, at most, per warm instance.
func (t *Table) ReadsBatchSize() int64 {
	if t.ReadsBatch > 0 {
		return int64(math.Ceil(t.ReadsBatch))
	}
	return DefaultReadsBatch
}

// CountReads adds units to the account's reads. They are gathered until
// there are ReadsBatch of them, then added to the month's usage in one
// write on the counter item, which also tells whether the limit is
// reached. A failed write keeps them for the next: reading went well, and
// counting it must not fail the answer.
func (t *Table) CountReads(ctx context.Context, account string, units float64) {
	if !t.Quota.MetersReads || units <= 0 {
		return
	}
	now := t.Now()
	period := quota.PeriodOf(now)
	t.reads.mu.Lock()
	a := t.reads.account(account, period)
	a.pending += units
	if a.pending < float64(t.ReadsBatchSize()) {
		t.reads.mu.Unlock()
		return
	}
	n := int64(math.Ceil(a.pending))
	a.pending = 0
	t.reads.mu.Unlock()

	meter, err := t.addReads(ctx, account, n, now)
	if err != nil {
		t.reads.mu.Lock()
		t.reads.account(account, period).pending += float64(n)
		t.reads.mu.Unlock()
		return
	}
	t.reads.learn(account, period, meter, now)
}

// addReads adds n read units to the account's month and returns the
// month's reads with the limit that applies.
func (t *Table) addReads(ctx context.Context, account string, n int64, now time.Time) (quota.Meter, error) {
	expr, err := t.Quota.Usage(quota.Reads, n, now).Build(ddbexpr.UpdateBuilder{})
	if err != nil {
		return quota.Meter{}, err
	}
	// The whole item comes back, for the limit beside the usage.
	item, err := t.updateCounter(ctx, account, expr)
	if err != nil {
		return quota.Meter{}, err
	}
	t.archive(ctx, account, item)
	meters, err := t.Quota.Read(item, quota.PeriodOf(now))
	if err != nil {
		return quota.Meter{}, err
	}
	t.noteUsage(ctx, account, item, quota.PeriodOf(now))
	return meters[quota.Reads], nil
}
