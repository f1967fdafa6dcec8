package integration_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/quota"
	"contentapi/shared/voices"
)

// voice creates a voice of account acme and returns it.
func (s *stack) voice(t *testing.T, fields ...string) map[string]any {
	t.Helper()
	r := s.form("POST", "/api/v1/voices", fields...)
	expect(t, r, 201)
	return r.data()
}

// A voice is a resource as documents are: created, read, listed, updated
// (If-Match held), deleted, its fields checked, another account's not
// found, a create with an Idempotency-Key replayed.
func TestVoices(t *testing.T) {
	s := newStack(t)
	r := s.do(request{method: "POST", path: "/api/v1/voices", key: s.writeKey, contentType: formType,
		body:   "name=Barista&guide=Warm+and+short.+Never+say+cheap.&language=FR&tone=witty",
		header: map[string]string{"Idempotency-Key": "voice-1"}})
	expect(t, r, 201)
	v := r.data()
	path := fmt.Sprintf("/api/v1/voices/%v", v["id"])
	if v["name"] != "Barista" || v["guide"] != "Warm and short. Never say cheap." || v["language"] != "fr" || v["tone"] != "witty" ||
		r.Header.Get("Location") == "" || r.Header.Get("ETag") != `"1.1"` {
		t.Fatalf("created %v %v", r.Header, v)
	}
	again := s.do(request{method: "POST", path: "/api/v1/voices", key: s.writeKey, contentType: formType,
		body:   "name=Barista&guide=Warm+and+short.+Never+say+cheap.&language=FR&tone=witty",
		header: map[string]string{"Idempotency-Key": "voice-1"}})
	if again.Header.Get("Idempotent-Replayed") != "true" || again.Raw != r.Raw {
		t.Fatalf("replay: %v %s", again.Header, again.Raw)
	}
	if l := s.get("/api/v1/voices"); num(l.meta()["total"]) != 1 || len(l.list()) != 1 {
		t.Fatalf("list: %s", l.Raw)
	}
	if got := s.get(path); got.Status != 200 || got.data()["guide"] != v["guide"] {
		t.Fatalf("read: %s", got.Raw)
	}
	for _, other := range []request{
		{method: "GET", path: path, key: s.otherKey},
		{method: "PUT", path: path, key: s.otherKey, contentType: formType, body: "name=Mine"},
		{method: "DELETE", path: path, key: s.otherKey},
	} {
		expect(t, s.do(other), 404)
	}
	if l := s.do(request{method: "GET", path: "/api/v1/voices", key: s.otherKey}); num(l.meta()["total"]) != 0 {
		t.Fatalf("another account lists %s", l.Raw)
	}
	stale := s.do(request{method: "PUT", path: path, key: s.writeKey, contentType: formType, body: "name=Old",
		header: map[string]string{"If-Match": `"1.7"`}})
	expect(t, stale, 412)
	up := s.do(request{method: "PUT", path: path, key: s.writeKey, contentType: formType, body: "guide=Bold.&tone=confident",
		header: map[string]string{"If-Match": `"1.1"`}})
	expect(t, up, 200)
	if u := up.data(); u["guide"] != "Bold." || u["tone"] != "confident" || u["name"] != "Barista" || u["language"] != "fr" {
		t.Fatalf("updated %v", u)
	}
	for _, bad := range [][2]string{{"name", strings.Repeat("n", 129)}, {"guide", strings.Repeat("g", voices.MaxGuide+1)},
		{"language", "en-US"}, {"tone", "angry"}} {
		expect422(t, s.form("POST", "/api/v1/voices", "name", "Bad", "guide", "Short.", bad[0], bad[1]), bad[0])
	}
	expect422(t, s.form("POST", "/api/v1/voices", "name", "No guide"), "guide")
	expect(t, s.do(request{method: "DELETE", path: path, key: s.writeKey}), 200)
	expect(t, s.get(path), 404)
	if l := s.get("/api/v1/voices"); len(l.list()) != 0 {
		t.Fatalf("after the delete: %s", l.Raw)
	}
}

