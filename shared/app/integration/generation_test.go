package integration_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"contentapi/client"
	"contentapi/shared/app"
	"contentapi/shared/documents"
	"contentapi/shared/generation"
	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/local/lambdalocal"
	localstack "contentapi/shared/local/stack"
	"contentapi/shared/prompts"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// genStack is the stack with generation on and its real parts: the
// Bedrock stand-in behind the real client, the local S3, and the tables'
// streams delivered to the generator function's entry point as the
// template's mappings say.
type genStack struct {
	*stack
	parts  *localstack.Generation
	s3     *s3.Client
	poller *lambdalocal.StreamPoller
	stream app.GeneratorEntry
}

type genOptions struct {
	// noStream leaves the streams undelivered: the test hands events to
	// the generator itself.
	noStream bool
	// slow is how long the stand-in holds a [standin:slow] answer.
	slow time.Duration
	// maxTries is the queue's tries of a generation that may pass.
	maxTries int
	// configure, when set, changes the configuration further.
	configure func(*app.Config)
}

func newGenStack(t *testing.T, o genOptions) *genStack {
	t.Helper()
	if o.slow == 0 {
		o.slow = 2 * time.Second
	}
	parts, err := localstack.StartGeneration(localstack.GenerationOptions{SlowDelay: o.slow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(parts.Close)
	s := newStackWith(t, func(cfg *app.Config) {
		cfg.Generation = parts.Config()
		// The model client retries twice, the queue o.maxTries times, with
		// backoffs kept short so that the tests stay quick.
		cfg.Generation.ModelAttempts, cfg.Generation.ModelBackoff = 2, time.Millisecond
		cfg.Generation.MaxTries = max(o.maxTries, 1)
		cfg.Generation.Backoff = func(int) time.Duration { return 10 * time.Millisecond }
		if o.configure != nil {
			o.configure(cfg)
		}
	})
	g := &genStack{stack: s, parts: parts}
	g.stream, err = s.app.GeneratorEntry()
	if err != nil {
		t.Fatal(err)
	}
	g.s3 = s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(parts.S3.URL()), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	if !o.noStream {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		g.poller, err = localstack.DeliverGenerator(ctx, s.env.Client, s.env.Endpoint, loadTemplate(t), s.env.Tables, g.stream,
			slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// eventually waits for cond, which the generator function makes true
// asynchronously; bounded, and failing with what was last seen.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen; last seen: %s", what, seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// state is a record's generation as its JSON shows it.
func state(d map[string]any) map[string]any {
	g, _ := d["generation"].(map[string]any)
	return g
}

// wantCost holds a record's generation.cost_usd to want, to the
// nano-dollar.
func wantCost(t *testing.T, d map[string]any, want generation.USD) {
	t.Helper()
	cost, ok := state(d)["cost_usd"].(float64)
	if got := fmt.Sprintf("%.9f", cost); !ok || got != want.Decimal() {
		t.Fatalf("cost_usd = %v, want %s", state(d)["cost_usd"], want.Decimal())
	}
}

// textCost is what in and out tokens of the stand-in's text model cost,
// at the prices of the model it stands in for.
func textCost(in, out int64) generation.USD {
	p, _ := bedrockstandin.Prices().Of(bedrockstandin.TextModel)
	return p.Text(in, out)
}

func genStatus(d map[string]any) string {
	s, _ := state(d)["status"].(string)
	return s
}

// settled waits until the record's generation has ended and returns it.
func (g *genStack) settled(t *testing.T, path string) map[string]any {
	t.Helper()
	var d map[string]any
	eventually(t, "the generation of "+path+" ending", func() (bool, string) {
		r := g.get(path)
		d = r.data()
		return r.Status == 200 && (genStatus(d) == "done" || genStatus(d) == "failed"), r.Raw
	})
	return d
}

// objects lists the bucket.
func (g *genStack) objects(t *testing.T) []string {
	t.Helper()
	out, err := g.s3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(localstack.PicturesBucket)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range out.Contents {
		names = append(names, aws.ToString(o.Key))
	}
	return names
}

func (g *genStack) tags(t *testing.T, name string) string {
	t.Helper()
	out, err := g.s3.GetObjectTagging(context.Background(), &s3.GetObjectTaggingInput{Bucket: aws.String(localstack.PicturesBucket), Key: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for _, tg := range out.TagSet {
		pairs = append(pairs, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
	}
	return strings.Join(pairs, "&")
}

// fetch GETs a picture's URL as a browser would, and decodes it.
func fetch(t *testing.T, url string) image.Image {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET %s: %d %s %.200s", url, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	img, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// A create waits for its text, generated within the request by the real
// client against the stand-in: one call, the brief's shape, the tokens and
// the model recorded.
func TestCreateDocumentGeneratesItsText(t *testing.T) {
	g := newGenStack(t, genOptions{})
	r := g.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine brews barista coffee at home",
		"template_id", "33", "creativity", "0.75")
	expect(t, r, 201)
	d := r.data()
	st := state(d)
	result, _ := d["result"].(string)
	if st["status"] != "done" || st["model"] != bedrockstandin.TextModel || st["error"] != nil || num(st["input_tokens"]) <= 0 ||
		num(st["output_tokens"]) <= 0 || !timestamp.MatchString(fmt.Sprint(st["finished_at"])) {
		t.Fatalf("generation = %v", st)
	}
	if result == "" || len([]rune(result)) > 280 || num(d["words"]) != int64(len(strings.Fields(result))) {
		t.Fatalf("a tweet of %d characters, %v words: %q", len([]rune(result)), d["words"], result)
	}
	if r.Header.Get("Preference-Applied") != "" || g.parts.Bedrock.Calls() != 1 {
		t.Fatalf("Preference-Applied %q, %d model calls", r.Header.Get("Preference-Applied"), g.parts.Bedrock.Calls())
	}
	// The one call cost its tokens at the model's price.
	wantCost(t, d, textCost(num(st["input_tokens"]), num(st["output_tokens"])))
	// What the answer showed is what is stored.
	if got := g.get(fmt.Sprintf("/api/v1/documents/%v", d["id"])).data(); got["result"] != result || genStatus(got) != "done" {
		t.Fatalf("stored: %v", got)
	}
}

// An image's picture is drawn, scaled to exactly its resolution, filtered,
// stored privately and linked with a presigned URL made afresh on every
// read; once its record holds it, the generator function keeps it (the
// lifecycle rule's tag is removed).
func TestCreateImageDrawsItsPicture(t *testing.T) {
	g := newGenStack(t, genOptions{})
	r := g.form("POST", "/api/v1/images", "name", "Cliff", "description", "A red lighthouse on a cliff at dusk",
		"resolution", "256x256", "medium", "watercolor", "filter", "grayscale")
	expect(t, r, 201)
	d := r.data()
	name, _ := d["result"].(string)
	if genStatus(d) != "done" || state(d)["model"] != bedrockstandin.ImageModel || !generation.IsPictureName(name) {
		t.Fatalf("image = %v", d)
	}
	wantCost(t, d, 40_000_000) // a picture at Stable Image Core's $0.04
	img := fetch(t, d["url"].(string))
	if b := img.Bounds(); b.Dx() != 256 || b.Dy() != 256 {
		t.Fatalf("picture is %dx%d", b.Dx(), b.Dy())
	}
	colours := map[[3]uint32]bool{}
	for y := 0; y < 256; y += 5 {
		for x := 0; x < 256; x += 5 {
			r, gr, b, _ := img.At(x, y).RGBA()
			if r != gr || gr != b {
				t.Fatalf("grayscale pixel (%d,%d) = %d %d %d", x, y, r, gr, b)
			}
			colours[[3]uint32{r, gr, b}] = true
		}
	}
	if len(colours) < 10 {
		t.Fatalf("a picture of %d shades is not a picture", len(colours))
	}
	// The URL is signed when the record is read, never stored: a read
	// gets one valid for the hour from then.
	path := fmt.Sprintf("/api/v1/images/%v", d["id"])
	before := time.Now().UTC().Add(-time.Second).Format("20060102T150405Z")
	again := g.get(path).data()
	u, _ := url.Parse(fmt.Sprint(again["url"]))
	if again["result"] != name || u.Query().Get("X-Amz-Date") < before || u.Query().Get("X-Amz-Expires") != "3600" {
		t.Fatalf("the URL was not made at the read: %v", again["url"])
	}
	out, err := g.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(g.env.Tables["ImagesTable"]), ConsistentRead: aws.Bool(true),
		Key: store.Item{"account": stringAV("acme"), "id": numberAV(num(d["id"]))},
	})
	if _, stored := out.Item["url"]; err != nil || stored {
		t.Fatalf("a URL is stored (%v)", err)
	}
	if objs := g.objects(t); len(objs) != 1 || objs[0] != name {
		t.Fatalf("bucket: %v", objs)
	}
	eventually(t, "the picture kept", func() (bool, string) {
		tags := g.tags(t, name)
		return tags == "", tags
	})
}

// Prefer: respond-async answers at once, pending; the generator function
// takes the record up from the stream and writes it back, once.
func TestRespondAsyncLeavesItToTheQueue(t *testing.T) {
	g := newGenStack(t, genOptions{})
	r := g.do(request{method: "POST", path: "/api/v1/documents", key: g.writeKey, contentType: "application/x-www-form-urlencoded",
		body: "name=Later&prompt=A+press+release+about+our+new+office", header: map[string]string{"Prefer": "respond-async"}})
	expect(t, r, 201)
	if genStatus(r.data()) != "pending" || r.data()["result"] != nil || r.Header.Get("Preference-Applied") != "respond-async" {
		t.Fatalf("answer: %s %v", r.Header.Get("Preference-Applied"), r.data())
	}
	d := g.settled(t, fmt.Sprintf("/api/v1/documents/%v", r.data()["id"]))
	if genStatus(d) != "done" || d["result"] == nil || g.parts.Bedrock.Calls() != 1 {
		t.Fatalf("after the queue: %v, %d calls", d, g.parts.Bedrock.Calls())
	}
}

// When its wait runs out, the request hands the generation over (pending
// under a new attempt) and answers with that; the generator function
// finishes it. The request's own attempt can no longer write.
func TestWaitRunningOutHandsOver(t *testing.T) {
	g := newGenStack(t, genOptions{slow: 3 * time.Second})
	r := g.do(request{method: "POST", path: "/api/v1/images", key: g.writeKey, contentType: "application/x-www-form-urlencoded",
		body: "name=Slow&description=A+slow+lighthouse+[standin:slow]&resolution=512x512", header: map[string]string{"Prefer": "wait=1"}})
	expect(t, r, 201)
	if r.Header.Get("Preference-Applied") != "wait=1" || genStatus(r.data()) != "pending" {
		t.Fatalf("answer: %q %v", r.Header.Get("Preference-Applied"), r.data())
	}
	d := g.settled(t, fmt.Sprintf("/api/v1/images/%v", r.data()["id"]))
	if genStatus(d) != "done" || !generation.IsPictureName(fmt.Sprint(d["result"])) {
		t.Fatalf("after the hand-over: %v", d)
	}
	eventually(t, "one picture in the bucket", func() (bool, string) {
		objs := g.objects(t)
		return len(objs) == 1 && objs[0] == d["result"], fmt.Sprint(objs)
	})
}

// Regenerate: new inputs validated as on create, 200 when it waited to the
// end and 202 when it did not, 409 while a generation is under way, and a
// document's result cannot be edited then either.
func TestRegenerate(t *testing.T) {
	g := newGenStack(t, genOptions{})
	d := g.form("POST", "/api/v1/documents", "name", "Doc", "prompt", "Coffee beans").data()
	path := fmt.Sprintf("/api/v1/documents/%v", d["id"])
	first := d["result"]

	// Another template moves the document there: written from that
	// template's brief, listed under it, and both templates' totals exact.
	moved := g.form("POST", path+"/regenerate", "prompt", "Tea", "template_id", "18")
	expect(t, moved, 200)
	md := moved.data()
	if num(md["template_id"]) != 18 || md["template"].(map[string]any)["name"] != "Headline" || md["result"] != underTemplate(t, 18, "Tea", 0.5) {
		t.Fatalf("moved to template 18: %v", md)
	}
	for template, want := range map[string]int64{"1": 0, "18": 1} {
		l := g.get("/api/v1/documents?template_id=" + template)
		if num(l.meta()["total"]) != want || int64(len(l.list())) != want {
			t.Fatalf("template %s: total %v, %d listed; want %d", template, l.meta()["total"], len(l.list()), want)
		}
	}
	// And back: a move again.
	r := g.form("POST", path+"/regenerate", "prompt", "Tea leaves from the mountains", "template_id", "1")
	expect(t, r, 200)
	nd := r.data()
	if genStatus(nd) != "done" || nd["prompt"] != "Tea leaves from the mountains" || num(nd["template_id"]) != 1 ||
		nd["result"] == first || r.Header.Get("ETag") == "" {
		t.Fatalf("regenerated: %v", nd)
	}
	for template, want := range map[string]int64{"1": 1, "18": 0} {
		l := g.get("/api/v1/documents?template_id=" + template)
		if num(l.meta()["total"]) != want || int64(len(l.list())) != want {
			t.Fatalf("template %s: total %v, %d listed; want %d", template, l.meta()["total"], len(l.list()), want)
		}
	}

	for _, bad := range [][]string{{"prompt", ""}, {"creativity", "0.3"}, {"template_id", "53"}, {"name", "Renamed"}, {"favorite", "1"}} {
		before := g.get(path).Raw
		r := g.form("POST", path+"/regenerate", bad...)
		if bad[1] == "" {
			// An empty field is not given: the current inputs again.
			expect(t, r, 200)
			continue
		}
		expect422(t, r, bad[0])
		if after := g.get(path).Raw; after != before {
			t.Fatalf("a refused regenerate changed the record:\n%s\n%s", before, after)
		}
	}

	r = g.do(request{method: "POST", path: path + "/regenerate", key: g.writeKey, header: map[string]string{"Prefer": "respond-async"}})
	expect(t, r, 202)
	if genStatus(r.data()) != "pending" || r.Header.Get("Preference-Applied") != "respond-async" {
		t.Fatalf("async regenerate: %v", r.data())
	}
	busy := g.do(request{method: "POST", path: path + "/regenerate", key: g.writeKey})
	edit := g.json("PUT", path, `{"result":"My own words"}`)
	settled := g.settled(t, path)
	if busy.Status == 409 {
		if ra := busy.Header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Errorf("409 without Retry-After")
		}
	} else if busy.Status != 200 {
		t.Fatalf("regenerate during a generation: %d %s", busy.Status, busy.Raw)
	}
	if edit.Status != 409 && edit.Status != 200 {
		t.Fatalf("edit during a generation: %d %s", edit.Status, edit.Raw)
	}
	if edit.Status == 409 && settled["result"] == "My own words" {
		t.Fatal("a refused edit was written")
	}
	// Once it has ended, the user's edit goes through.
	r = g.json("PUT", path, `{"result":"My own words"}`)
	expect(t, r, 200)
	if g.get("/api/v1/documents/999/regenerate").Status != 405 || g.form("POST", "/api/v1/documents/999/regenerate").Status != 404 {
		t.Fatal("regenerate of an unknown record")
	}
}

// A generation under way blocks a regenerate and an edit of the result,
// deterministically: the record is held pending by a queue that is not
// delivered.
func TestInFlightConflicts(t *testing.T) {
	g := newGenStack(t, genOptions{noStream: true})
	r := g.do(request{method: "POST", path: "/api/v1/documents", key: g.writeKey, contentType: "application/x-www-form-urlencoded",
		body: "name=Held&prompt=Coffee", header: map[string]string{"Prefer": "respond-async"}})
	path := fmt.Sprintf("/api/v1/documents/%v", r.data()["id"])
	for _, rq := range []request{
		{method: "POST", path: path + "/regenerate", key: g.writeKey},
		{method: "PUT", path: path, key: g.writeKey, contentType: "application/json", body: `{"result":"Mine"}`},
		{method: "PATCH", path: path, key: g.writeKey, contentType: "application/json", body: `{"result":"Mine","name":"X"}`},
	} {
		r := g.do(rq)
		expect(t, r, 409)
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 409 without Retry-After", rq.method, rq.path)
		}
	}
	// What does not touch the generated field goes through.
	expect(t, g.json("PUT", path, `{"name":"Renamed","favorite":true}`), 200)
	if d := g.get(path).data(); d["name"] != "Renamed" || d["result"] != nil || genStatus(d) != "pending" {
		t.Fatalf("after the rename: %v", d)
	}
}

// Concurrent regenerates of one record: exactly one starts a generation,
// the others get 409, and the model is called once.
func TestConcurrentRegenerates(t *testing.T) {
	// The regenerates ask for a slow answer, so the one that starts is
	// still under way when the others arrive, however loaded the machine:
	// with a quick one, a regenerate arriving after the first had ended
	// would rightly start a second.
	g := newGenStack(t, genOptions{slow: 5 * time.Second})
	d := g.form("POST", "/api/v1/documents", "name", "Doc", "prompt", "Coffee").data()
	path := fmt.Sprintf("/api/v1/documents/%v/regenerate", d["id"])
	calls := g.parts.Bedrock.Calls()
	const n = 6
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			statuses[i] = g.do(request{method: "POST", path: path, key: g.writeKey, contentType: "application/x-www-form-urlencoded",
				body: "prompt=Coffee+[standin:slow]", header: map[string]string{"Prefer": "respond-async"}}).Status
		})
	}
	wg.Wait()
	started := 0
	for _, s := range statuses {
		switch s {
		case 202:
			started++
		case 409:
		default:
			t.Fatalf("statuses %v", statuses)
		}
	}
	if started != 1 {
		t.Fatalf("%d regenerates started: %v", started, statuses)
	}
	g.settled(t, strings.TrimSuffix(path, "/regenerate"))
	if got := g.parts.Bedrock.Calls() - calls; got != 1 {
		t.Fatalf("%d model calls for one regenerate", got)
	}
}

// A record deleted while the generator draws its picture: the write-back
// loses, and the picture is deleted, so the bucket ends empty.
func TestDeleteDuringGeneration(t *testing.T) {
	g := newGenStack(t, genOptions{slow: 2 * time.Second})
	r := g.do(request{method: "POST", path: "/api/v1/images", key: g.writeKey, contentType: "application/x-www-form-urlencoded",
		body: "name=Gone&description=A+lighthouse+[standin:slow]&resolution=256x256", header: map[string]string{"Prefer": "respond-async"}})
	path := fmt.Sprintf("/api/v1/images/%v", r.data()["id"])
	eventually(t, "the generator claiming it", func() (bool, string) {
		d := g.get(path).data()
		return genStatus(d) == "running", fmt.Sprint(d)
	})
	expect(t, g.do(request{method: "DELETE", path: path, key: g.writeKey}), 200)
	eventually(t, "the model answering", func() (bool, string) {
		return g.parts.Bedrock.Calls() == 1, fmt.Sprint(g.parts.Bedrock.Calls())
	})
	// The picture is stored before the write-back, and deleted when it
	// loses: wait for the generator to have written and cleaned up.
	eventually(t, "an empty bucket", func() (bool, string) {
		objs := g.objects(t)
		return len(objs) == 0 && g.poller.Delivered() >= 1, fmt.Sprint(objs)
	})
	if g.get(path).Status != 404 {
		t.Fatal("the deleted record came back")
	}
}

// Deleting an image deletes its picture (the generator function, on the
// REMOVE), and regenerating it replaces the picture and deletes the old.
func TestPicturesFollowTheirRecord(t *testing.T) {
	g := newGenStack(t, genOptions{})
	d := g.form("POST", "/api/v1/images", "name", "Cliff", "description", "A lighthouse", "resolution", "256x256").data()
	path := fmt.Sprintf("/api/v1/images/%v", d["id"])
	first := d["result"].(string)
	r := g.form("POST", path+"/regenerate", "resolution", "512x512", "filter", "invert")
	expect(t, r, 200)
	second := r.data()["result"].(string)
	if second == first || r.data()["resolution"] != "512x512" {
		t.Fatalf("regenerated: %v", r.data())
	}
	if b := fetch(t, r.data()["url"].(string)).Bounds(); b.Dx() != 512 || b.Dy() != 512 {
		t.Fatalf("the new picture is %v", b)
	}
	eventually(t, "the old picture deleted", func() (bool, string) {
		objs := g.objects(t)
		return len(objs) == 1 && objs[0] == second, fmt.Sprint(objs)
	})
	expect(t, g.do(request{method: "DELETE", path: path, key: g.writeKey}), 200)
	eventually(t, "the picture deleted with its record", func() (bool, string) {
		objs := g.objects(t)
		return len(objs) == 0, fmt.Sprint(objs)
	})
}

// Failures end as the contract's codes: content filtering at once;
// throttling and a failing model after their tries through the queue. A
// throttle that passes is retried to success.
func TestGenerationFailures(t *testing.T) {
	g := newGenStack(t, genOptions{maxTries: 2})
	testCases := []struct {
		name, prompt string
		faults       []bedrockstandin.Fault
		status, code string
	}{
		{"content filtered", "Something [standin:filter]", nil, "failed", "content_filtered"},
		{"throttled past every try", "Busy [standin:throttle]", nil, "failed", "throttled"},
		{"a model that keeps failing", "Broken [standin:error]", nil, "failed", "model_unavailable"},
		// The request's call is throttled past the client's two tries and
		// hands over; the queue's try succeeds.
		{"throttled, then not", "Coffee", []bedrockstandin.Fault{bedrockstandin.Throttle, bedrockstandin.Throttle}, "done", ""},
		{"timed out by the model, then not", "Coffee", []bedrockstandin.Fault{bedrockstandin.ModelTimeout}, "done", ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			g.parts.Bedrock.Inject(tc.faults...)
			r := g.form("POST", "/api/v1/documents", "name", tc.name, "prompt", tc.prompt)
			expect(t, r, 201)
			d := g.settled(t, fmt.Sprintf("/api/v1/documents/%v", r.data()["id"]))
			st := state(d)
			code := ""
			if e, ok := st["error"].(map[string]any); ok {
				code, _ = e["code"].(string)
				if msg, _ := e["message"].(string); msg == "" || strings.Contains(msg, "Exception") || strings.Contains(msg, "standin") {
					t.Errorf("error message %q", msg)
				}
			}
			if st["status"] != tc.status || code != tc.code {
				t.Fatalf("generation = %v, want %s %s", st, tc.status, tc.code)
			}
			if tc.status == "done" && d["result"] == nil {
				t.Fatal("done without a result")
			}
		})
	}
}

