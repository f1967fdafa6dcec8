// Package prompts turns a record into what a model is asked: for a
// document, its template's brief and the user's prompt; for an image, a
// prompt drawn from description, style and medium. The briefs of the 52
// templates and every word around them are data, written in
// templates.yaml and compiled into briefs.go (go test ./shared/prompts
// -update), so that a function neither links a YAML parser (0.5 MB) nor
// parses at start. They are put together with fmt, not text/template: a
// function that links text/template keeps every method of every type it
// links (a template may call any), about 2 MB more with the AWS clients.
package prompts

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"contentapi/shared/generation"
	"contentapi/shared/picture"
)

// Template is one document template's brief.
type Template struct {
	ID          int64     `yaml:"id"`
	Instruction string    `yaml:"instruction"`
	Shape       string    `yaml:"shape"`
	Words       []int     `yaml:"words"`
	Items       int       `yaml:"items"`
	MaxChars    int       `yaml:"max_chars"`
	Sections    []Section `yaml:"sections"`
	system      string
}

// Section is a labelled part of an answer.
type Section struct {
	Label    string `yaml:"label"`
	MaxChars int    `yaml:"max_chars"`
}

// The shapes an answer takes.
var shapes = map[string]bool{"prose": true, "line": true, "list": true, "numbered": true, "thread": true,
	"hashtags": true, "keywords": true, "faq": true, "email": true, "script": true, "sections": true}

// data is all of templates.yaml.
type data struct {
	System    system            `yaml:"system"`
	Controls  controls          `yaml:"controls"`
	Languages map[string]string `yaml:"languages"`
	Tones     map[string]string `yaml:"tones"`
	Documents []Template        `yaml:"documents"`
	Images    images            `yaml:"images"`
}

// controls is the wording of a document's writing controls, added after
// the system prompt; its lines take their values as fmt verbs.
type controls struct {
	Language   string `yaml:"language"`
	Tone       string `yaml:"tone"`
	Variant    string `yaml:"variant"`
	Guide      string `yaml:"guide"`
	GuideOpen  string `yaml:"guide_open"`
	GuideClose string `yaml:"guide_close"`
}

// images is the wording of image prompts: the style and medium values in
// words, and what a picture should not show.
type images struct {
	Negative string            `yaml:"negative"`
	Styles   map[string]string `yaml:"styles"`
	Media    map[string]string `yaml:"media"`
}

// system is the wording around a brief; its lines take the brief's numbers
// as fmt verbs.
type system struct {
	Head      string            `yaml:"head"`
	Parts     string            `yaml:"parts"`
	Part      string            `yaml:"part"`
	PartLimit string            `yaml:"part_limit"`
	Items     map[string]string `yaml:"items"`
	Words     string            `yaml:"words"`
	MaxChars  string            `yaml:"max_chars"`
	Tail      string            `yaml:"tail"`
}

// render is the system prompt of a brief.
func (s system) render(t Template) string {
	var b strings.Builder
	b.WriteString(s.Head + "\n\n" + strings.TrimSpace(t.Instruction))
	if len(t.Sections) > 0 {
		b.WriteString("\n\n" + s.Parts)
		for _, p := range t.Sections {
			if p.MaxChars > 0 {
				fmt.Fprintf(&b, "\n"+s.PartLimit, p.Label, p.MaxChars)
			} else {
				fmt.Fprintf(&b, "\n"+s.Part, p.Label)
			}
		}
	}
	if t.Items > 0 {
		line, ok := s.Items[t.Shape]
		if !ok {
			line = s.Items["other"]
		}
		fmt.Fprintf(&b, "\n"+line, t.Items)
	}
	if t.Words != nil {
		fmt.Fprintf(&b, "\n"+s.Words, t.Words[0], t.Words[1])
	}
	if t.MaxChars > 0 {
		fmt.Fprintf(&b, "\n"+s.MaxChars, t.MaxChars)
	}
	b.WriteString("\n\n" + s.Tail)
	return b.String()
}

