package prompts_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"contentapi/shared/documents"
	"contentapi/shared/generation"
	"contentapi/shared/images"
	"contentapi/shared/prompts"
)

func TestEveryTemplateHasItsOwnBrief(t *testing.T) {
	all := prompts.Templates()
	if len(all) != len(documents.Templates)-1 {
		t.Fatalf("%d briefs for %d templates", len(all), len(documents.Templates)-1)
	}
	seen := map[string]int64{}
	for id := int64(1); id < int64(len(documents.Templates)); id++ {
		tmpl, ok := prompts.Lookup(id)
		if !ok || tmpl.ID != id {
			t.Fatalf("Lookup(%d) = %+v, %v", id, tmpl, ok)
		}
		if other, dup := seen[tmpl.Instruction]; dup {
			t.Errorf("templates %d and %d share one instruction", other, id)
		}
		seen[tmpl.Instruction] = id
		sys := tmpl.System()
		if !strings.Contains(sys, strings.TrimSpace(tmpl.Instruction)) {
			t.Errorf("template %d: the system prompt leaves out the instruction", id)
		}
		if tmpl.MaxChars > 0 && !strings.Contains(sys, fmt.Sprintf("fit in %d characters", tmpl.MaxChars)) {
			t.Errorf("template %d: the system prompt does not state its %d-character limit", id, tmpl.MaxChars)
		}
		for _, s := range tmpl.Sections {
			if !strings.Contains(sys, "- "+s.Label) {
				t.Errorf("template %d: the system prompt does not name part %q", id, s.Label)
			}
		}
		if n := tmpl.MaxTokens(); n < 64 || n > 4096 {
			t.Errorf("template %d: MaxTokens %d", id, n)
		}
	}
	for _, id := range []int64{0, -1, int64(len(documents.Templates))} {
		if _, ok := prompts.Lookup(id); ok {
			t.Errorf("Lookup(%d) found a template", id)
		}
	}
}

// The briefs a copywriter would check first.
func TestBriefsKeepTheirFormats(t *testing.T) {
	testCases := []struct {
		id       int64
		shape    string
		maxChars int
		mentions []string
	}{
		{17, "hashtags", 300, []string{"#", "Give 12 hashtags"}},
		{20, "line", 160, []string{"meta description"}},
		{21, "keywords", 255, []string{"commas"}},
		{33, "line", 280, []string{"tweet"}},
		{34, "thread", 0, []string{`"1/"`, "280 characters", "Write 6 posts"}},
		{16, "faq", 0, []string{`"Q: "`, `"A: "`}},
		{48, "sections", 0, []string{"Headline 1 (at most 30 characters)", "Description 2 (at most 90 characters)"}},
		{49, "sections", 0, []string{"Primary text (at most 125 characters)"}},
		{38, "keywords", 500, []string{"YouTube"}},
		{24, "sections", 0, []string{"- Pain", "- Agitate", "- Solution"}},
	}
	for _, tc := range testCases {
		t.Run(documents.Templates[tc.id], func(t *testing.T) {
			tmpl, _ := prompts.Lookup(tc.id)
			if tmpl.Shape != tc.shape || tmpl.MaxChars != tc.maxChars {
				t.Fatalf("shape %q, max_chars %d; want %q, %d", tmpl.Shape, tmpl.MaxChars, tc.shape, tc.maxChars)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(tmpl.System(), m) {
					t.Errorf("the brief does not say %q:\n%s", m, tmpl.System())
				}
			}
		})
	}
}

func TestDocument(t *testing.T) {
	for _, creativity := range []float64{0, 0.25, 0.5, 0.75, 1} {
		req, err := prompts.Document(33, "Our new espresso machine", creativity, prompts.Controls{})
		if err != nil {
			t.Fatal(err)
		}
		if req.Temperature != float32(creativity) {
			t.Errorf("creativity %v: temperature %v", creativity, req.Temperature)
		}
		tweet, _ := prompts.Lookup(33)
		if req.Prompt != "Our new espresso machine" || req.System != tweet.System() || req.MaxTokens != tweet.MaxTokens() {
			t.Errorf("request = %+v", req)
		}
	}
	if _, err := prompts.Document(53, "x", 0.5, prompts.Controls{}); err == nil {
		t.Error("template 53 accepted")
	}
	// A tweet's answer is bounded near its limit; a blog post's is not.
	tweet, _ := prompts.Lookup(33)
	post, _ := prompts.Lookup(9)
	if tweet.MaxTokens() >= post.MaxTokens() {
		t.Errorf("tweet %d tokens, blog post %d", tweet.MaxTokens(), post.MaxTokens())
	}
}