// A stream event delivered twice, even at once, generates once, writes
// once and stores one picture: the second claim finds the attempt gone.
func TestDuplicateDeliveries(t *testing.T) {
	g := newGenStack(t, genOptions{noStream: true})
	r := g.do(request{method: "POST", path: "/api/v1/images", key: g.writeKey, contentType: "application/x-www-form-urlencoded",
		body: "name=Twice&description=A+lighthouse&resolution=256x256", header: map[string]string{"Prefer": "respond-async"}})
	id := num(r.data()["id"])
	out, err := g.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(g.env.Tables["ImagesTable"]), ConsistentRead: aws.Bool(true),
		Key: store.Item{"account": stringAV("acme"), "id": numberAV(id)},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := events.DynamoDBEventRecord{
		EventID: "1", EventName: "INSERT", EventSource: "aws:dynamodb",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + g.env.Tables["ImagesTable"] + "/stream/2026-11-21T00:00:00.000",
		Change:         events.DynamoDBStreamRecord{NewImage: streamImage(t, out.Item), SequenceNumber: "100"},
	}
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			resp, err := g.stream(context.Background(), ev)
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Errorf("delivery: %v %v", resp, err)
			}
		})
	}
	wg.Wait()
	// And once more after the first has written back.
	if resp, err := g.stream(context.Background(), ev); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("a late duplicate: %v %v", resp, err)
	}
	d := g.get(fmt.Sprintf("/api/v1/images/%d", id)).data()
	if genStatus(d) != "done" || g.parts.Bedrock.Calls() != 1 {
		t.Fatalf("%v after %d model calls", d, g.parts.Bedrock.Calls())
	}
	if objs := g.objects(t); len(objs) != 1 || objs[0] != d["result"] {
		t.Fatalf("bucket %v, record %v", objs, d["result"])
	}
}

