package integration_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/prompts"
	"contentapi/shared/quota"
)

// texts are a document's results as its JSON shows them.
func texts(t *testing.T, d map[string]any) []string {
	t.Helper()
	list, _ := d["results"].([]any)
	var out []string
	for _, e := range list {
		v, _ := e.(map[string]any)
		text, _ := v["result"].(string)
		if text == "" || num(v["words"]) <= 0 {
			t.Fatalf("a variant %v", e)
		}
		out = append(out, text)
	}
	return out
}

// asked are the text calls the stand-in has read, their system prompts
// by the version they ask for ("" when they ask for none).
func (g *genStack) asked() map[string][]bedrockstandin.Request {
	by := map[string][]bedrockstandin.Request{}
	for _, r := range g.parts.Bedrock.Requests() {
		if r.System == "" {
			continue
		}
		version := ""
		if _, after, ok := strings.Cut(r.System, "Version: this is version "); ok {
			version, _, _ = strings.Cut(after, " written")
		}
		by[version] = append(by[version], r)
	}
	return by
}

// A document's language (any letter case, shown as listed), tone and
// variants are stored and shown, and each variant is a call of its own
// whose brief asks for them after the template's: written all at once,
// each within the template's token bound, every text kept and counted.
func TestWritingControlsReachTheModel(t *testing.T) {
	g := newGenStack(t, genOptions{})
	r := g.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine",
		"template_id", "33", "language", " PT-br ", "tone", "witty", "variants", "3")
	expect(t, r, 201)
	d := r.data()
	got := texts(t, d)
	if genStatus(d) != "done" || d["language"] != "pt-BR" || d["tone"] != "witty" || num(d["variants"]) != 3 || len(got) != 3 {
		t.Fatalf("document = %v", d)
	}
	if got[0] == got[1] || got[1] == got[2] || got[0] == got[2] {
		t.Fatalf("the variants are not three texts: %q", got)
	}
	first := d["results"].([]any)[0].(map[string]any)
	if d["result"] != got[0] || num(d["words"]) != num(first["words"]) {
		t.Fatalf("result %v and words %v are not the first variant's", d["result"], d["words"])
	}
	tweet, _ := prompts.Lookup(33)
	asked := g.asked()
	for _, version := range []string{"1 of 3", "2 of 3", "3 of 3"} {
		calls := asked[version]
		if len(calls) != 1 {
			t.Fatalf("version %s asked %d times", version, len(calls))
		}
		c := calls[0]
		if !strings.HasPrefix(c.System, tweet.System()+"\n\n") || c.Prompt != "Our new espresso machine" ||
			c.MaxTokens != int(tweet.MaxTokens()) || c.Model != bedrockstandin.TextModel ||
			!strings.Contains(c.System, "write the whole answer in Brazilian Portuguese") ||
			!strings.Contains(c.System, "Tone: "+prompts.Tones()["witty"]) {
			t.Errorf("version %s asked %+v", version, c)
		}
	}
	var words int64
	for _, v := range d["results"].([]any) {
		words += num(v.(map[string]any)["words"])
	}
	g.wantWords(t, "every variant's words counted", words)
	// A read shows what the answer showed.
	if again := g.get(fmt.Sprintf("/api/v1/documents/%v", d["id"])).data(); !slices.Equal(texts(t, again), got) {
		t.Fatalf("stored %v", again)
	}
}

// A create without the new fields is what it was: one call, the
// template's brief as it was, and the record shows them as not asked for.
func TestNoControlsIsAsBefore(t *testing.T) {
	g := newGenStack(t, genOptions{})
	r := g.form("POST", "/api/v1/documents", "name", "Plain", "prompt", "Our new espresso machine", "template_id", "33")
	expect(t, r, 201)
	d := r.data()
	tweet, _ := prompts.Lookup(33)
	calls := g.parts.Bedrock.Requests()
	if len(calls) != 1 || calls[0].System != tweet.System() {
		t.Fatalf("asked %+v", calls)
	}
	if d["language"] != nil || d["tone"] != nil || num(d["variants"]) != 1 || d["result"] == nil ||
		!slices.Equal(texts(t, d), []string{d["result"].(string)}) {
		t.Fatalf("document = %v", d)
	}
}