// An account holds at most 50 voices: the 51st is 422 naming name and
// creates nothing; once one is deleted (and the tally has taken it off),
// another may be created.
func TestVoicesAreCapped(t *testing.T) {
	s := newStack(t)
	var first map[string]any
	for i := range voices.MaxPerAccount {
		v := s.voice(t, "name", fmt.Sprintf("Voice %d", i), "guide", "Plain words.")
		if i == 0 {
			first = v
		}
	}
	expect422(t, s.form("POST", "/api/v1/voices", "name", "One too many", "guide", "Plain words."), "name")
	if l := s.get("/api/v1/voices?per_page=100"); num(l.meta()["total"]) != voices.MaxPerAccount || len(l.list()) != voices.MaxPerAccount {
		t.Fatalf("after the refused create: total %v, %d listed", l.meta()["total"], len(l.list()))
	}
	// Another account has its own 50.
	expect(t, s.do(request{method: "POST", path: "/api/v1/voices", key: s.otherKey, contentType: formType, body: "name=Theirs&guide=Terse."}), 201)
	expect(t, s.do(request{method: "DELETE", path: fmt.Sprintf("/api/v1/voices/%v", first["id"]), key: s.writeKey}), 200)
	s.tally.Drain()
	s.voice(t, "name", "In its place", "guide", "Plain words.")
}

// Creates racing for the last places of the cap: exactly as many succeed
// as there are places, the rest are 422 naming name, and the account ends
// with 50 voices, never more.
func TestVoicesCapHoldsUnderRacingCreates(t *testing.T) {
	s := newStack(t)
	const places, racing = 2, 6
	for i := range voices.MaxPerAccount - places {
		s.voice(t, "name", fmt.Sprintf("Voice %d", i), "guide", "Plain words.")
	}
	answers := make([]response, racing)
	var wg sync.WaitGroup
	for i := range racing {
		wg.Go(func() {
			answers[i] = s.form("POST", "/api/v1/voices", "name", fmt.Sprintf("Racer %d", i), "guide", "Plain words.")
		})
	}
	wg.Wait()
	created := 0
	for _, a := range answers {
		switch a.Status {
		case 201:
			created++
		default:
			expect422(t, a, "name")
		}
	}
	if created != places {
		t.Fatalf("%d of %d racing creates made a voice, with %d places left", created, racing, places)
	}
	if l := s.get("/api/v1/voices?per_page=100"); num(l.meta()["total"]) != voices.MaxPerAccount || len(l.list()) != voices.MaxPerAccount {
		t.Fatalf("after the race: total %v, %d listed", l.meta()["total"], len(l.list()))
	}
}

// guideAsked reports whether a text call's brief quotes guide as its style
// guide.
func guideAsked(r bedrockstandin.Request, guide string) bool {
	return strings.Contains(r.System, "<style_guide>\n"+guide+"\n</style_guide>")
}

// A document written in a voice: the record shows the voice and takes its
// language and tone where it gives none of its own; the model is given the
// guide as a style guide and the language and tone; the stand-in's draft
// takes up the guide's first phrase. The list filters by voice, and by
// language as the documents show it.
func TestDocumentsInAVoice(t *testing.T) {
	g := newGenStack(t, genOptions{})
	v := g.voice(t, "name", "Barista", "guide", "Say brew-tiful often. Keep it short.", "language", "fr", "tone", "witty")
	d := g.form("POST", "/api/v1/documents", "name", "Launch", "prompt", "Our new espresso machine", "voice_id", fmt.Sprint(v["id"])).data()
	voice, _ := d["voice"].(map[string]any)
	if genStatus(d) != "done" || num(d["voice_id"]) != num(v["id"]) || voice["name"] != "Barista" || num(voice["id"]) != num(v["id"]) ||
		d["language"] != "fr" || d["tone"] != "witty" || !strings.Contains(d["result"].(string), "Say brew-tiful often.") {
		t.Fatalf("document = %v", d)
	}
	calls := g.parts.Bedrock.Requests()
	if len(calls) != 1 || !guideAsked(calls[0], "Say brew-tiful often. Keep it short.") ||
		!strings.Contains(calls[0].System, "in French") || !strings.Contains(calls[0].System, "Tone: ") {
		t.Fatalf("asked %+v", calls)
	}
	own := g.form("POST", "/api/v1/documents", "name", "Own", "prompt", "Coffee", "voice_id", fmt.Sprint(v["id"]),
		"language", "de", "tone", "formal").data()
	if own["language"] != "de" || own["tone"] != "formal" || !strings.Contains(g.parts.Bedrock.Requests()[1].System, "in German") {
		t.Fatalf("own controls: %v", own)
	}
	plain := g.form("POST", "/api/v1/documents", "name", "Plain", "prompt", "Coffee").data()
	if plain["voice"] != nil || plain["voice_id"] != nil || plain["language"] != nil || guideAsked(g.parts.Bedrock.Requests()[2], "Say brew-tiful often. Keep it short.") {
		t.Fatalf("without a voice: %v", plain)
	}
	byVoice := g.get(fmt.Sprintf("/api/v1/documents?voice_id=%v", v["id"]))
	byLanguage := g.get("/api/v1/documents?language=fr")
	if num(byVoice.meta()["total"]) != 2 || num(byLanguage.meta()["total"]) != 1 || byLanguage.list()[0].(map[string]any)["id"] != d["id"] {
		t.Fatalf("voice_id: %s\nlanguage=fr: %s", byVoice.Raw, byLanguage.Raw)
	}
	expect422(t, g.get("/api/v1/documents?voice_id=x"), "voice_id")
}

