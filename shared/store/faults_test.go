package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/documents"
	"contentapi/shared/images"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/stack"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// rig is a documents and an images table reached through a fault proxy, by
// the service's own DynamoDB client (its retries and timeouts included),
// and the same tables reached directly, to see what is really stored.
type rig struct {
	t          *testing.T
	env        *ddblocal.TestEnv
	db         *dynamodb.Client
	proxy      *ddblocal.FaultProxy
	docs, imgs *store.Table
	// tally takes deletes' counts down, its writes going through the proxy.
	tally *stack.Tally
	// offset moves the tables' clock: intents look older by it.
	offset time.Duration
}

func newRig(t *testing.T) *rig {
	env := ddblocal.NewTestEnv(t)
	proxy := ddblocal.NewFaultProxy(env.Endpoint)
	t.Cleanup(proxy.Close)
	db, err := app.NewDynamoDB(context.Background(), app.Config{Region: ddblocal.Region, DynamoDBEndpoint: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, env: env, proxy: proxy, db: db}
	r.docs = store.New(db, env.Tables["DocumentsTable"], documents.Resource)
	r.imgs = store.New(db, env.Tables["ImagesTable"], images.Resource)
	for _, tbl := range []*store.Table{r.docs, r.imgs} {
		tbl.Now = func() time.Time { return time.Now().Add(r.offset) }
	}
	r.tally = stack.StartTally(t, env.Client, env.Endpoint, env.Tables, stack.TallyHandler(stack.TallyTables(env.Tables, db, nil)))
	return r
}

// request is a context with a request's deadline.
func request(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Matchers for the store's writes, by what their bodies name.
var (
	counterWrite = ddblocal.MatchOp("UpdateItem", `"next_id"`)
	tallyWrite   = ddblocal.MatchOp("UpdateItem", `"sq_`)
	recordPut    = ddblocal.MatchOp("PutItem", `"id_key"`)
	voidPut      = ddblocal.MatchOp("PutItem", `"void"`)
	tombstone    = ddblocal.MatchOp("UpdateItem", `"gone_by"`)
	recordUpdate = ddblocal.MatchOp("UpdateItem", `"updated_at"`)
)

// raw reads an item directly, strongly consistent.
func (r *rig) raw(tbl *store.Table, account string, id int64) store.Item {
	r.t.Helper()
	out, err := r.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName:      aws.String(tbl.Name()),
		Key:            map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: account}, "id": &types.AttributeValueMemberN{Value: fmt.Sprint(id)}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return out.Item
}

// records counts the account's live records per scope, reading the table
// itself.
func (r *rig) records(tbl *store.Table, account string, scopeAttr string) map[int64]int64 {
	r.t.Helper()
	counts := map[int64]int64{}
	p := dynamodb.NewQueryPaginator(r.env.Client, &dynamodb.QueryInput{
		TableName:                 aws.String(tbl.Name()),
		KeyConditionExpression:    aws.String("account = :a AND id > :zero"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":a": &types.AttributeValueMemberS{Value: account}, ":zero": &types.AttributeValueMemberN{Value: "0"}},
		ConsistentRead:            aws.Bool(true),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			r.t.Fatal(err)
		}
		for _, item := range out.Items {
			if _, live := item[store.AttrIDKey]; !live {
				continue
			}
			var scope int64
			if scopeAttr != "" {
				scope, _ = store.IntAttr(item, scopeAttr)
			}
			counts[scope]++
		}
	}
	return counts
}

// intents are the counter item's open intents.
func (r *rig) intents(tbl *store.Table, account string) []string {
	var names []string
	for name := range r.raw(tbl, account, 0) {
		if strings.HasPrefix(name, "op_") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// crash is a create that dies between its steps: its counter write lands,
// then nothing more does (the hung calls are never applied).
func (r *rig) crash(tbl *store.Table, account string, v records.Values) {
	r.t.Helper()
	r.proxy.Inject(recordPut, ddblocal.HangCall, 100)
	r.proxy.Inject(voidPut, ddblocal.HangCall, 100)
	if _, err := tbl.Create(request(r.t), account, v, nil); err == nil {
		r.t.Fatal("create succeeded")
	}
	r.proxy.Reset()
	r.proxy.Wait()
}

// endStep lets a held write go on, reached or not, and clears every rule:
// rules not used up must not leak into the next step.
func (r *rig) endStep(held *ddblocal.FaultRule) {
	if held != nil {
		select {
		case <-held.Held():
		default:
		}
		held.Release()
	}
	r.proxy.Reset()
	r.proxy.Wait()
}

// exact lets the tally count every delete made, settles what is left open,
// as later writes would once it is old, and then holds every total the API
// shows against the records stored.
func (r *rig) exact(tbl *store.Table, account string, scopes ...int64) {
	r.t.Helper()
	r.proxy.Reset()
	r.proxy.Wait()
	r.tally.Drain()
	saved := r.offset
	r.offset += time.Hour
	if _, err := tbl.Settle(context.Background(), account); err != nil {
		r.t.Fatal(err)
	}
	r.offset = saved
	if open := r.intents(tbl, account); len(open) > 0 {
		r.t.Fatalf("intents still open after Settle: %v", open)
	}
	r.totalsAgree(tbl, account, scopes...)
}

// totalsAgree holds every total the API shows of the account against the
// records stored.
func (r *rig) totalsAgree(tbl *store.Table, account string, scopes ...int64) {
	r.t.Helper()
	scopeAttr := ""
	if tbl == r.docs {
		scopeAttr = "template_id"
	}
	stored := r.records(tbl, account, scopeAttr)
	if len(scopes) == 0 {
		scopes = []int64{0}
	}
	for _, scope := range scopes {
		p, err := tbl.List(context.Background(), account, records.ListQuery{Scope: scope, SortBy: "id", Desc: true, PerPage: 10, Page: 1})
		if err != nil {
			r.t.Fatal(err)
		}
		if p.Total != stored[scope] {
			r.t.Fatalf("scope %d: total %d, but %d records are stored", scope, p.Total, stored[scope])
		}
	}
}

func TestCreateWhoseAnswerIsLostIsRecognised(t *testing.T) {
	r := newRig(t)
	// The counter write lands and its answer is lost: the SDK's retry finds
	// its own intent and gets the same id, counted once.
	r.proxy.Inject(counterWrite, ddblocal.LoseAnswer, 1)
	item, err := r.imgs.Create(request(t), "acme", image("One"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := store.IntAttr(item, store.AttrID); id != 1 {
		t.Fatalf("id %d, want 1: the retry allocated again", id)
	}
	// The record's put lands and its answer is lost: the retry finds the
	// record its own operation wrote, not a conflict.
	r.proxy.Inject(recordPut, ddblocal.LoseAnswer, 1)
	item, err = r.imgs.Create(request(t), "acme", image("Two"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := store.IntAttr(item, store.AttrID); id != 2 {
		t.Fatalf("id %d, want 2", id)
	}
	if next, _ := store.IntAttr(r.raw(r.imgs, "acme", 0), "next_id"); next != 2 {
		t.Fatalf("next_id %d after two creates", next)
	}
	r.exact(r.imgs, "acme")
}

func TestCreateThatFailsLeavesNothing(t *testing.T) {
	r := newRig(t)
	r.proxy.Inject(recordPut, ddblocal.FailCall, 3) // every attempt the SDK makes
	if _, err := r.imgs.Create(request(t), "acme", image("Lost"), nil); err == nil {
		t.Fatal("create succeeded without its record")
	}
	// The id is voided, so no late put can ever land there, and uncounted.
	if item := r.raw(r.imgs, "acme", 1); item[store.AttrVoid] == nil {
		t.Fatalf("id 1 is not void: %v", item)
	}
	if open := r.intents(r.imgs, "acme"); len(open) != 0 {
		t.Fatalf("the create settled itself, yet intents are open: %v", open)
	}
	r.exact(r.imgs, "acme")
}

func TestCreateWhosePutLandsAfterWeGaveUp(t *testing.T) {
	r := newRig(t)
	held := r.proxy.Inject(recordPut, ddblocal.HoldCall, 1)
	_, err := r.imgs.Create(request(t), "acme", image("Late"), nil)
	if err == nil {
		t.Fatal("create succeeded with its put held")
	}
	<-held.Held()
	// The put reaches the database only now, after the void: it must not
	// land.
	held.Release()
	r.proxy.Wait()
	if item := r.raw(r.imgs, "acme", 1); item[store.AttrIDKey] != nil {
		t.Fatal("the late put landed on a voided id")
	}
	r.exact(r.imgs, "acme")
}

func TestCreateWhosePutLandsBeforeItIsSettled(t *testing.T) {
	r := newRig(t)
	put := r.proxy.Inject(recordPut, ddblocal.HoldCall, 1)
	void := r.proxy.Inject(voidPut, ddblocal.HoldCall, 1)
	go func() {
		// The put lands while the create, having given up on its answer,
		// is settling: the void then finds the record.
		<-void.Held()
		put.Release()
		for r.raw(r.imgs, "acme", 1)[store.AttrIDKey] == nil {
			time.Sleep(10 * time.Millisecond)
		}
		void.Release()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	item, err := r.imgs.Create(ctx, "acme", image("Just in time"), nil)
	if err != nil {
		t.Fatalf("the record landed, yet the create failed: %v", err)
	}
	if id, _ := store.IntAttr(item, store.AttrID); id != 1 {
		t.Fatalf("id %d", id)
	}
	r.exact(r.imgs, "acme")
}

// A crash between the steps: the counter write lands, then nothing more
// does. The next write of the account, once the intent is old, settles it.
func TestCrashBetweenCreateStepsIsSettledByALaterWrite(t *testing.T) {
	r := newRig(t)
	r.crash(r.docs, "acme", document("Crashed", 4))
	if open := r.intents(r.docs, "acme"); len(open) != 1 || !strings.HasPrefix(open[0], "op_c4_") {
		t.Fatalf("open intents %v, want the create's", open)
	}
	// Before the horizon, a write leaves another execution's intent alone.
	if _, err := r.docs.Create(request(t), "acme", document("Next", 4), nil); err != nil {
		t.Fatal(err)
	}
	if open := r.intents(r.docs, "acme"); len(open) != 2 {
		t.Fatalf("open intents %v", open)
	}
	// Past it, the next write settles it: void id 1, uncount it.
	r.offset = time.Minute
	if _, err := r.docs.Create(request(t), "acme", document("Later", 4), nil); err != nil {
		t.Fatal(err)
	}
	if item := r.raw(r.docs, "acme", 1); item[store.AttrVoid] == nil {
		t.Fatalf("id 1 not voided: %v", item)
	}
	p := list(t, r.docs, "acme", records.ListQuery{Scope: 4})
	if p.Total != 2 || fmt.Sprint(ids(p)) != "[2 3]" {
		t.Fatalf("total %d, ids %v", p.Total, ids(p))
	}
}

// A delete is one call: the tombstone's write. Its answer lost, the SDK's
// retry finds the tombstone its execution wrote: success, not 404. The
// count comes down once, from the stream.
func TestDeleteWhoseAnswerIsLostIsRecognised(t *testing.T) {
	r := newRig(t)
	for _, name := range []string{"a", "b"} {
		if _, err := r.imgs.Create(request(t), "acme", image(name), nil); err != nil {
			t.Fatal(err)
		}
	}
	r.tally.Drain()
	before := len(r.proxy.Calls())
	if err := r.imgs.Delete(request(t), "acme", 1, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	if calls := requestCalls(r.proxy.Calls()[before:]); len(calls) != 1 || !tombstone(calls[0]) {
		t.Fatalf("a delete made %d calls, want 1 (the tombstone): %v", len(calls), calls)
	}
	r.proxy.Inject(tombstone, ddblocal.LoseAnswer, 1)
	if err := r.imgs.Delete(request(t), "acme", 2, store.Precondition{}); err != nil {
		t.Fatalf("delete whose first attempt landed: %v, want success, not 404", err)
	}
	r.exact(r.imgs, "acme")
	if p := list(t, r.imgs, "acme", records.ListQuery{}); p.Total != 0 {
		t.Fatalf("total %d after both deletes", p.Total)
	}
	// An operation's later execution (an Idempotency-Key's retry) finds its
	// tombstone too; another operation finds nothing.
	att := store.Attempt{Op: store.NewToken(time.Now())}
	if _, err := r.imgs.Create(request(t), "acme", image("c"), nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := r.imgs.Delete(store.WithAttempt(request(t), att), "acme", 3, store.Precondition{}); err != nil {
			t.Fatalf("the operation's second execution: %v", err)
		}
	}
	if err := r.imgs.Delete(request(t), "acme", 3, store.Precondition{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another delete: %v, want not found", err)
	}
	r.exact(r.imgs, "acme")
}

// requestCalls are the calls of requests: not the tally's.
func requestCalls(calls []ddblocal.ProxiedCall) []ddblocal.ProxiedCall {
	return slices.DeleteFunc(calls, tallyWrite)
}

// A delete whose write is held past the request's deadline answers an
// error; when the write lands after all, the record is gone and its count
// comes down once, as for any delete.
func TestDeleteThatLandsLateIsCountedOnce(t *testing.T) {
	r := newRig(t)
	for _, name := range []string{"Gone", "Kept"} {
		if _, err := r.imgs.Create(request(t), "acme", image(name), nil); err != nil {
			t.Fatal(err)
		}
	}
	held := r.proxy.Inject(tombstone, ddblocal.HoldCall, 1)
	if err := r.imgs.Delete(request(t), "acme", 1, store.Precondition{}); err == nil {
		t.Fatal("delete succeeded with its write held")
	}
	<-held.Held()
	held.Release()
	r.proxy.Wait()
	if item := r.raw(r.imgs, "acme", 1); item[store.AttrIDKey] != nil {
		t.Fatal("the held delete did not land")
	}
	r.exact(r.imgs, "acme")
	if p := list(t, r.imgs, "acme", records.ListQuery{}); p.Total != 1 {
		t.Fatalf("total %d", p.Total)
	}
}

// An earlier version counted a delete in the request, under a delete
// intent; one it left open is settled as it did: the record still there
// is fenced against that delete and counted again.
func TestEarlierVersionsDeleteIntentIsSettled(t *testing.T) {
	r := newRig(t)
	if _, err := r.docs.Create(request(t), "acme", document("Stays", 4), nil); err != nil {
		t.Fatal(err)
	}
	token := store.NewToken(time.Now().Add(-time.Hour))
	_, err := r.env.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName:                 aws.String(r.docs.Name()),
		Key:                       map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: "acme"}, "id": &types.AttributeValueMemberN{Value: "0"}},
		UpdateExpression:          aws.String("SET #i = :id ADD count_4 :minus"),
		ExpressionAttributeNames:  map[string]string{"#i": "op_d4_" + token},
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberN{Value: "1"}, ":minus": &types.AttributeValueMemberN{Value: "-1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.exact(r.docs, "acme", 4)
	if p := list(t, r.docs, "acme", records.ListQuery{Scope: 4}); p.Total != 1 {
		t.Fatalf("total %d", p.Total)
	}
}

// A process that never saw the record deletes it: the count comes down on
// the template the record had, which the stream's old image carries.
func TestDeleteCountsTheTemplateTheRecordHad(t *testing.T) {
	r := newRig(t)
	if _, err := r.docs.Create(request(t), "acme", document("Article", 4), nil); err != nil {
		t.Fatal(err)
	}
	fresh := store.New(r.db, r.docs.Name(), documents.Resource)
	if err := fresh.Delete(request(t), "acme", 1, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	r.exact(r.docs, "acme", 1, 4)
	if p := list(t, r.docs, "acme", records.ListQuery{Scope: 4}); p.Total != 0 {
		t.Fatalf("total %d", p.Total)
	}
}

func TestUpdateWhoseAnswerIsLostIsRecognised(t *testing.T) {
	r := newRig(t)
	if _, err := r.imgs.Create(request(t), "acme", image("v1"), nil); err != nil {
		t.Fatal(err)
	}
	r.proxy.Inject(recordUpdate, ddblocal.LoseAnswer, 1)
	item, err := r.imgs.Update(request(t), "acme", 1, records.Values{"name": "v2"}, store.Precondition{Match: []int64{1}})
	if err != nil {
		t.Fatalf("update whose first attempt landed: %v, want success, not 412", err)
	}
	if v, _ := store.IntAttr(item, store.AttrVersion); v != 2 {
		t.Fatalf("version %d, want 2: applied once", v)
	}
}

// An update whose answer is lost while another update overtakes it before
// the SDK's retry is still recognised by the retry: with If-Match it is not
// a 412 for the version it bumped itself, and without it it is not applied
// twice.
func TestUpdateWhoseAnswerIsLostAndOvertakenIsRecognised(t *testing.T) {
	for _, pre := range []store.Precondition{{Match: []int64{1}}, {}} {
		t.Run(fmt.Sprint("precondition ", pre), func(t *testing.T) {
			r := newRig(t)
			if _, err := r.imgs.Create(request(t), "acme", image("v1"), nil); err != nil {
				t.Fatal(err)
			}
			mine := ddblocal.MatchOp("UpdateItem", `"v2"`)
			r.proxy.Inject(mine, ddblocal.LoseAnswer, 1)
			retry := r.proxy.Inject(mine, ddblocal.HoldCall, 1)
			type result struct {
				item store.Item
				err  error
			}
			done := make(chan result, 1)
			go func() {
				item, err := r.imgs.Update(request(t), "acme", 1, records.Values{"name": "v2"}, pre)
				done <- result{item, err}
			}()
			<-retry.Held() // the first try landed; the SDK's retry waits
			for _, name := range []string{"v3", "v4"} {
				if _, err := r.imgs.Update(request(t), "acme", 1, records.Values{"description": name}, store.Precondition{}); err != nil {
					t.Fatal(err)
				}
			}
			retry.Release()
			got := <-done
			if got.err != nil {
				t.Fatalf("an update that landed, overtaken before its retry: %v", got.err)
			}
			if v, _ := store.IntAttr(r.raw(r.imgs, "acme", 1), store.AttrVersion); v != 4 {
				t.Fatalf("version %d, want 4: three updates, each applied once", v)
			}
		})
	}
}

// An Idempotency-Key's executions share an Attempt: the second writes the
// id the first bound, or finds the record the first wrote.
func TestAttemptsOfOneOperationMakeOneRecord(t *testing.T) {
	for _, landed := range []bool{false, true} {
		t.Run(fmt.Sprintf("first put landed=%v", landed), func(t *testing.T) {
			r := newRig(t)
			var bound int64
			att := store.Attempt{Op: store.NewToken(time.Now()), Bind: func(_ context.Context, id int64) error {
				bound = id
				return nil
			}}
			if landed {
				r.proxy.Inject(recordPut, ddblocal.LoseAnswer, 1)
			}
			r.proxy.Inject(recordPut, ddblocal.HangCall, 100)
			r.proxy.Inject(voidPut, ddblocal.HangCall, 100)
			if _, err := r.imgs.Create(store.WithAttempt(request(t), att), "acme", image("Once"), nil); err == nil {
				t.Fatal("first execution succeeded")
			}
			r.proxy.Reset()
			r.proxy.Wait()
			if bound != 1 {
				t.Fatalf("bound id %d", bound)
			}
			att.ID = bound
			item, err := r.imgs.Create(store.WithAttempt(request(t), att), "acme", image("Once"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if id, _ := store.IntAttr(item, store.AttrID); id != 1 {
				t.Fatalf("second execution wrote id %d, want the bound 1", id)
			}
			r.exact(r.imgs, "acme")
			if stored := r.records(r.imgs, "acme", ""); stored[0] != 1 {
				t.Fatalf("%d records for one operation", stored[0])
			}
		})
	}
}

// Creates, deletes and updates on three templates, each with a fault on
// one of its writes: lost answers, failures, throttling, late landings.
// Whatever each call answered, once settled every total matches the
// records stored.
func TestTotalsStayExactUnderFaults(t *testing.T) {
	r := newRig(t)
	rng := rand.New(rand.NewPCG(17, 4))
	faults := []ddblocal.Fault{ddblocal.LoseAnswer, ddblocal.FailCall, ddblocal.ThrottleCall, ddblocal.DropCall, ddblocal.PassCall}
	steps := map[string]func(ddblocal.ProxiedCall) bool{
		"counter": counterWrite, "put": recordPut, "void": voidPut,
		"tally": tallyWrite, "tombstone": tombstone, "update": recordUpdate,
	}
	stepNames := slices.Sorted(maps.Keys(steps))
	var live []int64
	answered := map[string]int{}
	for i := range 60 {
		step := stepNames[rng.IntN(len(stepNames))]
		fault := faults[rng.IntN(len(faults))]
		var held *ddblocal.FaultRule
		if i%15 == 7 {
			held = r.proxy.Inject(steps[step], ddblocal.HoldCall, 1)
		} else {
			r.proxy.Inject(steps[step], fault, 1+rng.IntN(3))
		}
		var err error
		switch op := rng.IntN(10); {
		case op < 5 || len(live) == 0:
			var item store.Item
			item, err = r.docs.Create(request(t), "acme", document(fmt.Sprint("doc ", i), []int64{1, 4, 9}[rng.IntN(3)]), nil)
			if err == nil {
				id, _ := store.IntAttr(item, store.AttrID)
				live = append(live, id)
			}
		case op < 8:
			k := rng.IntN(len(live))
			err = r.docs.Delete(request(t), "acme", live[k], store.Precondition{})
			if err == nil || errors.Is(err, store.ErrNotFound) {
				live = slices.Delete(live, k, k+1)
			}
		default:
			_, err = r.docs.Update(request(t), "acme", live[rng.IntN(len(live))], records.Values{"name": fmt.Sprint("renamed ", i)}, store.Precondition{})
		}
		answered[fmt.Sprint(err != nil)]++
		r.endStep(held)
	}
	t.Logf("answers (error?): %v", answered)
	r.exact(r.docs, "acme", 1, 4, 9)
}

// A delete that landed while its process lost every answer: the stream
// still carries it, and the count comes down once.
func TestLandedDeleteIsCounted(t *testing.T) {
	r := newRig(t)
	if _, err := r.docs.Create(request(t), "acme", document("Gone", 1), nil); err != nil {
		t.Fatal(err)
	}
	r.proxy.Inject(tombstone, ddblocal.LoseAnswer, 3)
	if err := r.docs.Delete(request(t), "acme", 1, store.Precondition{}); err == nil {
		t.Fatal("delete succeeded")
	}
	for i := range 2 {
		if _, err := r.docs.Create(request(t), "acme", document(fmt.Sprint("later ", i), 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	r.exact(r.docs, "acme", 1)
	if p := list(t, r.docs, "acme", records.ListQuery{Scope: 1}); p.Total != 2 {
		t.Fatalf("total %d", p.Total)
	}
}

// An update of a document's result keeps the text generated first beside
// it, once, on a document of several variants (its other texts stored),
// whatever happens to the write: its answer lost (the SDK's retry is
// recognised), on the first call (which finds the document keeps texts) or
// on the second (which copies). A document of one text keeps no copy, in
// one call.
func TestUpdateKeepsTheGeneratedTextOnce(t *testing.T) {
	r := newRig(t)
	several := document("Several", 1)
	several["result"], several["words"] = "As generated", int64(2)
	several["other_results"] = []any{map[string]any{"result": "Another text", "words": int64(2)}}
	one := document("One", 1)
	one["result"], one["words"] = "As generated", int64(2)
	for _, v := range []records.Values{several, one} {
		if _, err := r.docs.Create(request(t), "acme", v, nil); err != nil {
			t.Fatal(err)
		}
	}
	copying := ddblocal.MatchOp("UpdateItem", `"generated_result"`)
	for _, c := range []struct {
		id   int64
		kept bool
	}{{1, true}, {2, false}} {
		for i, mine := range []string{"Mine", "Mine again"} {
			if i == 0 {
				r.proxy.Inject(recordUpdate, ddblocal.LoseAnswer, 1)
			} else {
				r.proxy.Inject(copying, ddblocal.LoseAnswer, 1)
			}
			if _, err := r.docs.Update(request(t), "acme", c.id, records.Values{"result": mine, "words": int64(len(strings.Fields(mine)))}, store.Precondition{}); err != nil {
				t.Fatalf("record %d, update %d: %v", c.id, i+1, err)
			}
			r.endStep(nil)
			item := r.raw(r.docs, "acme", c.id)
			version, _ := store.IntAttr(item, store.AttrVersion)
			words, _ := store.IntAttr(item, "generated_words")
			if store.StrAttr(item, "result") != mine || version != int64(i+2) {
				t.Fatalf("record %d after update %d: %v", c.id, i+1, item)
			}
			if kept := store.StrAttr(item, "generated_result") == "As generated" && words == 2; kept != c.kept {
				t.Fatalf("record %d after update %d keeps %v, %v", c.id, i+1, item["generated_result"], item["generated_words"])
			}
		}
	}
}
