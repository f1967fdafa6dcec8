package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"contentapi/shared/documents"
	"contentapi/shared/fold"
	"contentapi/shared/images"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// testBudget is lowered from the contract's 2,000 read units so that an
// account of a thousand records passes it.
const testBudget = 200

// boundedImages is a metered images table with a small read budget, and an
// account of n images with names of 128 characters, most of them U+FDFA,
// whose folded form is 11 times longer (the largest index entries, ~5 KB),
// every third a favorite with a star in its name.
func boundedImages(t *testing.T, n int) (*store.Table, *ddblocal.Meter, []int64) {
	t.Helper()
	env := ddblocal.NewTestEnv(t)
	db, meter := env.Metered(t)
	tbl := store.New(db, env.Tables["ImagesTable"], images.Resource)
	tbl.ReadBudget = testBudget
	var vs []records.Values
	for i := range n {
		mark := "\uFDFA"
		if i%3 == 0 {
			mark = "★"
		}
		name := fmt.Sprintf("%04d", n-i) + mark + strings.Repeat("\uFDFA", 123)
		vs = append(vs, image(name, "favorite", i%3 == 0))
	}
	first, err := store.New(env.Client, env.Tables["ImagesTable"], images.Resource).Import(context.Background(), "acme", vs)
	if err != nil {
		t.Fatal(err)
	}
	var favorites []int64
	for i := range n {
		if i%3 == 0 {
			favorites = append(favorites, first+int64(i))
		}
	}
	return tbl, meter, favorites
}

// follow walks a list from page 1 as a client following links.next does,
// holding every request to the budget, and returns the ids in the order
// seen and the answers.
func follow(t *testing.T, tbl *store.Table, meter *ddblocal.Meter, q records.ListQuery) ([]int64, []store.Page) {
	t.Helper()
	var seen []int64
	var pages []store.Page
	q.Page, q.Cursor = 1, nil
	for range 500 {
		var p store.Page
		calls := meter.Measure(func() { p = list(t, tbl, "acme", q) })
		if reads := ddblocal.SumMetered(calls).Reads; reads > testBudget {
			t.Fatalf("page %d (cursor %+v) read %g units, over the budget of %d", q.Page, q.Cursor, reads, testBudget)
		}
		if p.Partial && p.Next == nil {
			t.Fatalf("a partial page without a cursor: %+v", p)
		}
		if len(p.Items) > 0 && p.Start != max(q.Offset(), cursorMatches(q)) {
			t.Fatalf("page %d starts after %d matches, want %d", q.Page, p.Start, max(q.Offset(), cursorMatches(q)))
		}
		seen = append(seen, ids(p)...)
		pages = append(pages, p)
		switch {
		case p.Next != nil && p.Partial:
			q.Cursor = p.Next
		case p.Next != nil:
			q.Page, q.Cursor = q.Page+1, p.Next
		case q.Offset()+int64(q.PerPage) < p.Total:
			q.Page, q.Cursor = q.Page+1, nil
		default:
			return seen, pages
		}
	}
	t.Fatal("the walk did not end")
	return nil, nil
}

func cursorMatches(q records.ListQuery) int64 {
	if q.Cursor == nil {
		return 0
	}
	return q.Cursor.Matches
}

func TestListBoundedByReadBudget(t *testing.T) {
	tbl, meter, favorites := boundedImages(t, 900)
	newestFirst := slices.Clone(favorites)
	slices.Reverse(newestFirst)
	favorite := []records.Equal{{Attr: "favorite", Value: true}}
	testCases := []struct {
		name string
		q    records.ListQuery
		want []int64
	}{
		{"filter, id order", records.ListQuery{Filters: favorite, SortBy: "id", Desc: true, PerPage: 10}, newestFirst},
		{"filter, name order", records.ListQuery{Filters: favorite, SortBy: "name", PerPage: 25}, newestFirst},
		{"search", records.ListQuery{Search: fold.String("★"), SortBy: "id", Desc: false, PerPage: 25}, favorites},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			seen, pages := follow(t, tbl, meter, tc.q)
			if !slices.Equal(seen, tc.want) {
				t.Fatalf("following the links saw %d records (%v...), want each of %d once, in order", len(seen), seen[:min(5, len(seen))], len(tc.want))
			}
			first := pages[0]
			if !first.TotalEstimated || first.Next == nil {
				t.Fatalf("page 1 of an account past the budget: estimated %v, next %v", first.TotalEstimated, first.Next)
			}
			// The estimate extrapolates the share of matches read; the
			// data is even, so it lands near the truth.
			if n := int64(len(tc.want)); first.Total < n*3/4 || first.Total > n*5/4 {
				t.Errorf("estimated total %d, true total %d", first.Total, n)
			}
			last := pages[len(pages)-1]
			if last.TotalEstimated || last.Total != int64(len(tc.want)) {
				t.Errorf("the last page's total %d (estimated %v), want the exact %d", last.Total, last.TotalEstimated, len(tc.want))
			}
		})
	}
}