// No record reads as pending or running for more than 15 minutes: past
// that it is failed with timeout, finished at its deadline, whatever is
// stored; it may be regenerated then, and no late write-back lands.
func TestFifteenMinuteRule(t *testing.T) {
	g := newGenStack(t, genOptions{noStream: true})
	r := g.do(request{method: "POST", path: "/api/v1/documents", key: g.writeKey, contentType: "application/x-www-form-urlencoded",
		body: "name=Old&prompt=Coffee", header: map[string]string{"Prefer": "respond-async"}})
	id := num(r.data()["id"])
	path := fmt.Sprintf("/api/v1/documents/%d", id)
	requested := time.Now().Add(-16 * time.Minute).UTC()
	_, err := g.env.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(g.env.Tables["DocumentsTable"]),
		Key:       store.Item{"account": stringAV("acme"), "id": numberAV(id)},
		// As if it had been asked for 16 minutes ago and a generator had
		// taken it up and died.
		UpdateExpression:          aws.String("SET #g.requested_at = :t, #g.#s = :running"),
		ExpressionAttributeNames:  map[string]string{"#g": "generation", "#s": "status"},
		ExpressionAttributeValues: store.Item{":t": stringAV(requested.Format(store.TimeLayout)), ":running": stringAV("running")},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := g.get(path).data()
	st := state(d)
	e, _ := st["error"].(map[string]any)
	if st["status"] != "failed" || e["code"] != "timeout" || st["finished_at"] != requested.Add(15*time.Minute).Format(store.TimeLayout) {
		t.Fatalf("generation = %v", st)
	}
	if l := g.get("/api/v1/documents").list(); genStatus(l[0].(map[string]any)) != "failed" {
		t.Fatalf("the list shows %v", l[0])
	}
	expect(t, g.json("PUT", path, `{"result":"Written by hand"}`), 200)
	r = g.form("POST", path+"/regenerate")
	expect(t, r, 200)
	if genStatus(r.data()) != "done" {
		t.Fatalf("regenerated: %v", r.data())
	}
}