func TestResult(t *testing.T) {
	long := strings.Repeat("word ", 6000) // 30,000 characters
	tweetish := strings.Repeat("Coffee lovers rejoice ", 20)
	testCases := []struct {
		name     string
		template int64
		answer   string
		want     string
		wantMax  int
	}{
		{"trimmed", 1, "\n  Hello there.  \n", "Hello there.", 0},
		{"quotes around it all", 33, `"Fresh beans, bold taste."`, "Fresh beans, bold taste.", 0},
		{"curly quotes", 33, "“Fresh beans.”", "Fresh beans.", 0},
		{"quotes inside stay", 1, `"Yes," she said, "we do."`, `"Yes," she said, "we do."`, 0},
		{"tweet cut at a word", 33, tweetish, "", 280},
		{"meta description cut", 20, strings.Repeat("Espresso machines compared. ", 10), "", 160},
		{"any result fits the field", 1, long, "", 20480},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := prompts.Result(tc.template, tc.answer, 20480)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && got != tc.want {
				t.Fatalf("Result = %q, want %q", got, tc.want)
			}
			if tc.wantMax > 0 {
				n := utf8.RuneCountInString(got)
				if n > tc.wantMax || n < tc.wantMax*3/4 {
					t.Fatalf("%d characters, want at most %d and not much fewer", n, tc.wantMax)
				}
				if !strings.HasPrefix(tc.answer, got) || strings.HasSuffix(got, " ") || tc.answer[len(got)] != ' ' {
					t.Fatalf("not cut at a word boundary: ...%q", got[max(0, len(got)-20):])
				}
			}
		})
	}
	for _, empty := range []string{"", "   \n", `""`} {
		_, err := prompts.Result(1, empty, 20480)
		var gerr *generation.Error
		if !errors.As(err, &gerr) || gerr.Code != generation.Internal {
			t.Errorf("Result(%q) = %v, want an internal generation error", empty, err)
		}
	}
}

func TestImage(t *testing.T) {
	for _, style := range images.Styles {
		for _, medium := range images.Media {
			req, err := prompts.Image("A lighthouse on a cliff at dusk", style, medium, "512x512", "a1")
			if err != nil {
				t.Fatalf("%s/%s: %v", style, medium, err)
			}
			if !strings.HasPrefix(req.Prompt, "A lighthouse on a cliff at dusk, ") || strings.Contains(req.Prompt, "_") {
				t.Fatalf("%s/%s: prompt %q does not put the description first and the style in words", style, medium, req.Prompt)
			}
		}
	}
	plain, err := prompts.Image("A lighthouse", "", "", "256x256", "a1")
	if err != nil || plain.Prompt != "A lighthouse" || plain.Negative == "" {
		t.Fatalf("plain = %+v, %v", plain, err)
	}
	if plain.Width != 320 || plain.Height != 320 {
		t.Errorf("256x256 is asked at %dx%d, want 320x320", plain.Width, plain.Height)
	}
	if big, _ := prompts.Image("A lighthouse", "", "", "1024x1024", "a1"); big.Width != 1024 || big.Height != 1024 {
		t.Errorf("1024x1024 is asked at %dx%d", big.Width, big.Height)
	}

	// The longest description leaves room for style and medium.
	long := strings.Repeat("lighthouse ", 186) // 2,046 characters
	req, err := prompts.Image(long, "anime", "ink", "512x512", "a1")
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(req.Prompt); n > prompts.MaxImagePrompt || n < prompts.MaxImagePrompt-20 {
		t.Errorf("prompt of %d characters, want up to %d", n, prompts.MaxImagePrompt)
	}
	if !strings.HasSuffix(req.Prompt, "drawn in ink with fine lines and washes") {
		t.Errorf("the style and medium were cut off: ...%s", req.Prompt[len(req.Prompt)-60:])
	}

	again, _ := prompts.Image("A lighthouse", "", "", "256x256", "a1")
	other, _ := prompts.Image("A lighthouse", "", "", "256x256", "a2")
	if again.Seed != plain.Seed || other.Seed == plain.Seed {
		t.Errorf("seeds: same attempt %d/%d, other attempt %d", plain.Seed, again.Seed, other.Seed)
	}
	if plain.Seed > 858_993_459 {
		t.Errorf("seed %d is past Nova Canvas's range", plain.Seed)
	}

	for _, bad := range [][3]string{{"oil", "", "256x256"}, {"", "marble", "256x256"}, {"", "", "huge"}} {
		if _, err := prompts.Image("x", bad[0], bad[1], bad[2], "a1"); err == nil {
			t.Errorf("Image(%v) accepted", bad)
		}
	}
}