// loaded is prepared on first use: a test can then rewrite a broken
// briefs.go, which would otherwise stop the package at init.
var loaded = sync.OnceValue(mustLoad)

func mustLoad() data {
	d, err := prepare(compiled)
	if err != nil {
		panic(err)
	}
	return d
}

// prepare checks the briefs (one per template id, each complete) and
// renders their system prompts.
func prepare(d data) (data, error) {
	d.Documents = append([]Template(nil), d.Documents...)
	if err := d.System.check(); err != nil {
		return data{}, err
	}
	if err := d.Controls.check(); err != nil {
		return data{}, err
	}
	for i := range d.Documents {
		t := &d.Documents[i]
		switch {
		case t.ID != int64(i+1):
			return data{}, fmt.Errorf("prompts: brief %d has id %d: ids must run 1 to %d in order", i+1, t.ID, len(d.Documents))
		case strings.TrimSpace(t.Instruction) == "":
			return data{}, fmt.Errorf("prompts: template %d has no instruction", t.ID)
		case !shapes[t.Shape]:
			return data{}, fmt.Errorf("prompts: template %d has shape %q", t.ID, t.Shape)
		case t.Words != nil && (len(t.Words) != 2 || t.Words[0] < 1 || t.Words[0] > t.Words[1]):
			return data{}, fmt.Errorf("prompts: template %d: words must be [min, max]", t.ID)
		case (t.Shape == "sections") != (len(t.Sections) > 0):
			return data{}, fmt.Errorf("prompts: template %d: sections go with the sections shape, and only there", t.ID)
		}
		t.system = d.System.render(*t)
	}
	return d, nil
}

// check makes sure every line of the wording is there, with the verbs its
// numbers need, so that no brief renders as "%!d(MISSING)".
func (s system) check() error {
	lines := map[string]struct {
		text  string
		verbs []string
	}{
		"head": {s.Head, nil}, "tail": {s.Tail, nil}, "parts": {s.Parts, nil},
		"part": {s.Part, []string{"%s"}}, "part_limit": {s.PartLimit, []string{"%s", "%d"}},
		"words": {s.Words, []string{"%d", "%d"}}, "max_chars": {s.MaxChars, []string{"%d"}},
		"items.other": {s.Items["other"], []string{"%d"}},
	}
	for shape, line := range s.Items {
		lines["items."+shape] = struct {
			text  string
			verbs []string
		}{line, []string{"%d"}}
	}
	return checkLines("system", lines)
}

func (c controls) check() error {
	return checkLines("controls", map[string]struct {
		text  string
		verbs []string
	}{
		"language": {c.Language, []string{"%s"}}, "tone": {c.Tone, []string{"%s"}},
		"variant": {c.Variant, []string{"%d", "%d"}}, "guide": {c.Guide, nil},
		"guide_open": {c.GuideOpen, nil}, "guide_close": {c.GuideClose, nil},
	})
}

func checkLines(section string, lines map[string]struct {
	text  string
	verbs []string
}) error {
	for name, l := range lines {
		if strings.TrimSpace(l.text) == "" {
			return fmt.Errorf("prompts: templates.yaml: %s.%s is missing", section, name)
		}
		if got := verbs.FindAllString(l.text, -1); strings.Join(got, " ") != strings.Join(l.verbs, " ") {
			return fmt.Errorf("prompts: templates.yaml: %s.%s has the verbs %v, not %v", section, name, got, l.verbs)
		}
	}
	return nil
}

var verbs = regexp.MustCompile(`%[a-z%]`)

// Templates are the briefs of all templates, by id from 1.
func Templates() []Template { return loaded().Documents }

// Lookup is the brief of a template id.
func Lookup(id int64) (Template, bool) {
	if id < 1 || id > int64(len(loaded().Documents)) {
		return Template{}, false
	}
	return loaded().Documents[id-1], true
}

// System is the system prompt: the brief with the rules every answer follows.
func (t Template) System() string { return t.system }

