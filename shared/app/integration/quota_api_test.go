package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/prompts"
	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// setLimits gives an account limits of its own, as make limits does.
func (s *stack) setLimits(account string, set quota.Limits) {
	s.t.Helper()
	if _, err := app.SetLimits(context.Background(), s.env.Client, s.env.Tables, account, set, nil); err != nil {
		s.t.Fatal(err)
	}
}

// meter is one kind of a usage answer: used, and the limit (-1: null).
func meter(t *testing.T, r response, kind string) (used, limit int64) {
	t.Helper()
	m, ok := r.data()[kind].(map[string]any)
	if !ok {
		t.Fatalf("usage without %s: %s", kind, r.Raw)
	}
	if m["limit"] == nil {
		return num(m["used"]), -1
	}
	return num(m["used"]), num(m["limit"])
}

// expectQuota checks a 429 of the monthly quota: its code, its message and
// a Retry-After that ends at the next month (UTC), as seen between before
// and after the request.
func expectQuota(t *testing.T, r response, kind string, limit int, before, after time.Time) {
	t.Helper()
	expect(t, r, 429)
	if r.Body["code"] != "quota_exceeded" || r.Body["message"] != fmt.Sprintf("The monthly limit of %d %s is reached.", limit, kind) {
		t.Errorf("quota answer %s", r.Raw)
	}
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	next := quota.PeriodOf(before).End()
	if err != nil || retry < int(next.Sub(after).Seconds()) || retry > int(next.Sub(before).Seconds())+1 {
		t.Errorf("Retry-After %q, want the seconds until %v", r.Header.Get("Retry-After"), next)
	}
}

// A create over the month's limit is 429 and creates nothing; the usage
// endpoint shows the month, what was used and the limits; answers match
// the document.
func TestQuotaThroughTheAPI(t *testing.T) {
	s := newStack(t)
	c := newConformance(t, s)
	w := s.writeKey

	r := c.get(200, app.UsagePath, s.readKey)
	if r.data()["period"] != quota.PeriodOf(time.Now()).String() {
		t.Errorf("period %v", r.data()["period"])
	}
	for _, kind := range []string{"images", "documents", "words"} {
		if used, limit := meter(t, r, kind); used != 0 || limit != -1 {
			t.Errorf("%s: %d of %d before anything, want 0 of null", kind, used, limit)
		}
	}

	s.setLimits("acme", quota.Limits{quota.Images: quota.Max(2), quota.Documents: quota.Max(1), quota.Words: quota.Max(5000)})
	image := []string{"name", "Sunset", "description", "d", "resolution", "256x256"}
	c.form(201, "POST", "/api/v1/images", w, image...)
	c.form(201, "POST", "/api/v1/images", w, image...)
	before := time.Now()
	refused := c.form(429, "POST", "/api/v1/images", w, image...)
	expectQuota(t, refused, "images", 2, before, time.Now())
	c.form(201, "POST", "/api/v1/documents", w, "name", "Post", "prompt", "p")
	before = time.Now()
	refused = c.json(429, "POST", "/api/v1/documents", w, `{"name":"Another","prompt":"p","template_id":9}`)
	expectQuota(t, refused, "documents", 1, before, time.Now())
	// Another account is limited by its own limits only.
	c.form(201, "POST", "/api/v1/images", s.otherKey, image...)

	// Nothing of the refused creates exists.
	if r := s.get("/api/v1/images"); num(r.meta()["total"]) != 2 {
		t.Errorf("%v images listed, want 2", r.meta()["total"])
	}
	if r := s.get("/api/v1/documents?template_id=9"); num(r.meta()["total"]) != 0 {
		t.Errorf("%v documents of template 9, want 0", r.meta()["total"])
	}
	r = c.get(200, app.UsagePath, w)
	for kind, want := range map[string][2]int64{"images": {2, 2}, "documents": {1, 1}, "words": {0, 5000}} {
		if used, limit := meter(t, r, kind); used != want[0] || limit != want[1] {
			t.Errorf("%s: %d of %d, want %d of %d", kind, used, limit, want[0], want[1])
		}
	}

	// Updates and deletes are not limited, and a delete gives nothing back:
	// the month's usage counts what was made.
	c.form(200, "PUT", "/api/v1/images/1", w, "favorite", "1")
	c.call(200, request{method: "DELETE", path: "/api/v1/images/1", key: w})
	c.form(429, "POST", "/api/v1/images", w, image...)
}

