package integration_test

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/generation"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/store"
)

// The tally function exists whether generation is on or off, is built like
// the others, may only update the tables and read their streams (and, for
// its sweep, settle intents: read counters and records, void ids, scan the
// sparse index of unsettled counters), and each
// record table's stream reaches it through one mapping that never drops a
// record: retried until it lands, from the first record reported failed,
// one batch per shard at a time, from now on, with the shard named (a
// tumbling window).
func TestTemplateTally(t *testing.T) {
	tmpl := loadTemplate(t)
	f, err := tmpl.Function(app.TallyFunction)
	if err != nil {
		t.Fatal(err)
	}
	if c := tmpl.Resources[app.TallyFunction].Condition; c != "" || f.Metadata["BuildMethod"] != "makefile" {
		t.Errorf("TallyFunction: condition %q, build %v", c, f.Metadata["BuildMethod"])
	}
	if c := tmpl.Resources["TallyLogGroup"].Condition; c != "" {
		t.Errorf("TallyLogGroup: condition %q", c)
	}
	path, _ := sam.Find()
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "functions", "tally", "main.go")); err != nil {
		t.Error(err)
	}
	var want []string
	env := f.Env()
	for _, res := range app.Resources {
		if !reflect.DeepEqual(env[res.TableEnv()], map[string]any{"Ref": res.Table()}) {
			t.Errorf("TallyFunction: %s = %v", res.TableEnv(), env[res.TableEnv()])
		}
		want = append(want, on(res.Table()+".Arn", "dynamodb:UpdateItem", "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem")...)
		want = append(want, on(res.Table()+".Arn/index/"+store.IndexUnsettled, "dynamodb:Scan")...)
		want = append(want, on(res.Table()+".StreamArn", "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams")...)
	}
	if got := grants(t, f, ""); !slices.Equal(got, sorted(want)) {
		t.Errorf("TallyFunction grants\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(sorted(want), "\n  "))
	}

	mappings, err := tmpl.StreamMappings()
	if err != nil {
		t.Fatal(err)
	}
	readers := map[string]int{}
	tallied := map[string]int{}
	for _, m := range mappings {
		readers[m.Table]++
		if m.Function != app.TallyFunction {
			continue
		}
		tallied[m.Table]++
		if m.Condition != "" || m.StartingPosition != "LATEST" || m.MaximumRetryAttempts != -1 ||
			m.ParallelizationFactor != 1 || m.TumblingWindowInSeconds < 1 || m.BisectBatchOnFunctionError ||
			!slices.Equal(m.FunctionResponseTypes, []string{"ReportBatchItemFailures"}) || m.BatchSize < 1 {
			t.Errorf("%s: %+v", m.LogicalID, m)
		}
	}
	for _, res := range app.Resources {
		if tallied[res.Table()] != 1 {
			t.Errorf("%s: %d tally mappings, want 1", res.Table(), tallied[res.Table()])
		}
		// DynamoDB lets two readers share a stream's shard.
		if readers[res.Table()] > 2 {
			t.Errorf("%s: %d readers of its stream", res.Table(), readers[res.Table()])
		}
	}
}

