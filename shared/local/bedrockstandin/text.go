package bedrockstandin

import (
	"bytes"
	_ "embed"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"unicode"

	"gopkg.in/yaml.v3"

	"contentapi/shared/documents"
	"contentapi/shared/prompts"
)

//go:embed phrases.yaml
var phrasesYAML []byte

type phraseBook struct {
	Titles, Openers, Sentences, Closers, CTAs, Questions []*template.Template
}

// phraseLists is one language's lists in phrases.yaml.
type phraseLists struct {
	Titles    []string `yaml:"titles"`
	Openers   []string `yaml:"openers"`
	Sentences []string `yaml:"sentences"`
	Closers   []string `yaml:"closers"`
	CTAs      []string `yaml:"ctas"`
	Questions []string `yaml:"questions"`
}

// books are the phrase books by language tag: English, and the others
// phrases.yaml has.
var books = sync.OnceValue(func() map[string]phraseBook {
	var raw struct {
		phraseLists `yaml:",inline"`
		Languages   map[string]phraseLists `yaml:"languages"`
	}
	if err := yaml.Unmarshal(phrasesYAML, &raw); err != nil {
		panic("bedrockstandin: phrases.yaml: " + err.Error())
	}
	out := map[string]phraseBook{"en": raw.phraseLists.book("en")}
	for lang, lists := range raw.Languages {
		out[lang] = lists.book(lang)
	}
	return out
})

func (l phraseLists) book(lang string) phraseBook {
	parse := func(key string, phrases []string) []*template.Template {
		var out []*template.Template
		for i, p := range phrases {
			out = append(out, template.Must(template.New(lang+"/"+key+strconv.Itoa(i)).Parse(p)))
		}
		if len(out) == 0 {
			panic("bedrockstandin: phrases.yaml has no " + key + " in " + lang)
		}
		return out
	}
	return phraseBook{parse("titles", l.Titles), parse("openers", l.Openers), parse("sentences", l.Sentences),
		parse("closers", l.Closers), parse("ctas", l.CTAs), parse("questions", l.Questions)}
}

// Languages are the languages the stand-in writes drafts in; asked for
// another, it writes English.
func Languages() []string { return slices.Sorted(maps.Keys(books())) }

// briefs finds a template by its system prompt, as this service sends it.
var briefs = sync.OnceValue(func() map[string]prompts.Template {
	m := map[string]prompts.Template{}
	for _, t := range prompts.Templates() {
		m[t.System()] = t
	}
	return m
})

var limitInBrief = regexp.MustCompile(`fit in (\d+) characters`)

// Write is the stand-in's answer to a brief (the system prompt) and a
// prompt: a draft in the template's shape, of its length, within its
// limits, the same for the same input. What the brief asks after the
// template's own system prompt (a document's writing controls) it follows
// as a model would read it: the draft is in the language asked for where
// it has phrases for it, another for each tone and version, and it takes
// up a phrase of a brand voice's style guide.
func Write(system, prompt string, temperature float64) string {
	t, asks := lookupBrief(system)
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%g", system, prompt, temperature)
	w := &writer{rng: rand.New(rand.NewPCG(h.Sum64(), 0x5eed)), book: books()["en"]}
	if b, ok := books()[asks.language]; ok {
		w.book = b
	}
	w.topic, w.words = topicOf(prompt)
	text := strings.TrimSpace(w.shape(t))
	if asks.guide != "" {
		text += "\n\n" + asks.guide
	}
	if t.MaxChars > 0 {
		text = prompts.Cut(text, t.MaxChars)
	}
	return text
}

// lookupBrief is the template whose system prompt begins the brief, and
// what the brief asks after it.
func lookupBrief(system string) (prompts.Template, controls) {
	if t, ok := briefs()[system]; ok {
		return t, controls{}
	}
	for own, t := range briefs() {
		if rest, ok := strings.CutPrefix(system, own+"\n\n"); ok {
			return t, readControls(rest)
		}
	}
	// A brief from elsewhere: prose, within any limit it states.
	t := prompts.Template{Shape: "prose", Words: []int{60, 160}}
	if m := limitInBrief.FindStringSubmatch(system); m != nil {
		t.MaxChars, _ = strconv.Atoi(m[1])
	}
	return t, readControls(system)
}

// controls are what a brief asks beside its template: the language's tag,
// and the phrase of the style guide a draft takes up.
type controls struct {
	language, guide string
}

var (
	languageInBrief = regexp.MustCompile(`write the whole answer in ([^,.\n]+)`)
	guideInBrief    = regexp.MustCompile(`(?s)<style_guide>\n(.*?)\n</style_guide>`)
	guidePhrase     = regexp.MustCompile(`^[^.!?\n]*[.!?]?`)
)

