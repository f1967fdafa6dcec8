package store

import "slices"

// sortMatches sorts in place, reversed for a descending list.
func sortMatches[T any](s []T, cmp func(a, b T) int, desc bool) {
	if desc {
		slices.SortStableFunc(s, func(a, b T) int { return cmp(b, a) })
		return
	}
	slices.SortStableFunc(s, cmp)
}