// A bad value of any control is 422 naming it, and nothing is created or
// counted.
func TestBadControlsChangeNothing(t *testing.T) {
	g := newGenStack(t, genOptions{})
	for _, bad := range [][2]string{{"language", "en-US"}, {"language", "pt"}, {"language", "english"}, {"tone", "angry"},
		{"tone", "WITTY"}, {"variants", "4"}, {"variants", "0"}, {"variants", "two"}, {"variants", "1.5"}} {
		r := g.form("POST", "/api/v1/documents", "name", "Bad", "prompt", "Coffee", bad[0], bad[1])
		expect422(t, r, bad[0])
	}
	if l := g.get("/api/v1/documents"); num(l.meta()["total"]) != 0 || g.parts.Bedrock.Calls() != 0 {
		t.Fatalf("total %v, %d model calls", l.meta()["total"], g.parts.Bedrock.Calls())
	}
	if u := g.get("/api/v1/usage").data(); num(u["documents"].(map[string]any)["used"]) != 0 || g.usedWords(t, "acme") != 0 {
		t.Fatalf("usage %v, %d words", u, g.usedWords(t, "acme"))
	}
	r := g.form("POST", "/api/v1/images", "name", "Bad", "description", "A lighthouse", "resolution", "256x256",
		"negative_prompt", strings.Repeat("x", 1001))
	expect422(t, r, "negative_prompt")
}

// A variant that still fails after the retries fails the generation with
// its code; the variants written are kept, shown and counted.
func TestAVariantThatFailsKeepsTheOthers(t *testing.T) {
	g := newGenStack(t, genOptions{maxTries: 2})
	g.parts.Bedrock.InjectWhere(func(r bedrockstandin.Request) bool {
		return strings.Contains(r.System, "version 2 of 3")
	}, bedrockstandin.ServerError)
	r := g.form("POST", "/api/v1/documents", "name", "Part", "prompt", "Our new espresso machine", "variants", "3")
	expect(t, r, 201)
	d := g.settled(t, fmt.Sprintf("/api/v1/documents/%v", r.data()["id"]))
	e, _ := state(d)["error"].(map[string]any)
	got := texts(t, d)
	if genStatus(d) != "failed" || e["code"] != "model_unavailable" || len(got) != 2 || d["result"] != got[0] {
		t.Fatalf("document = %v", d)
	}
	// Versions 1 and 3 were written once, in the request; only version 2
	// was tried again, by the queue.
	asked := g.asked()
	if len(asked["1 of 3"]) != 1 || len(asked["3 of 3"]) != 1 || len(asked["2 of 3"]) < 2 {
		t.Fatalf("asked: %d, %d, %d times", len(asked["1 of 3"]), len(asked["2 of 3"]), len(asked["3 of 3"]))
	}
	var words int64
	for _, v := range d["results"].([]any) {
		words += num(v.(map[string]any)["words"])
	}
	g.wantWords(t, "the written variants' words counted", words)
}

// createOfThreeHandedOver creates a document of three variants whose third
// the stand-in holds past the request's wait of a second (genOptions.slow
// is longer), so that the request hands the generation to the queue with
// two written.
func (g *genStack) createOfThreeHandedOver() response {
	g.parts.Bedrock.InjectWhere(func(r bedrockstandin.Request) bool {
		return strings.Contains(r.System, "version 3 of 3")
	}, bedrockstandin.Slow)
	return g.do(request{method: "POST", path: "/api/v1/documents", key: g.writeKey, contentType: formType,
		body: "name=Slow&prompt=Our+new+espresso+machine&variants=3", header: map[string]string{"Prefer": "wait=1"}})
}