// readControls reads the controls in what a brief asks after its template.
func readControls(asked string) controls {
	var c controls
	if m := languageInBrief.FindStringSubmatch(asked); m != nil {
		for tag, name := range prompts.Languages() {
			if name == m[1] {
				c.language = tag
			}
		}
	}
	if m := guideInBrief.FindStringSubmatch(asked); m != nil {
		c.guide = prompts.Cut(strings.TrimSpace(guidePhrase.FindString(m[1])), 120)
	}
	return c
}

type writer struct {
	book  phraseBook
	rng   *rand.Rand
	topic string
	words []string
	// order deals each list's phrases in a shuffled order, so a text
	// repeats none until it has used them all.
	order map[string][]int
	next  map[string]int
}

func (w *writer) shape(t prompts.Template) string {
	target := 120
	if t.Words != nil {
		target = t.Words[0] + (t.Words[1]-t.Words[0])/3
	}
	items := max(t.Items, 3)
	b := w.book
	var out strings.Builder
	switch t.Shape {
	case "line":
		out.WriteString(w.say(b.Openers) + " " + w.say(b.Sentences))
		if tag := " #" + camel(w.word()); t.MaxChars == 0 || len([]rune(out.String()+tag)) <= t.MaxChars {
			out.WriteString(tag)
		}
	case "list":
		for range items {
			out.WriteString("- " + w.say(b.Sentences) + "\n")
		}
	case "numbered":
		per := 0
		if t.Words != nil {
			out.WriteString(w.say(b.Titles) + "\n\n" + w.paragraph(b.Openers, 30) + "\n\n")
			per = (target - 40) / items
		}
		for i := range items {
			fmt.Fprintf(&out, "%d. %s\n", i+1, w.say(b.Titles))
			if per > 0 {
				out.WriteString(w.paragraph(b.Sentences, per) + "\n\n")
			}
		}
		if t.Words != nil {
			out.WriteString(w.say(b.Closers))
		}
	case "thread":
		for i := range items {
			post := w.say(b.Sentences) + " " + w.say(b.Sentences)
			if i == 0 {
				post = w.say(b.Openers) + " A thread:"
			}
			if i == items-1 {
				post = w.say(b.Closers)
			}
			fmt.Fprintf(&out, "%d/ %s\n\n", i+1, prompts.Cut(post, 270))
		}
	case "hashtags":
		tags := w.variants(items, func(s string) string { return "#" + camel(s) })
		out.WriteString(strings.Join(tags, " "))
	case "keywords":
		out.WriteString(strings.Join(w.variants(items, strings.ToLower), ", "))
	case "faq":
		for range items {
			out.WriteString("Q: " + w.say(b.Questions) + "\nA: " + w.say(b.Sentences) + " " + w.say(b.Sentences) + "\n\n")
		}
	case "email":
		out.WriteString("Subject: " + w.say(b.Titles) + "\n\nHi there,\n\n")
		out.WriteString(w.paragraphs(target-12, false) + " [Read more]\n\nBest regards,\nThe [Company name] team")
	case "script":
		scenes := []string{"HOOK", "INTRO", "MAIN POINT", "CALL TO ACTION"}
		for words := 0; words < target; {
			for _, scene := range scenes {
				line := fmt.Sprintf("[%s]\nVISUAL: %s\nVOICEOVER: %s %s\n\n", scene, w.say(b.Titles), w.say(b.Openers), w.say(b.Sentences))
				out.WriteString(line)
				words += documents.Words(line)
			}
			scenes = []string{"MAIN POINT", "CALL TO ACTION"}
		}
	case "sections":
		for _, s := range t.Sections {
			out.WriteString(s.Label + ": " + w.section(s, t) + "\n\n")
		}
	default: // prose; long pieces get a subheading over each section
		out.WriteString(w.paragraphs(target, t.Words != nil && t.Words[1] >= 600))
	}
	return out.String()
}

// section is one labelled part: a short line when the part is bounded, a
// list or a paragraph when not.
func (w *writer) section(s prompts.Section, t prompts.Template) string {
	b := w.book
	switch {
	case s.MaxChars > 0 && s.MaxChars <= 40:
		return prompts.Cut(w.say(b.CTAs), s.MaxChars)
	case s.MaxChars > 0:
		return prompts.Cut(w.say(b.Openers)+" "+w.say(b.Sentences), s.MaxChars)
	case t.Items > 0:
		var list strings.Builder
		for range t.Items {
			list.WriteString("\n- " + w.say(b.Sentences))
		}
		return list.String()
	}
	per := 40
	if t.Words != nil {
		per = (t.Words[0] + t.Words[1]) / 2 / len(t.Sections)
	}
	return w.paragraph(b.Sentences, per)
}