// A voice_id the account does not have (another account's, a deleted one,
// one never made) is 422 naming voice_id, on create and regenerate, and
// nothing is created, changed or counted.
func TestAVoiceOfNoneIsRefused(t *testing.T) {
	g := newGenStack(t, genOptions{})
	theirs := g.do(request{method: "POST", path: "/api/v1/voices", key: g.otherKey, contentType: formType, body: "name=Theirs&guide=Terse."})
	expect(t, theirs, 201)
	gone := g.voice(t, "name", "Gone", "guide", "Terse.")
	expect(t, g.do(request{method: "DELETE", path: fmt.Sprintf("/api/v1/voices/%v", gone["id"]), key: g.writeKey}), 200)
	d := g.form("POST", "/api/v1/documents", "name", "Doc", "prompt", "Coffee").data()
	for _, id := range []any{theirs.data()["id"], gone["id"], 999} {
		expect422(t, g.form("POST", "/api/v1/documents", "name", "Doc", "prompt", "Coffee", "voice_id", fmt.Sprint(id)), "voice_id")
		expect422(t, g.form("POST", fmt.Sprintf("/api/v1/documents/%v/regenerate", d["id"]), "voice_id", fmt.Sprint(id)), "voice_id")
	}
	if l := g.get("/api/v1/documents"); num(l.meta()["total"]) != 1 || g.parts.Bedrock.Calls() != 1 {
		t.Fatalf("total %v, %d model calls", l.meta()["total"], g.parts.Bedrock.Calls())
	}
	if u := g.get("/api/v1/usage").data(); num(u["documents"].(map[string]any)["used"]) != 1 {
		t.Fatalf("usage %v", u)
	}
	if now := g.get(fmt.Sprintf("/api/v1/documents/%v", d["id"])).data(); now["updated_at"] != d["updated_at"] {
		t.Fatalf("the refused regenerates changed the document: %v", now)
	}
}

// A generation reads the voice as it is when it starts: a document
// created while its generation waits for the queue is written in the
// guide, name and defaults the voice has when the generator takes it up.
func TestAGenerationReadsTheVoiceWhenItStarts(t *testing.T) {
	g := newGenStack(t, genOptions{noStream: true})
	v := g.voice(t, "name", "Before", "guide", "Old rules.", "language", "es")
	path, id := g.pendingDocumentWith(t, fmt.Sprintf("name=Later&voice_id=%v", v["id"]))
	if d := g.get(path).data(); d["language"] != "es" || d["voice"].(map[string]any)["name"] != "Before" {
		t.Fatalf("pending: %v", d)
	}
	expect(t, g.form("PUT", fmt.Sprintf("/api/v1/voices/%v", v["id"]), "name", "After", "guide", "New rules.", "language", "ja"), 200)
	g.deliverPending(t, id)
	d := g.settled(t, path)
	calls := g.parts.Bedrock.Requests()
	if genStatus(d) != "done" || len(calls) != 1 || !guideAsked(calls[0], "New rules.") || !strings.Contains(calls[0].System, "in Japanese") ||
		d["language"] != "ja" || d["voice"].(map[string]any)["name"] != "After" {
		t.Fatalf("generated %v, asked %+v", d, calls)
	}
}