// The tally's filter passes exactly a delete, a live record turned into its
// tombstone, and any change of a record whose generation holds part of the
// month's quota (its end gives it back), and a write-back of a running
// generation that spent (the tally sums it); not a create, a void id, an edit,
// a tombstone touched again, an edit of a record whose generation ended.
func TestTemplateTallyFilter(t *testing.T) {
	tmpl := loadTemplate(t)
	mappings, err := tmpl.StreamMappings()
	if err != nil {
		t.Fatal(err)
	}
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	live := store.Item{store.AttrAccount: s("acme"), store.AttrID: n("7"), store.AttrIDKey: n("7"), "name": s("x")}
	edited := store.Item{store.AttrAccount: s("acme"), store.AttrID: n("7"), store.AttrIDKey: n("7"), "name": s("y")}
	tomb := store.Item{store.AttrAccount: s("acme"), store.AttrID: n("7"), store.AttrGoneBy: s("t")}
	fenced := store.Item{store.AttrAccount: s("acme"), store.AttrID: n("7"), store.AttrGoneBy: s("t"), "fences": &types.AttributeValueMemberSS{Value: []string{"f"}}}
	void := store.Item{store.AttrAccount: s("acme"), store.AttrID: n("7"), store.AttrVoid: s("t")}
	withState := func(item store.Item, st generation.State) store.Item {
		av, err := attributevalue.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		out := maps.Clone(item)
		out[store.AttrGeneration] = av
		return out
	}
	pending := generation.Request("m", time.Now())
	pending.Hold = &generation.Hold{Usage: "used_words_2026_11", Held: 4096}
	running := pending.Claim(time.Now())
	done := running.Finish("m", generation.Usage{Counted: 12}, time.Now())
	// An image's generation holds nothing; its write-backs pass for what
	// they spent, a claim of it does not.
	picture := generation.Request("m", time.Now())
	drawing := picture.Claim(time.Now())
	drawn := drawing.Finish("m", generation.Usage{}, time.Now()).Spend(40_000_000)
	handedBack := drawing.Requeue(true).Spend(40_000_000)
	unpriced := drawing.Finish("m", generation.Usage{}, time.Now())
	// Under a spend limit, an image's generation holds its worst case on
	// the ledger: its end passes, cost or none, and so does its delete.
	capped := picture
	capped.SpendHold = &generation.SpendHold{ID: "t", Committed: "committed_spend_2026_11", Held: 120_000_000}
	cappedDrawing := capped.Claim(time.Now())
	cappedFailed := cappedDrawing.Finish("m", generation.Usage{}, time.Now())
	testCases := []struct {
		name     string
		event    string
		old, new store.Item
		want     bool
	}{
		{"a delete", "MODIFY", live, tomb, true},
		{"a create", "INSERT", nil, live, false},
		{"a void id", "INSERT", nil, void, false},
		{"an edit", "MODIFY", live, edited, false},
		{"a tombstone touched again", "MODIFY", tomb, fenced, false},
		{"an item removed", "REMOVE", tomb, nil, false},
		{"a holding generation claimed", "MODIFY", withState(live, pending), withState(live, running), true},
		{"a holding generation ended", "MODIFY", withState(live, running), withState(live, done), true},
		{"a holding record deleted", "MODIFY", withState(live, pending), tomb, true},
		{"a holding record removed", "REMOVE", withState(live, pending), nil, true},
		{"an ended generation's record edited", "MODIFY", withState(live, done), withState(edited, done), false},
		{"an ended generation regenerated", "MODIFY", withState(live, done), withState(live, pending), false},
		{"a generation holding nothing claimed", "MODIFY", withState(live, picture), withState(live, drawing), false},
		{"a generation that spent ended", "MODIFY", withState(live, drawing), withState(live, drawn), true},
		{"a generation that spent handed back", "MODIFY", withState(live, drawing), withState(live, handedBack), true},
		{"a generation that spent nothing ended", "MODIFY", withState(live, drawing), withState(live, unpriced), false},
		{"a spent generation's record edited", "MODIFY", withState(live, drawn), withState(edited, drawn), false},
		{"a spend-holding generation claimed", "MODIFY", withState(live, capped), withState(live, cappedDrawing), true},
		{"a spend-holding generation ended, nothing spent", "MODIFY", withState(live, cappedDrawing), withState(live, cappedFailed), true},
		{"a spend-holding record deleted", "MODIFY", withState(live, capped), tomb, true},
		{"a spend-holding record removed", "REMOVE", withState(live, capped), nil, true},
		{"an ended spend-holding generation's record edited", "MODIFY", withState(live, cappedFailed), withState(edited, cappedFailed), false},
	}
	count := 0
	for _, m := range mappings {
		if m.Function != app.TallyFunction {
			continue
		}
		count++
		f, err := lambdalocal.ParseStreamFilter(m.Filters)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range testCases {
			rec := events.DynamoDBEventRecord{EventName: tc.event, Change: events.DynamoDBStreamRecord{
				OldImage: imageOrNil(t, tc.old), NewImage: imageOrNil(t, tc.new),
			}}
			if got := f.Match(rec); got != tc.want {
				t.Errorf("%s, %s: passes %v, want %v", m.LogicalID, tc.name, got, tc.want)
			}
		}
	}
	if count == 0 {
		t.Fatal("no tally mappings")
	}
}

// docs/api.md promises a total exact again within 5 minutes of an outage,
// whether or not its account writes: an intent opened as the outage ends
// is older than the settling horizon (as the template configures the
// functions) after the horizon, and the tally's next scheduled run, which
// ends within the function's timeout, settles it.
func TestTemplateTallySweepsWithinFiveMinutes(t *testing.T) {
	tmpl := loadTemplate(t)
	all, err := tmpl.Schedules()
	if err != nil {
		t.Fatal(err)
	}
	var sweeps []sam.Schedule
	for _, s := range all {
		if s.Function == app.TallyFunction {
			sweeps = append(sweeps, s)
		}
	}
	if len(sweeps) != 1 {
		t.Fatalf("the tally has %d schedules, want its one sweep: %+v", len(sweeps), all)
	}
	tables := map[string]string{}
	for _, id := range tmpl.ResourcesOfType(sam.TableType) {
		tables[id] = id
	}
	for k, v := range ddblocal.EnvVars(tmpl, "http://127.0.0.1:8000", tables) {
		t.Setenv(k, v)
	}
	// Chosen by conditions, which the local environment leaves out; they
	// do not bear on the horizon.
	t.Setenv(app.EnvTextModel, "amazon.nova-micro-v1:0")
	t.Setenv(app.EnvImageModel, "stability.stable-image-core-v1:1")
	cfg, err := app.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	f, err := tmpl.Function(app.TallyFunction)
	if err != nil {
		t.Fatal(err)
	}
	worst := cfg.SettleHorizon() + sweeps[0].Every + f.Timeout()
	t.Logf("horizon %v + every %v + timeout %v = %v", cfg.SettleHorizon(), sweeps[0].Every, f.Timeout(), worst)
	if worst > 5*time.Minute {
		t.Errorf("an intent opened as an outage ends may wait %v to be settled, past docs/api.md's 5 minutes", worst)
	}
}