// An Idempotency-Key's replay counts nothing, even once the limit is
// reached: it is the first request's answer again.
func TestQuotaCountsAnIdempotentCreateOnce(t *testing.T) {
	s := newStack(t)
	s.setLimits("acme", quota.Limits{quota.Images: quota.Max(2)})
	once := request{method: "POST", path: "/api/v1/images", key: s.writeKey, contentType: formType,
		body: "name=Once&description=d&resolution=256x256", header: map[string]string{"Idempotency-Key": "quota-once"}}
	expect(t, s.do(once), 201)
	expect(t, s.form("POST", "/api/v1/images", "name", "Twice", "description", "d", "resolution", "256x256"), 201)
	replay := s.do(once)
	expect(t, replay, 201)
	if replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("not a replay")
	}
	if used, _ := meter(t, s.get(app.UsagePath), "images"); used != 2 {
		t.Errorf("%d images counted, want 2", used)
	}
	// A refused create keeps no answer for its key: once the limit allows,
	// the same request with the same key creates.
	later := once
	later.body, later.header = "name=Later&description=d&resolution=256x256", map[string]string{"Idempotency-Key": "quota-later"}
	expect(t, s.do(later), 429)
	s.setLimits("acme", quota.Limits{quota.Images: quota.Max(3)})
	if r := s.do(later); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the retry once allowed: %d %v", r.Status, r.Header)
	}
}

// The deployment's defaults apply to accounts without limits of their own;
// an account's own limit, unlimited included, beats them.
func TestQuotaDefaults(t *testing.T) {
	s := newStackWith(t, func(c *app.Config) {
		c.QuotaDefaults = quota.Limits{quota.Images: quota.Max(1), quota.Words: quota.Max(0)}
	})
	image := []string{"name", "x", "description", "d", "resolution", "256x256"}
	expect(t, s.form("POST", "/api/v1/images", image...), 201)
	expect(t, s.form("POST", "/api/v1/images", image...), 429)
	// A words limit of 0 allows no document.
	r := s.form("POST", "/api/v1/documents", "name", "x", "prompt", "p")
	expect(t, r, 429)
	if r.Body["message"] != "The monthly limit of 0 words is reached." {
		t.Errorf("message %v", r.Body["message"])
	}
	r = s.get(app.UsagePath)
	if used, limit := meter(t, r, "images"); used != 1 || limit != 1 {
		t.Errorf("images %d of %d", used, limit)
	}
	if _, limit := meter(t, r, "documents"); limit != -1 {
		t.Errorf("documents limit %d, want null", limit)
	}
	s.setLimits("acme", quota.Limits{quota.Images: quota.Unlimited, quota.Words: quota.Max(10)})
	expect(t, s.form("POST", "/api/v1/images", image...), 201)
	expect(t, s.form("POST", "/api/v1/documents", "name", "x", "prompt", "p"), 201)
	if _, limit := meter(t, s.get(app.UsagePath), "images"); limit != -1 {
		t.Errorf("own unlimited shows limit %d", limit)
	}
}