// A request whose wait runs out hands over what it wrote: the answer shows
// the variants done, and the queue writes only the rest.
func TestHandOverKeepsTheVariantsWritten(t *testing.T) {
	g := newGenStack(t, genOptions{slow: 3 * time.Second})
	r := g.createOfThreeHandedOver()
	expect(t, r, 201)
	early := texts(t, r.data())
	if genStatus(r.data()) != "pending" || len(early) != 2 {
		t.Fatalf("answer: %v", r.data())
	}
	d := g.settled(t, fmt.Sprintf("/api/v1/documents/%v", r.data()["id"]))
	got := texts(t, d)
	if genStatus(d) != "done" || len(got) != 3 || !slices.Equal(got[:2], early) {
		t.Fatalf("after the queue: %q, answered %q", got, early)
	}
	asked := g.asked()
	if len(asked["1 of 3"]) != 1 || len(asked["2 of 3"]) != 1 || len(asked["3 of 3"]) != 2 {
		t.Fatalf("asked: %d, %d, %d times", len(asked["1 of 3"]), len(asked["2 of 3"]), len(asked["3 of 3"]))
	}
	// The cost is every variant's, the request's two and the queue's one:
	// the tokens the record shows, all three variants', at the price.
	if cost, _ := state(r.data())["cost_usd"].(float64); cost <= 0 {
		t.Fatalf("the answer handed over shows no cost of its two variants: %v", state(r.data()))
	}
	st := state(d)
	wantCost(t, d, textCost(num(st["input_tokens"]), num(st["output_tokens"])))
}

// A generation of n variants holds n times one generation's words until it
// ends, under the same limits, and gives back what it did not write.
func TestVariantsHoldTheirWords(t *testing.T) {
	g := newGenStack(t, genOptions{noStream: true})
	path, _ := g.pendingDocumentWith(t, "name=Held&variants=3")
	if got := g.usedWords(t, "acme"); got != 3*prompts.MaxAnswerTokens {
		t.Fatalf("a pending create of 3 variants holds %d words", got)
	}
	g.setLimits("acme", quota.Limits{quota.Words: quota.Max(3 * prompts.MaxAnswerTokens)})
	r := g.form("POST", "/api/v1/documents", "name", "Over", "prompt", "Coffee")
	expectQuota(t, r, "words", 3*prompts.MaxAnswerTokens, time.Now().Add(-time.Minute), time.Now().Add(time.Minute))
	expect(t, g.do(request{method: "DELETE", path: path, key: g.writeKey}), 200)
	g.wantWords(t, "the hold given back", 0)
}

// Regenerate takes the controls as create does; one not given keeps its
// value, and fewer variants leave no texts of before.
func TestRegenerateChangesTheControls(t *testing.T) {
	g := newGenStack(t, genOptions{})
	d := g.form("POST", "/api/v1/documents", "name", "Doc", "prompt", "Coffee", "language", "fr", "variants", "2").data()
	path := fmt.Sprintf("/api/v1/documents/%v", d["id"])
	if len(texts(t, d)) != 2 {
		t.Fatalf("created %v", d)
	}
	r := g.form("POST", path+"/regenerate", "tone", "formal", "variants", "1")
	expect(t, r, 200)
	re := r.data()
	if re["language"] != "fr" || re["tone"] != "formal" || num(re["variants"]) != 1 || re["result"] == d["result"] ||
		!slices.Equal(texts(t, re), []string{re["result"].(string)}) {
		t.Fatalf("regenerated %v", re)
	}
	expect422(t, g.form("POST", path+"/regenerate", "language", "xx"), "language")
}