// Without generation, records are plain data: generation is null and
// regenerate is not there.
func TestGenerationOff(t *testing.T) {
	s := newStack(t)
	for _, path := range []string{"/api/v1/images", "/api/v1/documents"} {
		fields := []string{"name", "N", "description", "d", "resolution", "256x256"}
		if path == "/api/v1/documents" {
			fields = []string{"name", "N", "prompt", "p"}
		}
		r := s.form("POST", path, fields...)
		expect(t, r, 201)
		if g, present := r.data()["generation"]; !present || g != nil || r.data()["result"] != nil {
			t.Fatalf("%s: %v", path, r.data())
		}
		expect(t, s.do(request{method: "POST", path: fmt.Sprintf("%s/%v/regenerate", path, r.data()["id"]), key: s.writeKey}), 404)
		if r := s.do(request{method: "POST", path: path, key: s.writeKey, contentType: "application/x-www-form-urlencoded",
			body: strings.Join([]string{fields[0] + "=" + fields[1]}, ""), header: map[string]string{"Prefer": "respond-async"}}); r.Header.Get("Preference-Applied") != "" {
			t.Fatal("Preference-Applied without generation")
		}
	}
}

func stringAV(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }

func numberAV(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: fmt.Sprint(n)}
}

// regenerateThroughTheClient drives regenerate, where the deployment
// generates, through the generated client and doer (which checks every
// exchange against the document).
func regenerateThroughTheClient(t *testing.T, doer *checkingDoer) {
	t.Helper()
	g := newGenStack(t, genOptions{noStream: true})
	c := newClient(t, g.stack, doer, g.writeKey)
	ctx := context.Background()
	img, err := c.CreateImageWithResponse(ctx, nil, client.ImageCreate{Name: "Cliff", Description: "A lighthouse", Resolution: client.N256x256})
	status(t, "create an image that generates", img.HTTPResponse, err, 201)
	if gen := img.JSON201.Data.Generation; gen == nil || gen.Status != client.Done || img.JSON201.Data.Url == nil {
		t.Fatalf("created: %s", img.Body)
	}
	again, err := c.RegenerateImageWithResponse(ctx, img.JSON201.Data.Id, nil, client.ImageRegenerate{Resolution: ptr(client.N512x512)})
	status(t, "regenerate an image", again.HTTPResponse, err, 200)
	if d := again.JSON200.Data; d.Resolution != client.N512x512 || d.Generation.Status != client.Done {
		t.Errorf("regenerated image: %s", again.Body)
	}
	doc, err := c.CreateDocumentWithResponse(ctx, nil, client.DocumentCreate{Name: "Launch", Prompt: "Announce it"})
	status(t, "create a document that generates", doc.HTTPResponse, err, 201)
	later, err := c.RegenerateDocumentWithResponse(ctx, doc.JSON201.Data.Id, &client.RegenerateDocumentParams{Prefer: ptr("respond-async")},
		client.DocumentRegenerate{Prompt: ptr("Announce it louder")})
	status(t, "regenerate a document, answered at once", later.HTTPResponse, err, 202)
	if d := later.JSON202.Data; d.Prompt != "Announce it louder" || d.Generation.Status != client.Pending {
		t.Errorf("regenerating document: %s", later.Body)
	}
	busy, err := c.RegenerateDocumentWithResponse(ctx, doc.JSON201.Data.Id, nil, client.DocumentRegenerate{})
	status(t, "regenerate while generating", busy.HTTPResponse, err, 409)
}