// paragraphs is a piece of about words words: an opening paragraph,
// paragraphs of a few sentences, a closing sentence.
func (w *writer) paragraphs(words int, headings bool) string {
	b := w.book
	var out strings.Builder
	out.WriteString(w.paragraph(b.Openers, min(words/3, 50)))
	for documents.Words(out.String()) < words-12 {
		out.WriteString("\n\n")
		if headings {
			out.WriteString(w.say(b.Titles) + "\n")
		}
		out.WriteString(w.paragraph(b.Sentences, min(60, words-documents.Words(out.String())-12)))
	}
	out.WriteString(" " + w.say(b.Closers))
	return out.String()
}

// paragraph starts with a phrase of first and goes on until it has about
// words words.
func (w *writer) paragraph(first []*template.Template, words int) string {
	p := w.say(first)
	for documents.Words(p) < words {
		p += " " + w.say(w.book.Sentences)
	}
	return p
}

// say fills in a phrase, dealt from its list.
func (w *writer) say(list []*template.Template) string {
	if w.order == nil {
		w.order, w.next = map[string][]int{}, map[string]int{}
	}
	key := list[0].Name()
	if w.next[key] == len(w.order[key]) {
		w.order[key], w.next[key] = w.rng.Perm(len(list)), 0
	}
	tmpl := list[w.order[key][w.next[key]]]
	w.next[key]++
	var buf bytes.Buffer
	tmpl.Execute(&buf, struct{ Topic, Word string }{w.topic, w.word()})
	return capitalise(buf.String())
}

func (w *writer) word() string { return w.words[w.rng.IntN(len(w.words))] }

// variants are n distinct tags or keywords built on the prompt's words.
func (w *writer) variants(n int, form func(string) string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if f := form(s); !seen[f] && len(out) < n {
			seen[f] = true
			out = append(out, f)
		}
	}
	add(w.topic)
	for _, word := range w.words {
		add(word)
	}
	for _, suffix := range []string{"tips", "ideas", "guide", "daily", "life", "goals", "community", "inspiration", "101", "trends", "news", "love", "how to", "best"} {
		for _, word := range w.words {
			add(word + " " + suffix)
		}
	}
	return out
}

// stopWords are left out of the words a draft is built on.
var stopWords = map[string]bool{"about": true, "after": true, "also": true, "been": true, "from": true,
	"have": true, "into": true, "just": true, "like": true, "more": true, "most": true, "only": true,
	"over": true, "some": true, "than": true, "that": true, "their": true, "them": true, "then": true,
	"there": true, "these": true, "they": true, "this": true, "very": true, "what": true, "when": true,
	"which": true, "will": true, "with": true, "would": true, "your": true, "write": true, "please": true}

// joinWords do not end a topic.
var joinWords = map[string]bool{"a": true, "an": true, "the": true, "and": true, "or": true, "of": true,
	"to": true, "in": true, "at": true, "for": true, "with": true, "is": true, "are": true, "our": true, "my": true}

// topicOf is what a prompt is about (its first words, up to the first
// sentence's end) and its content words.
func topicOf(prompt string) (string, []string) {
	for m := range markers {
		prompt = strings.ReplaceAll(prompt, m, "")
	}
	first := strings.TrimSpace(prompt)
	if i := strings.IndexAny(first, ".!?\n"); i > 0 {
		first = first[:i]
	}
	// "Write a post about X" is about X.
	for _, about := range []string{" about ", " on ", " for "} {
		if _, after, ok := strings.Cut(first, about); ok && after != "" {
			first = after
			break
		}
	}
	if i := strings.IndexAny(first, ",;:"); i > 0 {
		first = first[:i]
	}
	fields := strings.Fields(first)
	if len(fields) > 5 {
		fields = fields[:5]
	}
	for len(fields) > 1 && joinWords[strings.ToLower(fields[len(fields)-1])] {
		fields = fields[:len(fields)-1]
	}
	topic := strings.TrimRightFunc(strings.Join(fields, " "), unicode.IsPunct)
	if r := []rune(topic); len(r) > 1 && unicode.IsUpper(r[0]) && unicode.IsLower(r[1]) {
		topic = string(unicode.ToLower(r[0])) + string(r[1:])
	}
	var words []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(prompt), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(f)) >= 4 && !stopWords[f] && !seen[f] && len(words) < 8 {
			seen[f] = true
			words = append(words, f)
		}
	}
	if topic == "" {
		topic = "your idea"
	}
	if len(words) == 0 {
		words = []string{"ideas", "results", "growth"}
	}
	return topic, words
}

func capitalise(s string) string {
	r := []rune(s)
	if len(r) > 0 {
		r[0] = unicode.ToUpper(r[0])
	}
	return string(r)
}

func camel(s string) string {
	var b strings.Builder
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		b.WriteString(capitalise(f))
	}
	return b.String()
}