// The list filters by language, in any letter case, matched on the
// documents themselves.
func TestListByLanguage(t *testing.T) {
	s := newStack(t)
	for _, lang := range []string{"fr", "de", "fr", ""} {
		fields := []string{"name", "Doc " + lang, "prompt", "Coffee"}
		if lang != "" {
			fields = append(fields, "language", lang)
		}
		expect(t, s.form("POST", "/api/v1/documents", fields...), 201)
	}
	l := s.get("/api/v1/documents?language=FR")
	expect(t, l, 200)
	if num(l.meta()["total"]) != 2 || len(l.list()) != 2 || l.meta()["total_estimated"] != false {
		t.Fatalf("language=FR: %v", l.Raw)
	}
	for _, e := range l.list() {
		if e.(map[string]any)["language"] != "fr" {
			t.Fatalf("listed %v", e)
		}
	}
	expect422(t, s.get("/api/v1/documents?language=en-US"), "language")
	if l := s.get("/api/v1/documents?language="); num(l.meta()["total"]) != 4 {
		t.Fatalf("an empty filter: %v", l.Raw)
	}
}

// An image's negative prompt is stored, shown, and sent to the image
// model before the service's own.
func TestNegativePromptReachesTheModel(t *testing.T) {
	g := newGenStack(t, genOptions{})
	r := g.form("POST", "/api/v1/images", "name", "Cliff", "description", "A lighthouse", "resolution", "256x256",
		"negative_prompt", "people, boats")
	expect(t, r, 201)
	if r.data()["negative_prompt"] != "people, boats" || genStatus(r.data()) != "done" {
		t.Fatalf("image = %v", r.data())
	}
	calls := g.parts.Bedrock.Requests()
	if len(calls) != 1 || calls[0].Negative != "people, boats, "+prompts.Negative("") {
		t.Fatalf("asked %+v", calls)
	}
	plain := g.form("POST", "/api/v1/images", "name", "Plain", "description", "A lighthouse", "resolution", "256x256")
	if plain.data()["negative_prompt"] != nil || g.parts.Bedrock.Requests()[1].Negative != prompts.Negative("") {
		t.Fatalf("without one: %v", plain.data())
	}
}

// A document's own answers show every text as results, the first of them
// result and words until the client changes result, after which results
// still show what was generated (on a document of several variants); a
// regenerate's texts replace them all. Lists leave results out.
func TestResultsKeepWhatWasGenerated(t *testing.T) {
	g := newGenStack(t, genOptions{})
	d := g.form("POST", "/api/v1/documents", "name", "Two", "prompt", "Coffee", "variants", "2").data()
	path := fmt.Sprintf("/api/v1/documents/%v", d["id"])
	generated := texts(t, d)
	if len(generated) != 2 || d["result"] != generated[0] {
		t.Fatalf("created %v", d)
	}
	for _, e := range g.get("/api/v1/documents").list() {
		if _, shown := e.(map[string]any)["results"]; shown {
			t.Fatalf("a list item shows results: %v", e)
		}
	}
	for _, mine := range []string{"My own words here", "Changed again"} {
		r := g.form("PUT", path, "result", mine)
		expect(t, r, 200)
		if u := r.data(); u["result"] != mine || num(u["words"]) != int64(len(strings.Fields(mine))) ||
			!slices.Equal(texts(t, u), generated) {
			t.Fatalf("after PUT %q: %v", mine, u)
		}
	}
	first := g.get(path).data()["results"].([]any)[0].(map[string]any)
	if num(first["words"]) != num(d["words"]) {
		t.Fatalf("the first text's words after the PUTs: %v, generated %v", first, d["words"])
	}
	re := g.form("POST", path+"/regenerate", "variants", "1")
	expect(t, re, 200)
	if got := texts(t, re.data()); len(got) != 1 || got[0] != re.data()["result"] || slices.Contains(generated, got[0]) {
		t.Fatalf("regenerated %v", re.data())
	}
	// A document of one text shows its result as its one text, edited or
	// not: it keeps no second copy.
	one := g.form("POST", "/api/v1/documents", "name", "One", "prompt", "Coffee").data()
	r := g.form("PUT", fmt.Sprintf("/api/v1/documents/%v", one["id"]), "result", "Written by hand")
	expect(t, r, 200)
	if got := texts(t, r.data()); !slices.Equal(got, []string{"Written by hand"}) {
		t.Fatalf("after PUT: %v", r.data())
	}
}