// Deleting a voice leaves its documents readable, their voice keeping its
// name; a regenerate of one without a new voice_id uses no voice, and its
// voice becomes null; with another voice_id it takes that voice.
func TestADeletedVoiceLeavesItsDocuments(t *testing.T) {
	g := newGenStack(t, genOptions{})
	v := g.voice(t, "name", "Retired", "guide", "Old house style.", "tone", "formal")
	d := g.form("POST", "/api/v1/documents", "name", "Doc", "prompt", "Coffee", "voice_id", fmt.Sprint(v["id"])).data()
	path := fmt.Sprintf("/api/v1/documents/%v", d["id"])
	expect(t, g.do(request{method: "DELETE", path: fmt.Sprintf("/api/v1/voices/%v", v["id"]), key: g.writeKey}), 200)
	kept := g.get(path)
	expect(t, kept, 200)
	if voice, _ := kept.data()["voice"].(map[string]any); voice["name"] != "Retired" || kept.data()["tone"] != "formal" {
		t.Fatalf("after the voice's delete: %v", kept.data())
	}
	re := g.form("POST", path+"/regenerate")
	expect(t, re, 200)
	if r := re.data(); r["voice"] != nil || r["voice_id"] != nil || r["tone"] != nil || genStatus(r) != "done" {
		t.Fatalf("regenerated %v", r)
	}
	calls := g.parts.Bedrock.Requests()
	if last := calls[len(calls)-1]; strings.Contains(last.System, "<style_guide>") || strings.Contains(last.System, "Tone: ") {
		t.Fatalf("a regenerate without the deleted voice asked %q", last.System)
	}
	next := g.voice(t, "name", "Next", "guide", "New house style.")
	re = g.form("POST", path+"/regenerate", "voice_id", fmt.Sprint(next["id"]))
	expect(t, re, 200)
	calls = g.parts.Bedrock.Requests()
	if voice, _ := re.data()["voice"].(map[string]any); voice["name"] != "Next" || !guideAsked(calls[len(calls)-1], "New house style.") {
		t.Fatalf("regenerated in another voice: %v", re.data())
	}
	if got := texts(t, re.data()); !slices.Equal(got, []string{re.data()["result"].(string)}) {
		t.Fatalf("results %q", got)
	}
}

// Reading voices counts against a tenth of the deployment's default reads
// limit (app.Resources): a voice list reads a few units, and the key's
// worst day stays bounded with a third resource. /usage shows that limit,
// and the documents keep the whole.
func TestVoicesReadATenthOfTheDefaultReads(t *testing.T) {
	s := newStackWith(t, func(c *app.Config) {
		c.QuotaDefaults = quota.Limits{quota.Reads: quota.Max(40)}
		c.ReadsBatch = 1
	})
	s.voice(t, "name", "House", "guide", "Short sentences, no jargon, warm.")
	u := s.get(app.UsagePath)
	reads, _ := u.data()["reads"].(map[string]any)
	voicesReads, _ := reads["voices"].(map[string]any)
	documentsReads, _ := reads["documents"].(map[string]any)
	if num(voicesReads["limit"]) != 4 || num(documentsReads["limit"]) != 40 {
		t.Fatalf("reads limits: voices %v, documents %v; want 4 and 40: %s", voicesReads["limit"], documentsReads["limit"], u.Raw)
	}
	before := time.Now()
	for range 100 {
		if r := s.get("/api/v1/voices"); r.Status != 200 {
			expectQuota(t, r, "reads", 4, before, time.Now())
			expect(t, s.get("/api/v1/documents"), 200)
			return
		}
	}
	t.Fatalf("100 voice lists passed a limit of 4 read units: %s", s.get(app.UsagePath).Raw)
}
