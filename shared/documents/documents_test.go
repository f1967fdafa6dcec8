package documents

import (
	"strconv"
	"strings"
	"testing"

	"contentapi/shared/httpapi"
	"contentapi/shared/prompts"
	"contentapi/shared/records"
)

func form(kv ...string) records.Input {
	in := records.Input{Values: map[string]records.InputValue{}}
	for i := 0; i < len(kv); i += 2 {
		in.Names = append(in.Names, kv[i])
		in.Values[kv[i]] = records.InputValue{Text: kv[i+1]}
	}
	return in
}

func create(kv ...string) (records.Values, error) {
	return Resource.ValidateCreate(form(append([]string{"name", "Doc", "prompt", "Write"}, kv...)...))
}

func only422(t *testing.T, err error, field string) string {
	t.Helper()
	e, ok := err.(*records.InvalidError)
	if !ok || len(e.Fields) != 1 || len(e.Fields[field]) == 0 {
		t.Fatalf("want a 422 on %s only, got %v", field, err)
	}
	return e.Fields[field][0]
}

func TestTemplates(t *testing.T) {
	if len(Templates) != 53 || Templates[1] != "Freestyle" || Templates[52] != "Feature section" {
		t.Fatalf("templates table: %d entries, 1=%q, 52=%q", len(Templates)-1, Templates[1], Templates[52])
	}
	for id := 1; id <= 52; id++ {
		v, err := create("template_id", strconv.Itoa(id))
		if err != nil {
			t.Fatalf("template %d: %v", id, err)
		}
		if v["template_id"] != int64(id) {
			t.Fatalf("template %d stored as %v", id, v["template_id"])
		}
		doc, err := Resource.Render.Render(stored{ID: 1, TemplateID: int64(id)}, records.View{})
		if err != nil {
			t.Fatal(err)
		}
		got := doc.(Document).Template
		if got.ID != int64(id) || got.Name != Templates[id] || got.Name == "" {
			t.Errorf("template %d renders as %+v", id, got)
		}
	}
	for _, bad := range []string{"0", "53", "-1", "1.5", "abc", "1e1", "99999999999999999999"} {
		if msg := only422(t, errOf(create("template_id", bad)), "template_id"); msg != "The selected template id is invalid." {
			t.Errorf("template_id=%s: %q", bad, msg)
		}
	}
}

func errOf(_ records.Values, err error) error { return err }

// stored is a document as stored, decoded as it is.
type stored Document

func (s stored) Decode(out any) error {
	*out.(*Document) = Document(s)
	return nil
}

func TestDefaults(t *testing.T) {
	v, err := create()
	if err != nil {
		t.Fatal(err)
	}
	if v["template_id"] != int64(1) || v["creativity"] != 0.5 || v["words"] != int64(0) {
		t.Fatalf("defaults: %v", v)
	}
	if _, ok := v["result"]; ok {
		t.Fatalf("result is not a create field: %v", v)
	}
}

func TestCreativitySpellings(t *testing.T) {
	for spelling, want := range map[string]float64{
		"0": 0, "0.0": 0, "0.25": 0.25, ".25": 0.25, "0.5": 0.5, ".5": 0.5, "0.50": 0.5,
		"0.75": 0.75, "1": 1, "1.0": 1, "1.00": 1, "+1": 1,
	} {
		v, err := create("creativity", spelling)
		if err != nil || v["creativity"] != want {
			t.Errorf("creativity=%s: %v %v", spelling, v["creativity"], err)
		}
	}
	// A JSON number counts by its value, however written.
	for text, want := range map[string]float64{"0.75": 0.75, "5e-1": 0.5, "7.5E-1": 0.75, "-0": 0, "1.000": 1} {
		in := form("name", "n", "prompt", "p", "creativity", "")
		in.Values["creativity"] = records.InputValue{Text: text, Type: records.InputNumber}
		if v, err := Resource.ValidateCreate(in); err != nil || v["creativity"] != want {
			t.Errorf("JSON number %s: %v %v", text, v, err)
		}
	}
	// Text takes plain decimals only: an exponent would make the spellings
	// of a value more than a pattern can say.
	for _, bad := range []string{"0.3", "2", "1.01", "abc", "0x1p-1", "NaN", "Inf", "1,0", "true", "5e-1", "."} {
		only422(t, errOf(create("creativity", bad)), "creativity")
	}
}

