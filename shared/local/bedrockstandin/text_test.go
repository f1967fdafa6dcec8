package bedrockstandin_test

import (
	"fmt"
	"net/http"
	"regexp"
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
