package integration_test

import (
	"fmt"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/prompts"
)

// faultyGenStack is a generating stack whose DynamoDB traffic goes through
// a fault proxy, on a clock the test moves and with a short request
// deadline.
func faultyGenStack(t *testing.T, o genOptions) (*genStack, *ddblocal.FaultProxy, *clock) {
	env := ddblocal.NewTestEnv(t)
	proxy := ddblocal.NewFaultProxy(env.Endpoint)
	t.Cleanup(proxy.Close)
	c := &clock{}
	o.configure = func(cfg *app.Config) {
		cfg.DynamoDBEndpoint = proxy.URL
		cfg.RequestTimeout = 4 * time.Second
		c.configure(cfg)
	}
	return newGenStack(t, o), proxy, c
}

// A create of three variants holds three generations' words, counted once
// whatever happens to its writes, and given back once when the record is
// not written: its counter write's answer lost (the SDK's retry finds its
// own intent), its put failing on every try, its put stalled until the
// request has given up (it lands on a voided id, or not at all), and the
// record deleted while it waits.
func TestVariantsHoldCountsOnceUnderFaults(t *testing.T) {
	g, proxy, clk := faultyGenStack(t, genOptions{noStream: true})
	const hold = prompts.MaxAnswerTokens
	create := func(variants int) response {
		return g.do(request{method: "POST", path: "/api/v1/documents", key: g.writeKey, contentType: formType,
			body: fmt.Sprintf("name=Held&prompt=Coffee&variants=%d", variants), header: map[string]string{"Prefer": "respond-async"}})
	}
	documents := func() int64 {
		used, _ := meter(t, g.get(app.UsagePath), "documents")
		return used
	}
	expect(t, g.get(app.UsagePath), 200) // the key is cached

	proxy.Inject(ddblocal.MatchOp("UpdateItem", `"next_id"`), ddblocal.LoseAnswer, 1)
	kept := create(3)
	expect(t, kept, 201)
	if got := g.usedWords(t, "acme"); got != 3*hold || documents() != 1 {
		t.Fatalf("a create of 3 whose counter answer was lost: %d words held, %d documents", got, documents())
	}

	proxy.Inject(recordPutCall, ddblocal.FailCall, 3)
	expectUnavailable(t, create(3))
	held := proxy.Inject(recordPutCall, ddblocal.HoldCall, 1)
	stalled := make(chan response, 1)
	go func() { stalled <- create(3) }()
	<-held.Held()
	expectUnavailable(t, <-stalled)
	held.Release()
	proxy.Wait()
	// The next write of the account, once they are older than any request,
	// settles both: nothing stays held for them.
	clk.advance(time.Minute)
	expect(t, create(2), 201)
	if got, total := g.usedWords(t, "acme"), num(g.get("/api/v1/documents").meta()["total"]); got != 5*hold || total != 2 || documents() != 2 {
		t.Fatalf("after a failed and a stalled create of 3: %d words held, %d listed, %d documents counted", got, total, documents())
	}

	proxy.Inject(tombstoneCall, ddblocal.LoseAnswer, 1)
	expect(t, g.do(request{method: "DELETE", path: fmt.Sprintf("/api/v1/documents/%v", kept.data()["id"]), key: g.writeKey}), 200)
	g.wantWords(t, "the deleted create's three holds given back once", 2*hold)
}

// The write that hands a generation of variants back to the queue with the
// texts written so far is made once and kept, its answer lost (the SDK
// retries it) or the database holding it until its request has given up:
// the queue writes only the missing variant, and the words count each text
// once.
func TestHandOverOfVariantsUnderFaults(t *testing.T) {
	handOver := ddblocal.MatchOp("UpdateItem", `"other_results"`)
	for _, fault := range []struct {
		name  string
		fault ddblocal.Fault
	}{{"answer lost", ddblocal.LoseAnswer}, {"stalled", ddblocal.HoldCall}} {
		t.Run(fault.name, func(t *testing.T) {
			g, proxy, _ := faultyGenStack(t, genOptions{slow: 3 * time.Second})
			rule := proxy.Inject(handOver, fault.fault, 1)
			r := g.createOfThreeHandedOver()
			if fault.fault == ddblocal.HoldCall {
				// The write lands only now, after its request gave up on it.
				rule.Release()
			}
			// The answer shows the record as the request last knew it:
			// handed over, taken up by the queue meanwhile, or, when the
			// write outlasted the request, as created.
			expect(t, r, 201)
			d := g.settled(t, fmt.Sprintf("/api/v1/documents/%v", r.data()["id"]))
			got := texts(t, d)
			if genStatus(d) != "done" || len(got) != 3 {
				t.Fatalf("after the queue: %v", d)
			}
			asked := g.asked()
			if len(asked["1 of 3"]) != 1 || len(asked["2 of 3"]) != 1 || len(asked["3 of 3"]) != 2 {
				t.Fatalf("asked: %d, %d, %d times", len(asked["1 of 3"]), len(asked["2 of 3"]), len(asked["3 of 3"]))
			}
			var words int64
			for _, v := range d["results"].([]any) {
				words += num(v.(map[string]any)["words"])
			}
			g.wantWords(t, "each text's words counted once", words)
		})
	}
}
