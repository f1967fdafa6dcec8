package bedrockstandin_test

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"contentapi/shared/documents"
	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/prompts"
)

var briefs = []string{
	"Our new espresso machine brews barista-quality coffee at home in 30 seconds.",
	"Write a blog post about remote work for small teams, with tips.",
	"café",
	"Ein Fahrradladen in Berlin, der gebrauchte Räder repariert und verkauft.",
}

// The stand-in writes what each template's brief asks for, within its
// limits, so the local stack shows documents of the right form.
func TestWriteFollowsEveryBrief(t *testing.T) {
	numberedLine := regexp.MustCompile(`(?m)^\d+\. `)
	for _, tmpl := range prompts.Templates() {
		for i, prompt := range briefs {
			for _, temperature := range []float64{0, 0.5, 1} {
				name := fmt.Sprintf("%s/%d/%v", documents.Templates[tmpl.ID], i, temperature)
				text := bedrockstandin.Write(tmpl.System(), prompt, temperature)
				words := documents.Words(text)
				switch {
				case text == "" || text != strings.TrimSpace(text):
					t.Fatalf("%s: %q is empty or untrimmed", name, text)
				case tmpl.MaxChars > 0 && utf8.RuneCountInString(text) > tmpl.MaxChars:
					t.Fatalf("%s: %d characters past the limit of %d", name, utf8.RuneCountInString(text), tmpl.MaxChars)
				case tmpl.Words != nil && (words < tmpl.Words[0] || words > tmpl.Words[1]):
					t.Fatalf("%s: %d words, the brief asks for %v:\n%s", name, words, tmpl.Words, text)
				}
				items := -1
				switch tmpl.Shape {
				case "numbered":
					items = len(numberedLine.FindAllString(text, -1))
				case "list":
					items = strings.Count(text, "- ")
				case "hashtags":
					items = len(strings.Fields(text))
					for _, tag := range strings.Fields(text) {
						if !regexp.MustCompile(`^#[\pL\pN]+$`).MatchString(tag) {
							t.Fatalf("%s: %q is not a hashtag", name, tag)
						}
					}
				case "keywords":
					items = len(strings.Split(text, ", "))
				case "faq":
					items = strings.Count(text, "Q: ")
				case "thread":
					items = len(regexp.MustCompile(`(?m)^\d+/ `).FindAllString(text, -1))
					for _, post := range strings.Split(text, "\n\n") {
						if utf8.RuneCountInString(post) > 280 {
							t.Fatalf("%s: a post of %d characters", name, utf8.RuneCountInString(post))
						}
					}
				case "sections":
					for _, s := range tmpl.Sections {
						m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(s.Label) + `: (.*)$`).FindStringSubmatch(text)
						if m == nil {
							t.Fatalf("%s: no part %q in\n%s", name, s.Label, text)
						}
						if s.MaxChars > 0 && utf8.RuneCountInString(m[1]) > s.MaxChars {
							t.Fatalf("%s: part %q of %d characters, limit %d", name, s.Label, utf8.RuneCountInString(m[1]), s.MaxChars)
						}
					}
				}
				// A limited list may come out shorter, never longer.
				if items >= 0 && tmpl.Items > 0 && (items > tmpl.Items || items < tmpl.Items && tmpl.MaxChars == 0) {
					t.Fatalf("%s: %d items, the brief asks for %d:\n%s", name, items, tmpl.Items, text)
				}
			}
		}
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	tmpl, _ := prompts.Lookup(9)
	a := bedrockstandin.Write(tmpl.System(), briefs[0], 0.5)
	if b := bedrockstandin.Write(tmpl.System(), briefs[0], 0.5); a != b {
		t.Fatal("the same input wrote two texts")
	}
	if b := bedrockstandin.Write(tmpl.System(), briefs[0], 1); a == b {
		t.Fatal("another creativity wrote the same text")
	}
	if b := bedrockstandin.Write(tmpl.System(), briefs[1], 0.5); a == b {
		t.Fatal("another prompt wrote the same text")
	}
	if !strings.Contains(strings.ToLower(a), "espresso") {
		t.Fatalf("the text is not about its prompt:\n%s", a)
	}
}

func TestWriteKeepsAnyStatedLimit(t *testing.T) {
	text := bedrockstandin.Write("Write a slogan. Hard limit: the whole answer, spaces included, must fit in 42 characters.", briefs[0], 0.5)
	if n := utf8.RuneCountInString(text); n == 0 || n > 42 {
		t.Fatalf("%d characters: %q", n, text)
	}
}

func TestUnknownOperation(t *testing.T) {
	s, err := bedrockstandin.Start(bedrockstandin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(s.String(), "stand-in") || !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("banner %q at %s", s.String(), s.URL())
	}
	for _, path := range []string{"/", "/model/x/converse-stream", "/model//invoke"} {
		resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("X-Amzn-ErrorType") == "" {
			t.Fatalf("POST %s = %d %v", path, resp.StatusCode, resp.Header)
		}
	}
}

// Asked for a language it has phrases for, the stand-in writes its draft
// in it; the draft changes with the tone and the version, and takes up the
// first phrase of a brand voice's guide. Asked for none, it writes as it
// always has.
func TestWriteFollowsTheControls(t *testing.T) {
	const prompt = "Our new espresso machine brews barista-quality coffee at home"
	post, _ := prompts.Lookup(9)
	english := bedrockstandin.Write(post.System(), prompt, 0.5)
	system := func(c prompts.Controls) string {
		req, err := prompts.Document(9, prompt, 0.5, c)
		if err != nil {
			t.Fatal(err)
		}
		return req.System
	}
	if got := bedrockstandin.Write(system(prompts.Controls{Variant: 1, Variants: 1}), prompt, 0.5); got != english {
		t.Fatal("a brief without controls is written otherwise")
	}
	// A phrase of each language's bank that no other bank has.
	marks := map[string]string{"en": "", "es": "ñ|¿|á|é|í|ó|ú", "fr": "é|è|ê|ç|à", "de": "ä|ö|ü|ß", "ja": "。"}
	for lang, mark := range marks {
		text := bedrockstandin.Write(system(prompts.Controls{Language: lang}), prompt, 0.5)
		if mark != "" && !regexp.MustCompile(mark).MatchString(text) {
			t.Errorf("%s: the draft is not in it:\n%s", lang, text)
		}
		if lang != "en" && strings.Contains(text, "easier to get right") {
			t.Errorf("%s: an English phrase in the draft:\n%s", lang, text)
		}
	}
	if !slices.Contains(bedrockstandin.Languages(), "ja") || len(bedrockstandin.Languages()) < 5 {
		t.Errorf("languages %v", bedrockstandin.Languages())
	}
	drafts := map[string]bool{english: true}
	for _, c := range []prompts.Controls{{Tone: "witty"}, {Tone: "formal"},
		{Variant: 1, Variants: 3}, {Variant: 2, Variants: 3}, {Variant: 3, Variants: 3}} {
		text := bedrockstandin.Write(system(c), prompt, 0.5)
		if drafts[text] {
			t.Errorf("%+v: the same draft as another", c)
		}
		drafts[text] = true
	}
	guided := bedrockstandin.Write(system(prompts.Controls{Guide: "We say hello, never hi. Short sentences win."}), prompt, 0.5)
	if !strings.Contains(guided, "We say hello, never hi.") || strings.Contains(guided, "Short sentences win") {
		t.Errorf("the guide's first phrase is not taken up:\n%s", guided)
	}
}
