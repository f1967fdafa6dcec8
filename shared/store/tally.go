package store

// The tally's write (shared/tally runs it): how a delete's count comes down,
// and a generation's hold is given back.
//
// A delete is one write, the record turned into its tombstone; the table's
// stream then carries that change (old image live, new image a tombstone)
// to the tally function, which takes the count down with Apply. The end of
// a generation that held part of the month's quota comes the same way
// (holds.go). Lambda
// delivers a shard's records in order the first time, but may deliver them
// again: a retried batch, the rest of a batch after a reported failure. So
// each count write on the counter item also moves a watermark of the shard
// it reads, sq_<hash of the shard id> = "<sequence number> <unix seconds>",
// conditioned on the watermark being below the first sequence number it
// applies: a record at or below the watermark was counted already. The
// count and the watermark move in one single-item write, so a record is
// counted exactly once however often it arrives, and a lost answer is
// harmless (the retry finds the watermark moved and drops what it covers).
//
// Sequence numbers are decimal strings of up to 40 digits, stored
// zero-padded to 40 so that comparing strings orders them. A shard's
// watermark matters while the shard can still deliver: a stream keeps its
// records 24 hours, so a watermark older than markRetention is removed.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"contentapi/shared/generation"
)

const (
	markPrefix = "sq_"
	seqDigits  = 40
	// markRetention outlasts a stream record's 24 hours.
	markRetention = 25 * time.Hour
	// maxApplyTries bounds the writes of one Apply: each failed
	// condition drops what the watermark covers, so the next applies.
	maxApplyTries = 4
)

// Change is what one record of the table's stream moves on its account's
// counter item: a record's delete takes its scope's count down, and a
// generation that ended, or lost its record, gives back what it held of
// the month's quota and did not use (holds.go).
type Change struct {
	// Deleted: the record was deleted, and Scope is its scope then (the
	// stream's old image).
	Deleted bool
	Scope   int64
	// Usage is what it adds to the counter's usage attributes (negative:
	// a hold given back).
	Usage map[string]int64
	// Spent is what a generation's write-back added to its cost, which
	// the account's spend item sums (spend.go).
	Spent generation.USD
	// Released is the spend hold the change ended (the generation ended,
	// or its record was deleted or regenerated), which the ledger gives
	// back (ledger.go).
	Released *generation.SpendHold
	// Cost is what the generation whose hold the change ended cost in
	// all (generation.State.CostUSD).
	Cost generation.USD
	// Seq is the stream record's sequence number, At its approximate
	// creation time.
	Seq string
	At  time.Time
}

// Changed reads a stream record of the table (its event name, and its old
// and new images): what it moves on whose counter. ok is false for a
// record that moves nothing: neither a record's delete (a live record
// turned tombstone) nor the end of a generation that held something (a
// claim or a hand-over keeps the hold).
func (t *Table) Changed(event string, old, new Item) (account string, c Change, ok bool) {
	account = StrAttr(old, AttrAccount)
	id, hasID := IntAttr(old, AttrID)
	if account == "" || !hasID || id == counterID || !isLive(old) {
		return "", Change{}, false
	}
	gone := event == eventRemove || !isLive(new)
	if scope, hasScope := t.itemScope(old); gone && event == eventModify && hasScope {
		c.Deleted, c.Scope = true, scope
	}
	c.Usage = givenBack(old, new, gone)
	if !gone {
		c.Spent = spent(old, new)
	}
	c.Released, c.Cost = spendReleased(old, new, gone)
	return account, c, c.Deleted || len(c.Usage) > 0 || c.Spent > 0 || c.Released != nil
}

// The stream's event names that Changed reads.
const (
	eventModify = "MODIFY"
	eventRemove = "REMOVE"
)