// MaxAnswerTokens is the most tokens any template's answer may have (Nova
// text models answer at most 5,000), and so the most words of spaced text
// it can hold: a token never holds two words a space parts (Chinese and
// Japanese, a word a character, can hold up to about two a token).
const MaxAnswerTokens = 4096

// MaxTokens bounds the answer so that it fits the template's limits and,
// for any template, a document's result. Tokens run at about four
// characters of English, fewer in other scripts, so these bounds leave
// room; Result cuts whatever still runs over.
func (t Template) MaxTokens() int32 {
	const ceiling = MaxAnswerTokens
	n := ceiling
	switch chars := t.maxChars(); {
	case chars > 0:
		n = chars/2 + 64
	case t.Words != nil:
		n = t.Words[1]*2 + 128
	}
	return int32(min(n, ceiling))
}

// maxChars is the longest answer the template allows: its own limit, or
// the sum of its parts' when each part has one; 0 when unbounded.
func (t Template) maxChars() int {
	if t.MaxChars > 0 || len(t.Sections) == 0 {
		return t.MaxChars
	}
	sum := 0
	for _, s := range t.Sections {
		if s.MaxChars == 0 {
			return 0
		}
		sum += utf8.RuneCountInString(s.Label) + len(": \n") + s.MaxChars
	}
	return sum
}

// Controls are how a document asks its text to be written, each optional.
type Controls struct {
	// Language is a tag of documents.Languages; "" leaves the language to
	// the brief.
	Language string
	// Tone is one of documents.Tones; "" leaves it to the template.
	Tone string
	// Guide is the house style of the document's brand voice, as the
	// account wrote it; "" for none.
	Guide string
	// Variant is which of Variants texts this request writes, from 1.
	Variant, Variants int
}

// Document is the request for one of a document's texts: the template's
// brief, then what the controls ask, each as one paragraph of the system
// prompt; without controls, exactly the template's system prompt.
func Document(templateID int64, prompt string, creativity float64, c Controls) (generation.TextRequest, error) {
	t, ok := Lookup(templateID)
	if !ok {
		return generation.TextRequest{}, fmt.Errorf("prompts: no template %d", templateID)
	}
	system, err := c.render(t.System())
	if err != nil {
		return generation.TextRequest{}, err
	}
	return generation.TextRequest{
		System:      system,
		Prompt:      prompt,
		Temperature: float32(min(max(creativity, 0), 1)),
		MaxTokens:   t.MaxTokens(),
	}, nil
}

// render is the system prompt with the controls after it.
func (c Controls) render(system string) (string, error) {
	w := loaded().Controls
	parts := []string{system}
	if c.Language != "" {
		name, ok := loaded().Languages[c.Language]
		if !ok {
			return "", fmt.Errorf("prompts: no name for the language %q", c.Language)
		}
		parts = append(parts, fmt.Sprintf(w.Language, name))
	}
	if c.Tone != "" {
		line, ok := loaded().Tones[c.Tone]
		if !ok {
			return "", fmt.Errorf("prompts: no words for the tone %q", c.Tone)
		}
		parts = append(parts, fmt.Sprintf(w.Tone, line))
	}
	if c.Variants > 1 {
		parts = append(parts, fmt.Sprintf(w.Variant, c.Variant, c.Variants))
	}
	if guide := quotable(c.Guide, w.GuideOpen, w.GuideClose); guide != "" {
		parts = append(parts, w.Guide+"\n"+w.GuideOpen+"\n"+guide+"\n"+w.GuideClose)
	}
	return strings.Join(parts, "\n\n"), nil
}

// quotable is the account's guide as it can stand between the markers:
// trimmed, with any marker in it taken out (in any letter case), so that
// no text of the account's can end the quotation and speak as the
// service.
func quotable(guide, open, close string) string {
	for _, marker := range []string{open, close} {
		re := regexp.MustCompile(`(?i)` + regexp.QuoteMeta(marker))
		for re.MatchString(guide) {
			guide = re.ReplaceAllString(guide, "")
		}
	}
	return strings.TrimSpace(guide)
}

