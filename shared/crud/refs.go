package crud

import (
	"context"
	"maps"

	"contentapi/shared/records"
	"contentapi/shared/store"
)

// named reads the records the new values v of a record name by its Ref
// fields (records.Ref), and puts into v what the record keeps of each:
// for a regenerate, old is the record as stored, whose field names the
// record where v does not. A record v names that the account does not
// have is a 422 naming the field; one only old names that is gone is
// named no more (a deleted voice: the document's voice becomes null). It
// returns the records read, by field, for the generation that follows.
func (res *Resource) named(ctx context.Context, account string, v records.Values, old store.Item) (map[string]store.Item, error) {
	named := map[string]store.Item{}
	for _, f := range res.def.Refs() {
		id, given := v[f.Name].(int64)
		if !given && old != nil {
			id, _ = store.IntAttr(old, f.Name)
		}
		if id <= 0 {
			continue
		}
		ref, _ := f.Kind.(records.Ref)
		item, err := res.Lookup(ctx, account, ref.Resource, id)
		if err != nil {
			return nil, err
		}
		if item == nil && given {
			return nil, records.Unknown(f.Name)
		}
		maps.Copy(v, store.Kept(f, item))
		named[f.Name] = item
	}
	return named, nil
}