func TestDeepPageBounded(t *testing.T) {
	tbl, meter, favorites := boundedImages(t, 900)
	q := records.ListQuery{Filters: []records.Equal{{Attr: "favorite", Value: true}}, SortBy: "id", Desc: true, PerPage: 10, Page: records.MaxPage}
	answers := 0
	for {
		var p store.Page
		calls := meter.Measure(func() { p = list(t, tbl, "acme", q) })
		if reads := ddblocal.SumMetered(calls).Reads; reads > testBudget {
			t.Fatalf("a deep page read %g units, over %d", reads, testBudget)
		}
		if len(p.Items) != 0 {
			t.Fatalf("page %d holds records", q.Page)
		}
		answers++
		if !p.Partial {
			if p.TotalEstimated || p.Total != int64(len(favorites)) {
				t.Fatalf("past the end: total %d (estimated %v), want %d", p.Total, p.TotalEstimated, len(favorites))
			}
			break
		}
		if p.Next == nil || p.Next.Matches <= cursorMatches(q) && q.Cursor != nil {
			t.Fatalf("a partial deep page must move on: %+v after %+v", p.Next, q.Cursor)
		}
		q.Cursor = p.Next
	}
	if answers < 2 {
		t.Fatalf("the walk to page %d took %d answer: the account is too small to test the budget", q.Page, answers)
	}
}

// A search by result fetches every candidate: its budget is in read units,
// so large documents stop it sooner, and cursors still visit every match.
func TestResultSearchBoundedByReadBudget(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	db, meter := env.Metered(t)
	tbl := store.New(db, env.Tables["DocumentsTable"], documents.Resource)
	// A document may hold four texts (its variants, and the first as
	// generated beside the client's): planned at their longest, one fetch
	// needs more than testBudget leaves beside an index page.
	tbl.ReadBudget = 2 * testBudget
	var vs []records.Values
	for i := range 150 {
		v := document(fmt.Sprintf("doc %d", i), 1)
		word := "plain"
		if i%2 == 0 {
			word = "Brûlée"
		}
		v["result"] = strings.Repeat(word+" text ", 1200) // ~13 KB: 4 read units each
		vs = append(vs, v)
	}
	first, err := store.New(env.Client, env.Tables["DocumentsTable"], documents.Resource).Import(context.Background(), "acme", vs)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for i := 149; i >= 0; i-- {
		if i%2 == 0 {
			want = append(want, first+int64(i))
		}
	}
	seen, pages := follow(t, tbl, meter, records.ListQuery{Scope: 1, Search: "brulee", SearchBy: "result", SortBy: "id", Desc: true, PerPage: 25})
	if !slices.Equal(seen, want) {
		t.Fatalf("following the links saw %v, want %v", seen, want)
	}
	if !pages[0].TotalEstimated {
		t.Fatal("150 documents of 13 KB read within the budget: the test account is too small")
	}
}

