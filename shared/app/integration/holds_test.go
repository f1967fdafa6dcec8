package integration_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/prompts"
	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// usedWords is the account's words this month as the counter item holds
// them, before the usage answer's floor at 0: a hold given back twice
// would show here as less than nothing.
func (g *genStack) usedWords(t *testing.T, account string) int64 {
	t.Helper()
	out, err := g.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(g.env.Tables["DocumentsTable"]), ConsistentRead: aws.Bool(true),
		Key: store.Item{"account": stringAV(account), "id": numberAV(0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	attr := quota.UsedAttr(quota.Words, quota.PeriodOf(time.Now()))
	n, _ := store.IntAttr(out.Item, attr)
	return n
}

// wantWords waits for the tally to bring the account's words to want.
func (g *genStack) wantWords(t *testing.T, what string, want int64) {
	t.Helper()
	eventually(t, what, func() (bool, string) {
		got := g.usedWords(t, "acme")
		return got == want, fmt.Sprintf("%d words counted, want %d", got, want)
	})
	g.tally.Drain()
	if got := g.usedWords(t, "acme"); got != want {
		t.Fatalf("%s: %d words counted, want %d", what, got, want)
	}
}

// pendingDocument creates a document whose generation waits for the
// generator (which this stack does not run) and returns its path and id.
func (g *genStack) pendingDocument(t *testing.T, name string) (string, int64) {
	t.Helper()
	return g.pendingDocumentWith(t, "name="+name)
}

// pendingDocumentWith is pendingDocument with the form fields given
// (name included).
func (g *genStack) pendingDocumentWith(t *testing.T, fields string) (string, int64) {
	t.Helper()
	r := g.do(request{method: "POST", path: "/api/v1/documents", key: g.writeKey, contentType: formType,
		body: fields + "&prompt=Our+new+espresso+machine", header: map[string]string{"Prefer": "respond-async"}})
	expect(t, r, 201)
	id := num(r.data()["id"])
	return fmt.Sprintf("/api/v1/documents/%d", id), id
}

// stale moves a record's generation request 16 minutes back: as if it had
// waited past its deadline.
func (g *genStack) stale(t *testing.T, id int64) {
	t.Helper()
	requested := time.Now().Add(-16 * time.Minute).UTC()
	_, err := g.env.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName:                 aws.String(g.env.Tables["DocumentsTable"]),
		Key:                       store.Item{"account": stringAV("acme"), "id": numberAV(id)},
		UpdateExpression:          aws.String("SET #g.requested_at = :t"),
		ExpressionAttributeNames:  map[string]string{"#g": "generation"},
		ExpressionAttributeValues: store.Item{":t": stringAV(requested.Format(store.TimeLayout))},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// deliverPending hands the generator the stream record of a document as
// stored now (pending), as its mapping would, and returns once handled.
func (g *genStack) deliverPending(t *testing.T, id int64) {
	t.Helper()
	out, err := g.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(g.env.Tables["DocumentsTable"]), ConsistentRead: aws.Bool(true),
		Key: store.Item{"account": stringAV("acme"), "id": numberAV(id)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
		EventID: strconv.FormatInt(id, 10), EventName: "MODIFY", EventSource: "aws:dynamodb",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + g.env.Tables["DocumentsTable"] + "/stream/2026-11-21T00:00:00.000",
		Change:         events.DynamoDBStreamRecord{NewImage: streamImage(t, out.Item), SequenceNumber: strconv.FormatInt(100+id, 10)},
	}}}
	if resp, err := g.stream(context.Background(), ev); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("delivery: %v %v", resp, err)
	}
}

// A generation that never runs gives its hold back, exactly once: the
// record deleted while it waits, regenerated past its deadline (twice at
// at once: one regenerate starts, the other is refused and refunded), or
// taken up by the generator past its deadline (delivered twice). Only the
// words that generations wrote stay counted.
func TestWordsHeldByGenerationsThatNeverRunAreGivenBack(t *testing.T) {
	g := newGenStack(t, genOptions{noStream: true})
	const hold = prompts.MaxAnswerTokens
	deleted, _ := g.pendingDocument(t, "Deleted")
	regenerated, regeneratedID := g.pendingDocument(t, "Regenerated")
	_, expiredID := g.pendingDocument(t, "Expired")
	generated, generatedID := g.pendingDocument(t, "Generated")
	g.wantWords(t, "four holds", 4*hold)

	expect(t, g.do(request{method: "DELETE", path: deleted, key: g.writeKey}), 200)
	g.wantWords(t, "the deleted document's hold given back", 3*hold)

	g.stale(t, regeneratedID)
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = g.do(request{method: "POST", path: regenerated + "/regenerate", key: g.writeKey}).Status
		})
	}
	wg.Wait()
	// The second is refused while the first generates (409), or, when the
	// first has ended before it reads the record, generates again.
	ran := 0
	for _, s := range statuses {
		switch s {
		case 200:
			ran++
		case 409:
		default:
			t.Fatalf("two regenerates at once: %v", statuses)
		}
	}
	if ran == 0 {
		t.Fatalf("two regenerates at once: %v, none ran", statuses)
	}
	// The same inputs write the same text (the stand-in is deterministic).
	regeneratedWords := int64(ran) * num(g.get(regenerated).data()["words"])

	g.stale(t, expiredID)
	g.deliverPending(t, expiredID)
	g.deliverPending(t, expiredID) // a duplicate: the write is made once
	if d := g.get(fmt.Sprintf("/api/v1/documents/%d", expiredID)).data(); genStatus(d) != "failed" {
		t.Fatalf("expired: %v", d)
	}

	g.deliverPending(t, generatedID)
	generatedWords := num(g.settled(t, generated)["words"])
	if regeneratedWords == 0 || generatedWords == 0 {
		t.Fatalf("generated %d and %d words", regeneratedWords, generatedWords)
	}
	g.wantWords(t, "only the words written", regeneratedWords+generatedWords)
}