func TestUpdateResultAndWords(t *testing.T) {
	v, err := Resource.ValidateUpdate(form("result", "  one two\tthree\nfour  "))
	if err != nil {
		t.Fatal(err)
	}
	if v["result"] != "one two\tthree\nfour" || v["words"] != int64(4) {
		t.Fatalf("result/words: %v", v)
	}
	if _, err := Resource.ValidateUpdate(form("result", strings.Repeat("ü", 20480))); err != nil {
		t.Fatalf("20480 characters: %v", err)
	}
	if msg := only422(t, errOf(Resource.ValidateUpdate(form("result", strings.Repeat("a", 20481)))), "result"); msg != "The result field must not be greater than 20480 characters." {
		t.Errorf("20481: %q", msg)
	}
	for _, field := range []string{"prompt", "creativity", "template_id", "words"} {
		only422(t, errOf(Resource.ValidateUpdate(form(field, "1"))), field)
	}
	v, err = Resource.ValidateUpdate(form("favorite", "true"))
	if err != nil || v["favorite"] != true {
		t.Fatalf("favorite: %v %v", v, err)
	}
	if _, has := v["words"]; has {
		t.Fatalf("words must only change with result: %v", v)
	}
	if msg := only422(t, errOf(Resource.ValidateUpdate(form())), "name"); msg != "The name field is required when none of result / favorite are present." {
		t.Errorf("empty update: %q", msg)
	}
}

func TestWords(t *testing.T) {
	for s, want := range map[string]int{"": 0, "one": 1, "  a  b ": 2, "a\nb\tc": 3, "日本語 テキスト": 7, "I love 東京!": 4, "ひらがなとカタカナ": 9,
		// Thai: ภาษา ไทย เป็น ภาษา ที่ สวยงาม, six words of 21 letters
		// (ป็ and ที่ are one letter each with their marks).
		"ภาษาไทยเป็นภาษาที่สวยงาม": 7, "ภาษาไทยเป็นภาษาที่สวยงาม!": 7, "สวัสดี ครับ": 3, "iPhone รุ่นใหม่": 3,
		"ສະບາຍດີ": 2, "ភាសាខ្មែរ": 2, "မြန်မာစာ": 2} {
		if got := Words(s); got != want {
			t.Errorf("Words(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestParseList(t *testing.T) {
	parse := func(raw string) (records.ListQuery, error) {
		q, err := httpapi.ParseQueryString(raw)
		if err != nil {
			t.Fatal(err)
		}
		return Resource.ParseList(q, records.Cursors{})
	}
	lq, err := parse("")
	if err != nil || lq.Scope != 1 || lq.SearchBy != "name" {
		t.Fatalf("default template filter: %+v %v", lq, err)
	}
	lq, err = parse("template_id=52&search_by=result&search=Caf%C3%A9&favorite=0")
	if err != nil || lq.Scope != 52 || lq.SearchBy != "result" || lq.Search != "cafe" || len(lq.Filters) != 1 || lq.Filters[0].Value != false {
		t.Fatalf("parsed: %+v %v", lq, err)
	}
	// Every template at once, spelled exactly.
	lq, err = parse("template_id=all&sort_by=name")
	if err != nil || !lq.AllScopes || lq.SortBy != "name" {
		t.Fatalf("template_id=all: %+v %v", lq, err)
	}
	if lq, err = parse("template_id=9"); err != nil || lq.AllScopes {
		t.Fatalf("template_id=9: %+v %v", lq, err)
	}
	for raw, field := range map[string]string{"template_id=53": "template_id", "template_id=x": "template_id", "search_by=prompt": "search_by", "style=anime&favorite=2": "favorite",
		"template_id=ALL": "template_id", "template_id=%20all": "template_id", "template_id=all&template_id=all": "template_id"} {
		_, err := parse(raw)
		only422(t, err, field)
	}
}

// Every template has a brief, and none allows an answer longer than a
// result holds (the briefs are data: shared/prompts/templates.yaml).
func TestEveryTemplatesBriefFitsAResult(t *testing.T) {
	briefs := prompts.Templates()
	if len(briefs) != len(Templates)-1 {
		t.Fatalf("%d briefs for %d templates", len(briefs), len(Templates)-1)
	}
	for _, b := range briefs {
		if b.MaxChars > maxResult {
			t.Errorf("template %d allows %d characters, more than a result holds (%d)", b.ID, b.MaxChars, maxResult)
		}
	}
}
