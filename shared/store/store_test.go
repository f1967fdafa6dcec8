package store_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/documents"
	"contentapi/shared/generation"
	"contentapi/shared/images"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/stack"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

func tables(t *testing.T) (img, doc *store.Table) {
	env := ddblocal.NewTestEnv(t)
	return store.New(env.Client, env.Tables["ImagesTable"], images.Resource),
		store.New(env.Client, env.Tables["DocumentsTable"], documents.Resource)
}

// tallied are the tables with the tally running: a delete's count comes
// down once the tally has drained the streams.
func tallied(t *testing.T) (img, doc *store.Table, tally *stack.Tally) {
	env := ddblocal.NewTestEnv(t)
	tally = stack.StartTally(t, env.Client, env.Endpoint, env.Tables, stack.TallyHandler(stack.TallyTables(env.Tables, env.Client, nil)))
	return store.New(env.Client, env.Tables["ImagesTable"], images.Resource),
		store.New(env.Client, env.Tables["DocumentsTable"], documents.Resource), tally
}

func image(name string, extra ...any) records.Values {
	v := records.Values{"name": name, "description": "d", "resolution": "512x512", "style": nil, "medium": nil, "filter": nil}
	for i := 0; i < len(extra); i += 2 {
		v[extra[i].(string)] = extra[i+1]
	}
	return v
}

func document(name string, template int64) records.Values {
	return records.Values{"name": name, "prompt": "p", "creativity": 0.5, "template_id": template, "words": int64(0)}
}

func ids(p store.Page) []int64 {
	out := make([]int64, 0, len(p.Items))
	for _, item := range p.Items {
		id, _ := store.IntAttr(item, store.AttrID)
		out = append(out, id)
	}
	return out
}