// ValidSeq reports a sequence number Apply can order.
func ValidSeq(seq string) bool {
	if seq == "" || len(seq) > seqDigits {
		return false
	}
	for _, c := range seq {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Apply moves an account's changes, all read from one shard of the
// table's stream, onto its counter item, each exactly once, however often
// and in whatever order they are delivered again. Every sequence number
// must be ValidSeq. On an error, some or none of them may be applied:
// delivering them again is safe.
func (t *Table) Apply(ctx context.Context, shard, account string, cs []Change) error {
	counted := slices.DeleteFunc(slices.Clone(cs), func(c Change) bool { return !c.Deleted && len(c.Usage) == 0 })
	err := t.applyTo(ctx, shard, account, counterID, counted, func(pending []Change) (map[string]int64, []string) {
		adds := map[string]int64{}
		for _, c := range pending {
			if c.Deleted {
				adds[countAttr(c.Scope)]--
			}
			for attr, n := range c.Usage {
				adds[attr] += n
			}
		}
		return adds, nil
	})
	if err != nil {
		return err
	}
	spends := slices.DeleteFunc(slices.Clone(cs), func(c Change) bool { return c.Spent <= 0 })
	err = t.applyTo(ctx, shard, account, spendID, spends, func(pending []Change) (map[string]int64, []string) {
		return spendUpdate(pending, t.Now())
	})
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.Released != nil {
			if err := t.settleSpend(ctx, account, c.Released, c.Cost); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyTo moves cs onto the account's item id (the counter, or the spend
// item) with what moves gives for those not counted yet, under the item's
// own watermark of the shard.
func (t *Table) applyTo(ctx context.Context, shard, account string, id int64, cs []Change, moves func([]Change) (map[string]int64, []string)) error {
	pending := slices.Clone(cs)
	for i := range pending {
		pending[i].Seq = padSeq(pending[i].Seq)
	}
	slices.SortFunc(pending, func(a, b Change) int { return strings.Compare(a.Seq, b.Seq) })
	mark := markAttr(shard)
	for range maxApplyTries {
		if len(pending) == 0 {
			return nil
		}
		first, last := pending[0], pending[len(pending)-1]
		adds, removes := moves(pending)
		u := newUpdate()
		for _, attr := range slices.Sorted(maps.Keys(adds)) {
			if adds[attr] != 0 {
				u.add(attr, adds[attr])
			}
		}
		for _, attr := range removes {
			u.remove(attr)
		}
		m := u.name(mark)
		u.set(m + " = " + u.value(str(last.Seq+" "+strconv.FormatInt(last.At.Unix(), 10))))
		u.cond("(attribute_not_exists(" + m + ") OR " + m + " < " + u.value(str(first.Seq)) + ")")
		item, err := t.writeAt(ctx, account, id, u)
		if old, failed := conditionFailed(err); failed {
			counted := watermark(old, mark)
			pending = slices.DeleteFunc(pending, func(c Change) bool { return c.Seq <= counted })
			continue
		}
		if err != nil {
			return err
		}
		// Counted. Pruning is housekeeping: should it fail, a later
		// count of the account prunes.
		_ = t.pruneMarks(ctx, account, id, item, mark)
		return nil
	}
	return fmt.Errorf("counting changes in %s: no progress", t.name)
}

// writeAt is a write of the account's item id: the counter item's, with
// what rides on it (writeCounter), or another's.
func (t *Table) writeAt(ctx context.Context, account string, id int64, u *update) (Item, error) {
	if id == counterID {
		return t.writeCounter(ctx, account, u)
	}
	return t.writeRecord(ctx, account, id, u)
}

// pruneMarks removes the watermarks of the counter that are older than
// markRetention, each only if it is still what was read, but the one just
// written (keep).
func (t *Table) pruneMarks(ctx context.Context, account string, id int64, counter Item, keep string) error {
	cutoff := t.Now().Add(-markRetention).Unix()
	u := newUpdate()
	for _, name := range slices.Sorted(maps.Keys(counter)) {
		if !strings.HasPrefix(name, markPrefix) || name == keep {
			continue
		}
		value := StrAttr(counter, name)
		_, at, _ := strings.Cut(value, " ")
		if sec, err := strconv.ParseInt(at, 10, 64); err != nil || sec >= cutoff {
			continue
		}
		u.remove(name)
		u.cond(u.name(name) + " = " + u.value(str(value)))
	}
	if len(u.removes) == 0 {
		return nil
	}
	_, err := t.writeAt(ctx, account, id, u)
	if _, failed := conditionFailed(err); failed {
		return nil // moved since: not stale any more
	}
	return err
}

// markAttr is the watermark attribute of a shard: short, so that the
// counter item stays under 1 KB with a day's shards on it.
func markAttr(shard string) string {
	sum := sha256.Sum256([]byte(shard))
	return markPrefix + base64.RawURLEncoding.EncodeToString(sum[:6])
}

func padSeq(seq string) string {
	if len(seq) >= seqDigits {
		return seq
	}
	return strings.Repeat("0", seqDigits-len(seq)) + seq
}

// Counted reports whether a counter item has counted the delete read at
// seq from a shard of its table's stream (the shard's watermark is at or
// past it): for what waits for the tally to catch up.
func Counted(counter Item, shard, seq string) bool {
	counted := watermark(counter, markAttr(shard))
	return counted != "" && padSeq(seq) <= counted
}

// watermark is the padded sequence number a counter's watermark attribute
// mark holds ("" for none).
func watermark(counter Item, mark string) string {
	seq, _, _ := strings.Cut(StrAttr(counter, mark), " ")
	return seq
}