// Languages are the names briefs give languages, by tag.
func Languages() map[string]string { return loaded().Languages }

// Tones are what briefs ask of each tone.
func Tones() map[string]string { return loaded().Tones }

// Result is the document's result from a model's answer: trimmed,
// unwrapped from quotation marks around the whole of it, and cut at a word
// boundary to the template's limit and to limit, the longest result a
// document holds. An answer with nothing left is an error: a document's
// result is never empty.
func Result(templateID int64, answer string, limit int) (string, error) {
	t, _ := Lookup(templateID)
	s := unquote(strings.TrimSpace(answer))
	if t.MaxChars > 0 {
		s = Cut(s, t.MaxChars)
	}
	s = Cut(s, limit)
	if s == "" {
		return "", generation.Wrap(generation.Internal, fmt.Errorf("prompts: the model's answer to template %d is empty", templateID))
	}
	return s, nil
}

// unquote removes one pair of quotation marks around the whole answer,
// which models add to short pieces although told not to.
func unquote(s string) string {
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}, {"'", "'"}} {
		inner, ok := strings.CutPrefix(s, q[0])
		if !ok {
			continue
		}
		inner, ok = strings.CutSuffix(inner, q[1])
		if ok && !strings.ContainsAny(inner, q[0]+q[1]) {
			return strings.TrimSpace(inner)
		}
	}
	return s
}

// Cut shortens s to at most n characters, at the last space within them
// when there is one, so no word is cut in half.
func Cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)[:n+1]
	end := n
	for i := n; i > n/2; i-- {
		if unicode.IsSpace(runes[i]) {
			end = i
			break
		}
	}
	return strings.TrimRightFunc(string(runes[:end]), func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) && r != '.' && r != '!' && r != '?' })
}

// MaxImagePrompt is the longest prompt an image request carries, and the
// longest negative prompt: Nova Canvas's limits, the strictest of the
// image models this service calls.
const MaxImagePrompt = 1024

// Image is what an image model is asked to draw for a record: the
// description, then the style and medium in words, at a size the model
// supports for the record's resolution. The seed comes from the attempt, so
// a retried attempt asks for the same picture.
func Image(description, style, medium, resolution, attempt string) (generation.ImageRequest, error) {
	w, h, err := picture.ParseResolution(resolution)
	if err != nil {
		return generation.ImageRequest{}, err
	}
	styleWords, mediumWords := loaded().Images.Styles[style], loaded().Images.Media[medium]
	if style != "" && styleWords == "" || medium != "" && mediumWords == "" {
		return generation.ImageRequest{}, fmt.Errorf("prompts: no words for style %q or medium %q", style, medium)
	}
	var extra string
	for _, words := range []string{styleWords, mediumWords} {
		if words != "" {
			extra += ", " + words
		}
	}
	// The description gets what the style and medium leave of the limit.
	desc := Cut(strings.TrimSpace(description), MaxImagePrompt-utf8.RuneCountInString(extra))
	mw, mh := picture.ModelSize(w, h)
	return generation.ImageRequest{
		Prompt:   desc + extra,
		Negative: Negative(""),
		Width:    mw,
		Height:   mh,
		Seed:     seed(attempt),
	}, nil
}

// Negative is what a picture must not show: what the record asks (its
// negative_prompt; "" for nothing), then the service's own list, cut to
// the longest negative prompt the strictest image model takes.
func Negative(asked string) string {
	own := loaded().Images.Negative
	if asked = strings.TrimSpace(asked); asked == "" {
		return own
	}
	return Cut(asked+", "+own, MaxImagePrompt)
}

// maxSeed is Nova Canvas's largest seed; other models take larger ones.
const maxSeed = 858_993_459

func seed(attempt string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(attempt))
	return h.Sum32() % (maxSeed + 1)
}