// A list of every template's documents (template_id=all) is in creation
// order across templates, counts them all, and filters, searches and sorts
// by name as a one-template list does.
func TestListEveryTemplate(t *testing.T) {
	ctx := context.Background()
	_, doc, tally := tallied(t)
	for i, tpl := range []int64{1, 9, 4, 9, 1, 52} {
		if _, err := doc.Create(ctx, "acme", document(fmt.Sprintf("doc %c", 'f'-i), tpl), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := doc.Create(ctx, "other", document("not acme's", 9), nil); err != nil {
		t.Fatal(err)
	}
	if err := doc.Delete(ctx, "acme", 3, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{2, 5} {
		if _, err := doc.Update(ctx, "acme", id, records.Values{"favorite": true}, store.Precondition{}); err != nil {
			t.Fatal(err)
		}
	}
	tally.Drain()

	all := records.ListQuery{AllScopes: true, Desc: true}
	testCases := []struct {
		name  string
		q     func(records.ListQuery) records.ListQuery
		want  string
		total int64
	}{
		{"newest first", func(q records.ListQuery) records.ListQuery { return q }, "[6 5 4 2 1]", 5},
		{"oldest first", func(q records.ListQuery) records.ListQuery { q.Desc = false; return q }, "[1 2 4 5 6]", 5},
		{"page 2 of 2 a page", func(q records.ListQuery) records.ListQuery { q.PerPage, q.Page = 2, 2; return q }, "[4 2]", 5},
		{"past the end", func(q records.ListQuery) records.ListQuery { q.Page = 2; return q }, "[]", 5},
		{"by name", func(q records.ListQuery) records.ListQuery { q.SortBy, q.Desc = "name", false; return q }, "[6 5 4 2 1]", 5},
		{"favorites", func(q records.ListQuery) records.ListQuery {
			q.Filters = []records.Equal{{Attr: "favorite", Value: true}}
			return q
		}, "[5 2]", 2},
		{"a search by name", func(q records.ListQuery) records.ListQuery { q.Search = fold.String("DOC E"); return q }, "[2]", 1},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			p := list(t, doc, "acme", tc.q(all))
			if got := fmt.Sprint(ids(p)); got != tc.want || p.Total != tc.total || p.TotalEstimated || p.Partial {
				t.Fatalf("ids %s, total %d (estimated %v, partial %v); want %s of %d", got, p.Total, p.TotalEstimated, p.Partial, tc.want, tc.total)
			}
		})
	}
	// One template's list is as it was.
	if p := list(t, doc, "acme", records.ListQuery{Scope: 9, Desc: true}); fmt.Sprint(ids(p)) != "[4 2]" || p.Total != 2 {
		t.Fatalf("template 9: %v of %d", ids(p), p.Total)
	}
}

// The first page of every template reads the page's records from the
// table itself and the counter for the total: two calls, and no more read
// units than the first page of one template, which reads its index and
// then fetches the same records.
func TestEveryTemplatesFirstPageCost(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	db, meter := env.Metered(t)
	tbl := store.New(db, env.Tables["DocumentsTable"], documents.Resource)
	var vs []records.Values
	for i := range 40 {
		v := document(fmt.Sprintf("doc %d", i), int64(1+i%4))
		v["result"] = strings.Repeat("A blog post of some length. ", 180) // ~5 KB, a blog post's size
		vs = append(vs, v)
	}
	if _, err := store.New(env.Client, env.Tables["DocumentsTable"], documents.Resource).Import(context.Background(), "acme", vs); err != nil {
		t.Fatal(err)
	}
	measure := func(q records.ListQuery) (store.Page, []ddblocal.MeteredCall) {
		var p store.Page
		calls := meter.Measure(func() { p = list(t, tbl, "acme", q) })
		return p, calls
	}
	p, allCalls := measure(records.ListQuery{AllScopes: true, Desc: true})
	if len(p.Items) != 10 || p.Total != 40 || ids(p)[0] != 40 || ids(p)[9] != 31 {
		t.Fatalf("page 1 of every template: %v of %d", ids(p), p.Total)
	}
	var ops []string
	for _, c := range allCalls {
		ops = append(ops, c.Op+" "+c.Index)
		if c.Eventual {
			t.Errorf("%s read eventually consistent: a list shows its records as they are", c)
		}
	}
	if want := []string{"Query ", "BatchGetItem "}; !slices.Equal(ops, want) {
		t.Fatalf("page 1 of every template made the calls %q, want %q (the records from the table, then the counter)", ops, want)
	}
	one, oneCalls := measure(records.ListQuery{Scope: 1, Desc: true})
	if len(one.Items) != 10 || one.Total != 10 {
		t.Fatalf("page 1 of template 1: %v of %d", ids(one), one.Total)
	}
	allUnits, oneUnits := ddblocal.SumMetered(allCalls).Reads, ddblocal.SumMetered(oneCalls).Reads
	if allUnits > oneUnits {
		t.Fatalf("page 1 of every template read %g units, of one template %g", allUnits, oneUnits)
	}
	t.Logf("page 1 of 10 documents of ~5 KB: every template %g read units in %d calls, one template %g in %d", allUnits, len(allCalls), oneUnits, len(oneCalls))
}

// Under a read budget a list of every template resumes by its cursors
// through the table and shows each document once, in order.
func TestEveryTemplateBoundedByReadBudget(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	db, meter := env.Metered(t)
	tbl := store.New(db, env.Tables["DocumentsTable"], documents.Resource)
	tbl.ReadBudget = testBudget
	var vs []records.Values
	for i := range 120 {
		v := document(fmt.Sprintf("doc %d", i), int64(1+i%7))
		v["result"] = strings.Repeat("plain text ", 1200) // ~13 KB: 4 read units each
		if i%2 == 0 {
			v["favorite"] = true
		}
		vs = append(vs, v)
	}
	first, err := store.New(env.Client, env.Tables["DocumentsTable"], documents.Resource).Import(context.Background(), "acme", vs)
	if err != nil {
		t.Fatal(err)
	}
	var newestFirst, favorites []int64
	for i := 119; i >= 0; i-- {
		newestFirst = append(newestFirst, first+int64(i))
		if i%2 == 0 {
			favorites = append(favorites, first+int64(i))
		}
	}
	for _, tc := range []struct {
		name string
		q    records.ListQuery
		want []int64
	}{
		{"all", records.ListQuery{AllScopes: true, SortBy: "id", Desc: true, PerPage: 25}, newestFirst},
		{"favorites", records.ListQuery{AllScopes: true, Filters: []records.Equal{{Attr: "favorite", Value: true}}, SortBy: "id", Desc: true, PerPage: 10}, favorites},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen, pages := follow(t, tbl, meter, tc.q)
			if !slices.Equal(seen, tc.want) {
				t.Fatalf("following the links saw %d records (%v...), want each of %d once, in order", len(seen), seen[:min(5, len(seen))], len(tc.want))
			}
			bounded := false
			for _, p := range pages {
				bounded = bounded || p.Partial || p.TotalEstimated
			}
			if !bounded {
				t.Fatalf("no answer of %d met the budget: the account is too small to test it", len(pages))
			}
			if last := pages[len(pages)-1]; last.TotalEstimated || last.Total != int64(len(tc.want)) {
				t.Errorf("the last page's total %d (estimated %v), want %d", last.Total, last.TotalEstimated, len(tc.want))
			}
		})
	}
}