// Documents deleted as soon as they are created, while the generator takes
// them up, and others while the model writes them: each generation either
// ends before its delete (and counts its words) or loses its record to the
// delete (and counts none), and its hold is given back once either way. The stand-in writes the same text for the
// same inputs, so every count is a multiple of one generation's words, and
// no hold (4,096) is left over or given back twice.
func TestWordsHeldByDocumentsDeletedWhileGeneratingCountOnce(t *testing.T) {
	g := newGenStack(t, genOptions{})
	create := func(name, prompt string, async bool) response {
		header := map[string]string{}
		if async {
			header["Prefer"] = "respond-async"
		}
		r := g.do(request{method: "POST", path: "/api/v1/documents", key: g.writeKey, contentType: formType,
			body: "name=" + name + "&prompt=" + prompt, header: header})
		expect(t, r, 201)
		return r
	}
	const prompt = "Our+new+espresso+machine"
	one := num(create("Kept", prompt, false).data()["words"])
	const n = 10
	if one == 0 || (n+1)*one >= prompts.MaxAnswerTokens {
		t.Fatalf("one generation writes %d words: the test needs 0 < %d of them < a hold", one, n+1)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%2 == 1 {
				// Deleted while the generator waits for the model: its
				// write-back loses, and it counts nothing.
				path := fmt.Sprintf("/api/v1/documents/%v", create(fmt.Sprint("Slow ", i), prompt+"+[standin:slow]", true).data()["id"])
				for deadline := time.Now().Add(time.Minute); genStatus(g.get(path).data()) != "running"; {
					if time.Now().After(deadline) {
						t.Errorf("%s: the generator did not take it up", path)
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
				if r := g.do(request{method: "DELETE", path: path, key: g.writeKey}); r.Status != 200 {
					t.Errorf("delete: %d %s", r.Status, r.Raw)
				}
				return
			}
			path := fmt.Sprintf("/api/v1/documents/%v", create(fmt.Sprint("Gone ", i), prompt, true).data()["id"])
			if r := g.do(request{method: "DELETE", path: path, key: g.writeKey}); r.Status != 200 {
				t.Errorf("delete: %d %s", r.Status, r.Raw)
			}
		})
	}
	wg.Wait()
	settled := func() (bool, string) {
		used := g.usedWords(t, "acme")
		return used%one == 0 && used >= one && used <= (n+1)*one,
			fmt.Sprintf("%d words counted, want a multiple of %d from %d to %d", used, one, one, (n+1)*one)
	}
	eventually(t, "every hold given back once", settled)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.poller.Drained(ctx); err != nil {
		t.Fatal(err)
	}
	g.tally.Drain()
	if ok, seen := settled(); !ok {
		t.Fatal(seen)
	}
	t.Logf("%d words counted: %d of %d documents deleted at once ended before their delete", g.usedWords(t, "acme"), g.usedWords(t, "acme")/one-1, n/2)
}

// Japanese text is about two words a token, so a generation can write more
// words than its hold. It counts its hold, no more: thirty creates at once
// against a limit still end at or under the limit plus one generation's
// hold, where counting the words written would pass it by a generation for
// each create let through.
func TestWordsLimitHoldsWithJapaneseText(t *testing.T) {
	const limit = 10_000
	g := newGenStack(t, genOptions{})
	g.setLimits("acme", quota.Limits{quota.Words: quota.Max(limit)})
	created, refused, most := g.createsAtOnce(t, 30, func(i int) []string {
		// A template without a length of its own: its answer may have the
		// most tokens (prompts.MaxAnswerTokens).
		return []string{"name", fmt.Sprint("記事 ", i), "template_id", "6",
			"prompt", "エスプレッソマシンの紹介 " + bedrockstandin.JapaneseMarker}
	})
	if most <= prompts.MaxAnswerTokens {
		t.Fatalf("the longest text has %d words: the test needs more than a hold (%d)", most, prompts.MaxAnswerTokens)
	}
	g.tally.Drain()
	used := g.usedWords(t, "acme")
	if created < 2 || refused == 0 || used > limit+prompts.MaxAnswerTokens {
		t.Fatalf("%d created, %d refused, %d words counted: want at most %d + one hold (%d)", created, refused, used, limit, prompts.MaxAnswerTokens)
	}
	t.Logf("%d created, %d refused, %d words counted (limit %d; %d words written by the longest)", created, refused, used, limit, most)
}
