package store

// How a generation's hold on the month's quota is given back.
//
// A document's words are unknown until it is generated, so its create or
// regenerate counts the most its generation may use (quota's
// Policy.Reserve) in its counter write, under the limits, and the record
// carries that hold in its generation state (generation.State.Hold),
// written with the generation it was counted for. Claims and hand-overs
// keep it. It ends with the record's generation, in one of two ways:
//
//   - the write that ends the generation (done, failed, or expired past
//     its deadline) moves it to Settled, with what the generation counts
//     of it (what its content counts, at most the hold);
//   - a write that takes the generation away before it ends (the record
//     deleted, or regenerated past its deadline) drops it: nothing of it
//     was used.
//
// Either write is a single conditional write of the record, so exactly one
// of them ends each hold, whatever the races (a generator claiming a record
// that is being deleted, two regenerates, retries of a write whose answer
// was lost). The tally function reads that write from the table's stream
// (template.yaml lets through every change of a record whose old image
// holds) and gives back the difference on the counter item, under the
// shard's watermark (tally.go), so exactly once however often the record
// is delivered. The usage named in the hold is its month's, so a
// generation that ends in the next month is given back where it was
// counted.
//
// A generation whose generator stopped in the middle (a crash) is never
// written again; its hold is given back when the record is regenerated or
// deleted, until then the month counts it whole: over, never under.

// givenBack is what a change of a record, from old to new (gone: deleted),
// gives back of old's generation's hold: nothing while the same generation
// still holds it, its unused part when the change ended it, all of it when
// the change took it away.
func givenBack(old, new Item, gone bool) map[string]int64 {
	before, err := StateOf(old)
	if err != nil || before == nil || before.Hold == nil || before.Hold.Usage == "" {
		return nil
	}
	held, used := before.Hold, int64(0)
	if after, err := StateOf(new); !gone && err == nil && after != nil {
		switch {
		case after.Hold != nil && after.Hold.ID == held.ID:
			return nil // claimed, handed over, or the record edited meanwhile
		case after.Settled != nil && after.Settled.ID == held.ID && after.Settled.Usage == held.Usage:
			used = min(after.Settled.Used, held.Held)
		}
	}
	if used == held.Held {
		return nil
	}
	return map[string]int64{held.Usage: used - held.Held}
}

// Holding reports whether a record's generation holds part of the month's
// quota: the tally function is handed every change of such a record, and
// most (a claim, a hand-over) move nothing.
func Holding(item Item) bool {
	s, err := StateOf(item)
	return err == nil && s != nil && s.Hold != nil
}