// The answers of generation, each state and each refusal, match the
// document.
func TestOpenAPIConformanceGeneration(t *testing.T) {
	g := newGenStack(t, genOptions{noStream: true, slow: time.Second})
	c := newConformance(t, g.stack)
	w := g.writeKey
	prefer := func(p string) map[string]string { return map[string]string{"Prefer": p} }

	img := c.form(201, "POST", "/api/v1/images", w, "name", "Cliff", "description", "A lighthouse", "resolution", "256x256", "filter", "sepia")
	c.call(201, request{method: "POST", path: "/api/v1/images", key: w, contentType: formType,
		body: "name=Later&description=d&resolution=512x512", header: prefer("respond-async")})
	c.call(201, request{method: "POST", path: "/api/v1/images", key: w, contentType: formType,
		body: "name=Slow&description=d+[standin:slow]&resolution=512x512", header: prefer("wait=1")})
	c.form(201, "POST", "/api/v1/images", w, "name", "Filtered", "description", "d [standin:filter]", "resolution", "256x256")
	c.get(200, "/api/v1/images", w)
	item := fmt.Sprintf("/api/v1/images/%v", img.data()["id"])
	c.get(200, item, w)
	c.call(200, request{method: "POST", path: item + "/regenerate", key: w, contentType: "application/json", body: `{"medium":"ink"}`})
	c.call(202, request{method: "POST", path: item + "/regenerate", key: w, header: prefer("respond-async")})
	c.call(409, request{method: "POST", path: item + "/regenerate", key: w})
	c.form(422, "POST", "/api/v1/images/1/regenerate", w, "resolution", "2048x2048")
	c.form(422, "POST", "/api/v1/images/1/regenerate", w, "name", "Not an input")
	c.form(404, "POST", "/api/v1/images/999/regenerate", w)
	c.form(403, "POST", item+"/regenerate", g.readKey)

	doc := c.form(201, "POST", "/api/v1/documents", w, "name", "Doc", "prompt", "Coffee")
	dItem := fmt.Sprintf("/api/v1/documents/%v", doc.data()["id"])
	c.call(202, request{method: "POST", path: dItem + "/regenerate", key: w, contentType: formType, body: "prompt=Tea", header: prefer("respond-async")})
	c.json(409, "PUT", dItem, w, `{"result":"Mine"}`)
	c.get(200, "/api/v1/documents?template_id=1", w)
	c.get(200, dItem, w)
	for _, op := range []string{"POST /api/v1/images/{id}/regenerate", "POST /api/v1/documents/{id}/regenerate"} {
		if !slices.ContainsFunc(c.statuses(op), func(s int) bool { return s < 300 }) {
			t.Errorf("%s never succeeded: %v", op, c.statuses(op))
		}
	}
}

// maxResult is the longest result a document holds, as it validates one.
func maxResult(t *testing.T) int {
	for _, f := range documents.Resource.Fields {
		if text, ok := f.Kind.(records.Text); ok && f.Name == "result" {
			return text.Max
		}
	}
	t.Fatal("documents have no text field result")
	return 0
}

// underTemplate is the text the stand-in model writes for prompt under a
// template's brief, as the service stores it.
func underTemplate(t *testing.T, template int64, prompt string, creativity float64) string {
	t.Helper()
	req, err := prompts.Document(template, prompt, creativity, prompts.Controls{})
	if err != nil {
		t.Fatal(err)
	}
	text, err := prompts.Result(template, bedrockstandin.Write(req.System, req.Prompt, creativity), maxResult(t))
	if err != nil {
		t.Fatal(err)
	}
	return text
}
