package store_test

import (
	"slices"
	"testing"

	"contentapi/shared/documents"
	"contentapi/shared/images"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// The list indexes carry what a list filters and searches on, but for
// the filters matched on the records (which a deployed index cannot take
// on without being rebuilt), and never a large text field: a list reads
// the entry of every record it passes over.
func TestIndexAttributes(t *testing.T) {
	for _, res := range []*records.Resource{images.Resource, documents.Resource} {
		got := store.IndexAttributes(res)
		want := []string{store.AttrNameFold}
		for _, f := range res.Filters {
			if f.OnRecord {
				if slices.Contains(got, f.Param) {
					t.Errorf("%s: the indexes carry %s, which is matched on the records", res.Name, f.Param)
				}
				continue
			}
			want = append(want, f.Param)
		}
		if res.Scope != nil {
			want = append(want, res.Scope.Field)
		}
		for _, attr := range want {
			if !slices.Contains(got, attr) {
				t.Errorf("%s: the indexes lack %s, which lists read", res.Name, attr)
			}
		}
		for _, large := range []string{"description", "prompt", "result"} {
			if slices.Contains(got, large) {
				t.Errorf("%s: the indexes would carry %s", res.Name, large)
			}
		}
	}
}