func list(t *testing.T, tbl *store.Table, account string, q records.ListQuery) store.Page {
	t.Helper()
	if q.PerPage == 0 {
		q.PerPage = 10
	}
	if q.Page == 0 {
		q.Page = 1
	}
	if q.SortBy == "" {
		q.SortBy = "id"
	}
	p, err := tbl.List(context.Background(), account, q)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	img, _, tally := tallied(t)
	item, err := img.Create(ctx, "acme", image("Sunset"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := store.IntAttr(item, store.AttrID); id != 1 {
		t.Fatalf("first id %d", id)
	}
	got, err := img.Get(ctx, "acme", 1)
	if err != nil || got == nil {
		t.Fatalf("get: %v %v", got, err)
	}
	if other, _ := img.Get(ctx, "globex", 1); other != nil {
		t.Fatal("another account sees the record")
	}
	if _, err := img.Update(ctx, "globex", 1, records.Values{"name": "x"}, store.Precondition{}); err != store.ErrNotFound {
		t.Fatalf("foreign update: %v", err)
	}
	up, err := img.Update(ctx, "acme", 1, records.Values{"favorite": true}, store.Precondition{Match: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := store.IntAttr(up, store.AttrVersion); v != 2 {
		t.Fatalf("version after update %d", v)
	}
	if _, err := img.Update(ctx, "acme", 1, records.Values{"name": "x"}, store.Precondition{Match: []int64{1}}); err != store.ErrVersionMismatch {
		t.Fatalf("stale If-Match: %v", err)
	}
	if err := img.Delete(ctx, "acme", 1, store.Precondition{Match: []int64{1}}); err != store.ErrVersionMismatch {
		t.Fatalf("stale delete: %v", err)
	}
	if err := img.Delete(ctx, "globex", 1, store.Precondition{}); err != store.ErrNotFound {
		t.Fatalf("foreign delete: %v", err)
	}
	if p := list(t, img, "acme", records.ListQuery{}); p.Total != 1 {
		t.Fatalf("total before delete %d", p.Total)
	}
	if err := img.Delete(ctx, "acme", 1, store.Precondition{Match: []int64{2}}); err != nil {
		t.Fatal(err)
	}
	if err := img.Delete(ctx, "acme", 1, store.Precondition{}); err != store.ErrNotFound {
		t.Fatalf("second delete: %v", err)
	}
	// The count comes down once the tally has the delete.
	tally.Drain()
	if p := list(t, img, "acme", records.ListQuery{}); p.Total != 0 || len(p.Items) != 0 {
		t.Fatalf("after delete: %+v", p)
	}
	// Ids are never reused.
	item, _ = img.Create(ctx, "acme", image("Again"), nil)
	if id, _ := store.IntAttr(item, store.AttrID); id != 2 {
		t.Fatalf("id after delete %d", id)
	}
}

func TestConcurrentCreatesAndDeletes(t *testing.T) {
	ctx := context.Background()
	img, _, tally := tallied(t)
	// 64 clients create on one account at once: single-item writes on its
	// counter never conflict, so none fails and every id is distinct.
	const n = 64
	var wg sync.WaitGroup
	got := make(chan int64, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			item, err := img.Create(ctx, "acme", image(fmt.Sprintf("img %d", i)), nil)
			if err != nil {
				errs <- err
				return
			}
			id, _ := store.IntAttr(item, store.AttrID)
			got <- id
		}()
	}
	wg.Wait()
	close(got)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for id := range got {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct ids, want %d", len(seen), n)
	}
	if p := list(t, img, "acme", records.ListQuery{}); p.Total != n {
		t.Fatalf("total %d, want %d", p.Total, n)
	}
	// Everyone deletes the same records at once: each is deleted exactly
	// once (one success, the others not found) and, once the tally has the
	// deletes, the total lands on zero: each counted down once.
	var deleted sync.Map
	for range 3 {
		for id := range seen {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := img.Delete(ctx, "acme", id, store.Precondition{}); err == nil {
					if _, dup := deleted.LoadOrStore(id, true); dup {
						t.Errorf("id %d deleted twice", id)
					}
				} else if err != store.ErrNotFound {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	tally.Drain()
	if p := list(t, img, "acme", records.ListQuery{}); p.Total != 0 {
		t.Fatalf("total after deletes %d", p.Total)
	}
}

func TestListOrderFiltersAndPages(t *testing.T) {
	ctx := context.Background()
	img, _ := tables(t)
	names := []string{"banana", "Apple", "cherry", "apple", "Éclair", "date", "eclair", "fig", "grape", "Kiwi", "lime", "mango"}
	for i, name := range names {
		style := any(nil)
		if i%3 == 0 {
			style = "anime"
		}
		if _, err := img.Create(ctx, "acme", image(name, "style", style), nil); err != nil {
			t.Fatal(err)
		}
	}
	p := list(t, img, "acme", records.ListQuery{Desc: true})
	if p.Total != 12 || fmt.Sprint(ids(p)) != "[12 11 10 9 8 7 6 5 4 3]" {
		t.Fatalf("id desc page 1: total %d ids %v", p.Total, ids(p))
	}
	p = list(t, img, "acme", records.ListQuery{Desc: true, Page: 2})
	if fmt.Sprint(ids(p)) != "[2 1]" || p.Total != 12 {
		t.Fatalf("page 2: %v", ids(p))
	}
	if p = list(t, img, "acme", records.ListQuery{Page: 3}); len(p.Items) != 0 || p.Total != 12 {
		t.Fatalf("past the end: %+v", p)
	}
	// Name order folds case and accents; ties break by id.
	p = list(t, img, "acme", records.ListQuery{SortBy: "name", PerPage: 25})
	if fmt.Sprint(ids(p)) != "[2 4 1 3 6 5 7 8 9 10 11 12]" {
		t.Fatalf("name asc: %v", ids(p))
	}
	p = list(t, img, "acme", records.ListQuery{SortBy: "name", Desc: true, PerPage: 10, Page: 2})
	if fmt.Sprint(ids(p)) != "[4 2]" {
		t.Fatalf("name desc page 2: %v", ids(p))
	}
	// Filters and search count exactly.
	p = list(t, img, "acme", records.ListQuery{Filters: []records.Equal{{Attr: "style", Value: "anime"}}, Desc: true})
	if p.Total != 4 || fmt.Sprint(ids(p)) != "[10 7 4 1]" {
		t.Fatalf("style filter: %d %v", p.Total, ids(p))
	}
	p = list(t, img, "acme", records.ListQuery{Search: "eclair", Desc: true})
	if p.Total != 2 || fmt.Sprint(ids(p)) != "[7 5]" {
		t.Fatalf("search: %d %v", p.Total, ids(p))
	}
	p = list(t, img, "acme", records.ListQuery{Search: "an", Filters: []records.Equal{{Attr: "style", Value: "anime"}}})
	if p.Total != 1 || fmt.Sprint(ids(p)) != "[1]" {
		t.Fatalf("search+filter: %d %v", p.Total, ids(p))
	}
	if p = list(t, img, "globex", records.ListQuery{}); p.Total != 0 || len(p.Items) != 0 {
		t.Fatalf("other account: %+v", p)
	}
}

func TestDocumentScopes(t *testing.T) {
	ctx := context.Background()
	_, doc, tally := tallied(t)
	for i, tpl := range []int64{1, 5, 1, 5, 52} {
		if _, err := doc.Create(ctx, "acme", document(fmt.Sprintf("doc %d", i+1), tpl), nil); err != nil {
			t.Fatal(err)
		}
	}
	totals := func() string {
		var s []int64
		for _, tpl := range []int64{1, 5, 52} {
			s = append(s, list(t, doc, "acme", records.ListQuery{Scope: tpl, Desc: true}).Total)
		}
		return fmt.Sprint(s)
	}
	if got := totals(); got != "[2 2 1]" {
		t.Fatalf("per-template totals %s", got)
	}
	if p := list(t, doc, "acme", records.ListQuery{Scope: 5, SortBy: "name"}); fmt.Sprint(ids(p)) != "[2 4]" {
		t.Fatalf("template 5 by name: %v", ids(p))
	}
	// A delete counts down the template the record had.
	if err := doc.Delete(ctx, "acme", 4, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	if err := doc.Delete(ctx, "acme", 1, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	tally.Drain()
	if got := totals(); got != "[1 1 1]" {
		t.Fatalf("totals after deletes %s", got)
	}
	// Search by result reads the text itself.
	if _, err := doc.Update(ctx, "acme", 3, records.Values{"result": "Un café noir", "words": int64(3)}, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	p := list(t, doc, "acme", records.ListQuery{Scope: 1, Search: "cafe", SearchBy: "result"})
	if p.Total != 1 || fmt.Sprint(ids(p)) != "[3]" || p.Partial {
		t.Fatalf("result search: %+v", p)
	}
}

// A deleted record leaves a tombstone that holds none of its content: its
// key, its scope (for the count) and who deleted it.
func TestDeleteLeavesOnlyATombstone(t *testing.T) {
	ctx := context.Background()
	env := ddblocal.NewTestEnv(t)
	doc := store.New(env.Client, env.Tables["DocumentsTable"], documents.Resource)
	// Generated, so the tombstone must also drop the generation state.
	done := generation.Request("m", time.Now()).Start(time.Now()).Finish("m", generation.Usage{}, time.Now())
	if _, err := doc.Create(ctx, "acme", document("Secret plans", 7), &done); err != nil {
		t.Fatal(err)
	}
	if _, err := doc.Update(ctx, "acme", 1, records.Values{"result": "The plan.", "words": int64(2), "favorite": true}, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	if err := doc.Delete(ctx, "acme", 1, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	out, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(doc.Name()),
		Key:            map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: "acme"}, "id": &types.AttributeValueMemberN{Value: "1"}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(maps.Keys(out.Item))
	if want := []string{"account", "attempt", "gone_by", "id", "template_id"}; !slices.Equal(got, want) {
		t.Fatalf("tombstone holds %v, want only %v", got, want)
	}
	if item, err := doc.Get(ctx, "acme", 1); err != nil || item != nil {
		t.Fatalf("GET of a deleted record: %v %v", item, err)
	}
	if _, err := doc.Update(ctx, "acme", 1, records.Values{"name": "x"}, store.Precondition{}); err != store.ErrNotFound {
		t.Fatalf("update of a deleted record: %v", err)
	}
}

// Lists read global secondary indexes, which follow writes asynchronously:
// a new record shows once its index entry is there, with the total right.
func TestListShowsANewRecordOnceTheIndexHasIt(t *testing.T) {
	ctx := context.Background()
	img, _ := tables(t)
	for _, name := range []string{"first", "second"} {
		if _, err := img.Create(ctx, "acme", image(name), nil); err != nil {
			t.Fatal(err)
		}
	}
	item, err := img.Create(ctx, "acme", image("newest"), nil)
	if err != nil {
		t.Fatal(err)
	}
	newest, _ := store.IntAttr(item, store.AttrID)
	// GET reflects the write at once; the list as soon as the index does.
	if got, _ := img.Get(ctx, "acme", newest); got == nil {
		t.Fatal("GET does not see an acknowledged create")
	}
	var p store.Page
	for range 100 {
		p = list(t, img, "acme", records.ListQuery{Desc: true})
		if len(p.Items) > 0 && ids(p)[0] == newest {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if fmt.Sprint(ids(p)) != fmt.Sprint([]int64{newest, newest - 1, newest - 2}) || p.Total != 3 {
		t.Fatalf("list %v total %d, want the new record first of 3", ids(p), p.Total)
	}
	// And a deleted one is never shown, even while its entry lingers.
	if err := img.Delete(ctx, "acme", newest, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	p = list(t, img, "acme", records.ListQuery{Desc: true})
	if slices.Contains(ids(p), newest) {
		t.Fatalf("deleted record listed: %v", ids(p))
	}
}