// A generation of several variants is one event, sent when the last is
// written, whatever the tries it took: here the request hands over two
// variants written and the queue writes the third. The event shows every
// text, as the record does.
func TestVariantsAreOneEvent(t *testing.T) {
	d := newDeliveryStack(t, nil, func(int) int { return http.StatusNoContent })
	r := d.createOfThreeHandedOver()
	expect(t, r, 201)
	if genStatus(r.data()) != "pending" || len(texts(t, r.data())) != 2 {
		t.Fatalf("answer: %v", r.data())
	}
	doc := d.settled(t, fmt.Sprintf("/api/v1/documents/%v", r.data()["id"]))
	b := d.received(t, 1)[0]
	data, _ := b["data"].(map[string]any)
	if b["type"] != "document.generated" || genStatus(doc) != "done" || !slices.Equal(texts(t, data), texts(t, doc)) ||
		len(texts(t, doc)) != 3 {
		t.Fatalf("delivered %v for %v", b, doc)
	}
	// The hand-over's write, before the end in the record's stream, made
	// no event of its own.
	log, err := d.store.Deliveries(t.Context(), "acme", d.endpoint.ID)
	if err != nil || len(log) != 1 {
		t.Fatalf("deliveries %+v %v", log, err)
	}
}

// Regenerates of one document at once, asking for different variants:
// one generates and the other is refused while it runs (409), or runs
// after it; the record ends with the texts of the last that ran, as many
// as it asked for, and each generation that ran counts its texts' words
// once.
func TestConcurrentRegeneratesWithVariants(t *testing.T) {
	g := newGenStack(t, genOptions{})
	d := g.form("POST", "/api/v1/documents", "name", "Raced", "prompt", "Coffee").data()
	path := fmt.Sprintf("/api/v1/documents/%v", d["id"])
	words := map[int64]int64{1: num(d["words"])} // of a generation of n variants
	runs := map[int64]int64{1: 1}
	for round := range 3 {
		asks := []string{"2", "3"}
		answers := make([]response, len(asks))
		var wg sync.WaitGroup
		for i, n := range asks {
			wg.Go(func() { answers[i] = g.form("POST", path+"/regenerate", "variants", n) })
		}
		wg.Wait()
		var ran []map[string]any
		for _, a := range answers {
			switch a.Status {
			case 200:
				ran = append(ran, a.data())
			case 409:
			default:
				t.Fatalf("round %d: %d %s", round, a.Status, a.Raw)
			}
		}
		if len(ran) == 0 {
			t.Fatalf("round %d: none ran", round)
		}
		for _, r := range ran {
			n := num(r["variants"])
			runs[n]++
			var w int64
			for _, v := range r["results"].([]any) {
				w += num(v.(map[string]any)["words"])
			}
			if int64(len(texts(t, r))) != n || (words[n] != 0 && words[n] != w) {
				t.Fatalf("round %d: a regenerate of %d answered %v", round, n, r)
			}
			words[n] = w
		}
		now := g.get(path).data()
		got := texts(t, now)
		if genStatus(now) != "done" || int64(len(got)) != num(now["variants"]) || now["result"] != got[0] ||
			!slices.ContainsFunc(ran, func(r map[string]any) bool { return slices.Equal(texts(t, r), got) }) {
			t.Fatalf("round %d: stored %v", round, now)
		}
	}
	var want int64
	for n, k := range runs {
		want += k * words[n]
	}
	g.wantWords(t, "each generation's words counted once", want)
}