// 48 clients at once against a limit of 10 create exactly 10 records; the
// others get the quota's 429.
func TestQuotaExactUnderConcurrencyThroughTheAPI(t *testing.T) {
	const clients, limit = 48, 10
	s := newStack(t)
	s.setLimits("acme", quota.Limits{quota.Images: quota.Max(limit)})
	statuses := make(chan int, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			form := url.Values{"name": {fmt.Sprint("racer ", i)}, "description": {"d"}, "resolution": {"256x256"}}
			req, err := http.NewRequest("POST", s.url+"/api/v1/images", strings.NewReader(form.Encode()))
			if err != nil {
				statuses <- 0
				return
			}
			req.Header.Set("Authorization", "Bearer "+s.writeKey)
			req.Header.Set("Content-Type", formType)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			res.Body.Close()
			statuses <- res.StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for st := range statuses {
		count[st]++
	}
	if count[201] != limit || count[429] != clients-limit {
		t.Fatalf("statuses %v, want %d × 201 and %d × 429", count, limit, clients-limit)
	}
	if r := s.get("/api/v1/images?per_page=100"); num(r.meta()["total"]) != limit || len(r.list()) != limit {
		t.Errorf("%v images stored, want %d", r.meta()["total"], limit)
	}
	if used, _ := meter(t, s.get(app.UsagePath), "images"); used != limit {
		t.Errorf("%d counted, want %d", used, limit)
	}
}

// The usage is exact as the counts are, whatever fails between a create's
// steps: a counter write whose answer is lost is retried and counted once;
// a create whose record is never written is not counted, and its retry is
// counted once.
func TestQuotaExactUnderFaults(t *testing.T) {
	s, proxy, clk := outageStack(t, 8*time.Second)
	// Mid-month, so that moving the clock on below stays in one month.
	now := time.Now().UTC()
	clk.advance(time.Date(now.Year(), now.Month(), 15, 12, 0, 0, 0, time.UTC).Sub(now))
	s.setLimits("acme", quota.Limits{quota.Images: quota.Max(3)})
	image := []string{"name", "x", "description", "d", "resolution", "256x256"}
	expect(t, s.get(app.UsagePath), 200) // the key is now cached
	counterWrite := ddblocal.MatchOp("UpdateItem", `"next_id"`)
	used := func() int64 {
		t.Helper()
		n, _ := meter(t, s.get(app.UsagePath), "images")
		return n
	}

	proxy.Inject(counterWrite, ddblocal.LoseAnswer, 1)
	expect(t, s.form("POST", "/api/v1/images", image...), 201)
	if n := used(); n != 1 {
		t.Errorf("a counter write retried after its lost answer counted %d", n)
	}

	proxy.Inject(recordPutCall, ddblocal.FailCall, 3)
	expectUnavailable(t, s.form("POST", "/api/v1/images", image...))
	// Whatever the failed create left is settled by a later write of the
	// account once older than any request can be.
	clk.advance(time.Minute)
	expect(t, s.form("POST", "/api/v1/images", image...), 201)
	expect(t, s.form("POST", "/api/v1/images", image...), 201)
	if n, stored := used(), num(s.get("/api/v1/images").meta()["total"]); n != 3 || stored != 3 {
		t.Errorf("%d counted, %d stored; want 3 and 3", n, stored)
	}
	expect(t, s.form("POST", "/api/v1/images", image...), 429)
}

// With generation on: words count when a generation writes a document's
// text, past the limit included; the next document, and a regenerate, are
// refused. A regenerate counts one of its kind, is refused past the limit
// and changes nothing then, and one refused for another reason counts
// nothing.
func TestQuotaWithGeneration(t *testing.T) {
	g := newGenStack(t, genOptions{})
	g.setLimits("acme", quota.Limits{quota.Words: quota.Max(1), quota.Images: quota.Max(1), quota.Documents: quota.Max(10)})

	r := g.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine brews barista coffee at home")
	expect(t, r, 201)
	words := num(r.data()["words"])
	if genStatus(r.data()) != "done" || words <= 1 {
		t.Fatalf("generated %d words: %s", words, r.Raw)
	}
	// The create held 4,096 words; the tally gives back what the
	// generation did not use when it reads the write-back from the stream.
	g.tally.Drain()
	u := g.get(app.UsagePath)
	if used, _ := meter(t, u, "words"); used != words {
		t.Errorf("%d words counted, %d generated", used, words)
	}
	if used, _ := meter(t, u, "documents"); used != 1 {
		t.Errorf("%d documents counted", used)
	}
	path := "/api/v1/documents/" + fmt.Sprint(num(r.data()["id"]))
	before := g.get(path).Raw
	refused := g.form("POST", path+"/regenerate", "prompt", "Tea")
	expectQuota(t, refused, "words", 1, time.Now().Add(-time.Minute), time.Now())
	if after := g.get(path).Raw; after != before {
		t.Errorf("a refused regenerate changed the record:\n%s\n%s", before, after)
	}
	expect(t, g.form("POST", "/api/v1/documents", "name", "Next", "prompt", "p"), 429)

	// Generated by the generator function from the stream, the words
	// count the same.
	g.setLimits("acme", quota.Limits{quota.Words: quota.Unlimited})
	async := g.do(request{method: "POST", path: "/api/v1/documents", key: g.writeKey, contentType: formType,
		body: "name=Later&prompt=Tea+leaves+from+the+mountains", header: map[string]string{"Prefer": "respond-async"}})
	expect(t, async, 201)
	later := g.settled(t, "/api/v1/documents/"+fmt.Sprint(num(async.data()["id"])))
	if genStatus(later) != "done" {
		t.Fatalf("the async generation ended %s", genStatus(later))
	}
	// The tally settles the hold once it reads the record's write-back,
	// so the record can show done a moment before the count does.
	eventually(t, "the async generation's words counted", func() (bool, string) {
		used, _ := meter(t, g.get(app.UsagePath), "words")
		return used == words+num(later["words"]), fmt.Sprintf("%d words counted, %d and %d generated", used, words, num(later["words"]))
	})

	// Images: the create takes the one allowed, a regenerate is refused,
	// then counted once the limit allows it.
	r = g.form("POST", "/api/v1/images", "name", "Sunset", "description", "A red sky over the sea", "resolution", "256x256")
	expect(t, r, 201)
	img := "/api/v1/images/" + fmt.Sprint(num(r.data()["id"]))
	g.settled(t, img)
	expect(t, g.form("POST", img+"/regenerate"), 429)
	expect(t, g.form("POST", "/api/v1/images/999/regenerate"), 404)
	g.setLimits("acme", quota.Limits{quota.Images: quota.Max(2)})
	if r := g.form("POST", img+"/regenerate", "style", "anime"); r.Status != 200 && r.Status != 202 {
		t.Fatalf("regenerate within the limit: %d %s", r.Status, r.Raw)
	}
	if used, _ := meter(t, g.get(app.UsagePath), "images"); used != 2 {
		t.Errorf("%d images counted after a create and a regenerate, want 2", used)
	}
	g.settled(t, img)
}

// Reads are bounded per account and month: each resource counts the read
// units of its lists and gets against the reads limit, and once they have
// reached it lists and gets are 429 quota_exceeded (until the next month or
// a higher limit), while writes, HEAD of a list (which reads nothing) and
// the usage go on. Another account, and the other resource, are untouched.
func TestReadsQuota(t *testing.T) {
	const limit = 40
	var ahead atomic.Int64
	s := newStackWith(t, func(c *app.Config) {
		c.QuotaDefaults = quota.Limits{quota.Reads: quota.Max(limit)}
		c.ReadsBatch = 1 // counted at every read, so the test sees the limit exactly
		c.Clock = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	})
	for range 3 {
		createDocument(t, s, "Freestyle")
	}
	before := time.Now()
	var refused response
	reads := 0
	for ; reads < 1000; reads++ {
		r := s.get("/api/v1/documents?per_page=100")
		if r.Status != 200 {
			refused = r
			break
		}
	}
	after := time.Now()
	expectQuota(t, refused, "reads", limit, before, after)
	if reads == 0 {
		t.Fatal("the first list was refused")
	}
	expectQuota(t, s.get("/api/v1/documents/1"), "reads", limit, before, time.Now())
	expect(t, s.do(request{method: "HEAD", path: "/api/v1/documents", key: s.writeKey}), 200)
	createDocument(t, s, "Freestyle")
	expect(t, s.get("/api/v1/images"), 200)
	expect(t, s.do(request{method: "GET", path: "/api/v1/documents", key: s.otherKey}), 200)
	u := s.get(app.UsagePath)
	docs, _ := u.data()["reads"].(map[string]any)["documents"].(map[string]any)
	if num(docs["used"]) < limit || num(docs["limit"]) != limit {
		t.Errorf("usage of reads: %s", u.Raw)
	}
	// A higher limit of the account's own lets it read again once the
	// function looks again, a minute after it found the limit reached.
	s.setLimits("acme", quota.Limits{quota.Reads: quota.Unlimited})
	expectQuota(t, s.get("/api/v1/documents"), "reads", limit, before, time.Now())
	ahead.Store(int64(2 * time.Minute))
	expect(t, s.get("/api/v1/documents"), 200)
	t.Logf("%d lists before the limit; usage %s", reads, u.Raw)
}

// Counting reads costs no DynamoDB call per request: a function gathers an
// account's read units and adds them in one write per batch. Forty gets of
// a small record (one unit each) under a batch of ten are four writes, and
// under the default batch none.
func TestReadsCountedInBatches(t *testing.T) {
	for batch, writes := range map[float64]int{10: 4, 0: 0} {
		s, proxy := faultyStack(t, func(c *app.Config) {
			c.QuotaDefaults = quota.Limits{quota.Reads: quota.Max(1000)}
			c.ReadsBatch = batch
		})
		createDocument(t, s, "Small")
		before := len(proxy.Calls())
		for range 40 {
			expect(t, s.get("/api/v1/documents/1"), 200)
		}
		calls := proxy.Calls()[before:]
		counted := slices.DeleteFunc(slices.Clone(calls), func(r ddblocal.ProxiedCall) bool { return !r.Has("used_reads_") })
		if len(counted) != writes || len(calls) != 40+writes {
			t.Errorf("batch %v: %d calls for 40 gets, %d of them counting reads; want %d counting", batch, len(calls), len(counted), writes)
		}
		// The usage shows what is counted, and the batch it trails by:
		// the 40 units under a batch of ten, none under the default's.
		u := s.get(app.UsagePath)
		docs, _ := u.data()["reads"].(map[string]any)["documents"].(map[string]any)
		used, size := int64(40), int64(batch)
		if batch == 0 {
			used, size = 0, store.DefaultReadsBatch
		}
		if num(docs["used"]) != used || num(docs["batch"]) != size {
			t.Errorf("batch %v: usage of reads %v, want %d used in batches of %d", batch, docs, used, size)
		}
	}
}

// The words limit holds under concurrency: each create reserves the most
// words its generation can write (prompts.MaxAnswerTokens) in its counter
// write, under the limit, and the generator settles the reservation to the
// words written. Thirty creates at once against a limit of 600 words end
// at or under the limit plus one generation's words, where they used to
// pass all together and write thirteen times the limit.
func TestWordsLimitHoldsUnderConcurrentCreates(t *testing.T) {
	const limit = 600
	g := newGenStack(t, genOptions{})
	g.setLimits("acme", quota.Limits{quota.Words: quota.Max(limit)})
	created, refused, most := g.createsAtOnce(t, 30, func(i int) []string {
		return []string{"name", fmt.Sprint("Post ", i), "prompt", "Our new espresso machine brews barista coffee at home"}
	})
	eventually(t, "every generation settled", func() (bool, string) {
		used, _ := meter(t, g.get(app.UsagePath), "words")
		return used < prompts.MaxAnswerTokens, fmt.Sprintf("%d words counted", used)
	})
	used, _ := meter(t, g.get(app.UsagePath), "words")
	if created == 0 || refused == 0 || used > limit+most {
		t.Fatalf("%d created, %d refused, %d words counted: want at most %d + one generation (%d)", created, refused, used, limit, most)
	}
	t.Logf("%d created, %d refused, %d words counted (limit %d, most in one %d)", created, refused, used, limit, most)
}

// createsAtOnce sends n document creates at once, the ith with fields(i),
// and tells how many were created and refused by the quota, and the most
// words one of them has.
func (g *genStack) createsAtOnce(t *testing.T, n int, fields func(i int) []string) (created, refused int, most int64) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := g.form("POST", "/api/v1/documents", fields(i)...)
			mu.Lock()
			defer mu.Unlock()
			switch r.Status {
			case 201:
				created++
				most = max(most, num(r.data()["words"]))
			case 429:
				refused++
			default:
				t.Errorf("create: %d %s", r.Status, r.Raw)
			}
		})
	}
	wg.Wait()
	return created, refused, most
}
