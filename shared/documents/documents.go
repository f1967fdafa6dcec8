// Package documents defines the document resource: its fields, templates,
// word count and JSON shape.
package documents

import (
	"cmp"
	"unicode"

	"contentapi/shared/generation"
	"contentapi/shared/records"
)

var templateKind = records.Int{Min: 1, Max: int64(len(Templates) - 1)}

// Languages are the languages a document may be asked to be written in:
// BCP 47 tags, matched in any letter case, of the languages Amazon Nova
// (the default text model) is documented to be optimised for. Other
// languages it writes less well, so a request for one is refused rather
// than answered badly. Chinese is Simplified Chinese; Portuguese is given
// with its region, whose conventions differ. Their names in briefs are in
// shared/prompts/templates.yaml.
var Languages = records.AnyCase{"ar", "de", "en", "es", "fr", "he", "hi", "it", "ja", "ko", "nl",
	"pt-BR", "pt-PT", "ru", "tr", "zh"}

// Tones are how a document may be asked to sound; what each asks of the
// model is in shared/prompts/templates.yaml.
var Tones = records.Enum{"professional", "casual", "friendly", "formal", "persuasive", "enthusiastic",
	"informative", "humorous", "inspirational", "empathetic", "confident", "witty"}

// MaxVariants is how many texts one generation of a document may write.
const MaxVariants = 3

// AllTemplates is the template_id of a list of every template's documents.
const AllTemplates = "all"

// Resource is the document resource. Every list is limited to one template
// (Freestyle unless template_id names another), as in the original app, or
// takes them all (AllTemplates).
var Resource = &records.Resource{
	Name:   "documents",
	Object: "document",
	Fields: []records.Field{
		{Name: "name", Kind: records.Text{Min: 1, Max: 128}, Required: true, Create: true, Update: true},
		{Name: "prompt", Kind: records.Text{Min: 1, Max: 2048}, Required: true, Create: true, Regenerate: true},
		{Name: "creativity", Kind: records.Choice{0, 0.25, 0.5, 0.75, 1}, Default: 0.5, Create: true, Regenerate: true},
		{Name: "template_id", Kind: templateKind, Default: int64(FreestyleID), Create: true, Regenerate: true},
		{Name: "language", Kind: Languages, Create: true, Regenerate: true},
		{Name: "tone", Kind: Tones, Create: true, Regenerate: true},
		{Name: "variants", Kind: records.Int{Min: 1, Max: MaxVariants}, Default: int64(1), Create: true, Regenerate: true},
		{Name: "voice_id", Kind: voiceRef, Create: true, Regenerate: true},
		{Name: "result", Kind: records.Text{Min: 1, Max: maxResult}, Update: true},
		{Name: "favorite", Kind: records.Bool{}, Update: true},
	},
	Scope: &records.Scope{Field: "template_id", Default: FreestyleID, Kind: templateKind, All: AllTemplates},
	Filters: []records.Filter{
		{Param: "favorite", Kind: records.Bool{}},
		// A document's language and voice are matched as it shows them:
		// its own language, else its voice's.
		{Param: "language", Kind: Languages, OnRecord: true, Else: "voice_language"},
		{Param: "voice_id", Kind: voiceRef, OnRecord: true},
	},
	SearchBy:  []string{"name", "result"},
	Derive:    deriveWords,
	Generated: "result",
	// A generation writes the variants after the first beside result
	// (the first) and words.
	Stored:   []string{"words", "other_results"},
	Render:   records.RenderAs(finish),
	Content:  content,
	Variants: "variants",
	// A client's result on a document of several variants keeps the first
	// text generated in results.
	Originals: &records.Originals{Fields: map[string]string{"result": "generated_result", "words": "generated_words"},
		When: "other_results"},
}

// voiceRef names one of the account's voices (shared/voices): the document
// keeps its name, language and tone as they read when it was last written
// or generated, so that it shows them after the voice is deleted.
var voiceRef = records.Ref{Resource: "voices",
	Keep: map[string]string{"name": "voice_name", "language": "voice_language", "tone": "voice_tone"}}

// maxResult is the longest result a document holds, a generated one cut
// to fit.
const maxResult = 20480

// deriveWords keeps words in step with result: set on create (0, no result
// yet) and whenever result changes.
func deriveWords(v records.Values) {
	if r, ok := v["result"].(string); ok {
		v["words"] = int64(Words(r))
		return
	}
	if _, creating := v["prompt"]; creating {
		v["words"] = int64(0)
	}
}

// Words counts the words of a text, so that a text without spaces is not a
// handful of words for its length:
//
//   - each character of Chinese and Japanese (Han, Hiragana, Katakana) is a
//     word, as word processors count them;
//   - Thai, Lao, Khmer and Burmese, also written without spaces between
//     words, count a word for every three letters of a run, rounded up (a
//     letter with its vowel and tone marks is one): about the length of a
//     word there. Telling their words apart needs a dictionary; Unicode's
//     word boundaries (UAX #29) would make each letter a word;
//   - other text counts its runs of non-space characters.
//
// Punctuation right after a word is part of it.
func Words(s string) int {
	n, inRun, letters := 0, false, 0
	for _, r := range s {
		spaceless := r >= 0x0E00 && unicode.In(r, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
		if !spaceless && letters > 0 {
			n, letters = n+(letters+lettersPerWord-1)/lettersPerWord, 0
		}
		switch {
		case unicode.IsSpace(r):
			inRun = false
		case r >= 0x3040 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			// A word of its own; what follows it up to a space (its
			// punctuation) is not another.
			n, inRun = n+1, true
		case spaceless:
			if !unicode.In(r, unicode.Mn, unicode.Mc) {
				letters++
			}
			inRun = true
		case !inRun:
			n, inRun = n+1, true
		}
	}
	return n + (letters+lettersPerWord-1)/lettersPerWord
}

// lettersPerWord is how many letters of Thai, Lao, Khmer or Burmese count
// as a word.
const lettersPerWord = 3

// Template is the {id, name} object of a document.
type Template struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Document is a document as the API shows it.
type Document struct {
	ID         int64    `json:"id" dynamodbav:"id"`
	Name       string   `json:"name" dynamodbav:"name"`
	Prompt     string   `json:"prompt" dynamodbav:"prompt"`
	Creativity float64  `json:"creativity" dynamodbav:"creativity"`
	TemplateID int64    `json:"template_id" dynamodbav:"template_id"`
	Template   Template `json:"template" dynamodbav:"-"`
	// Language and Tone are what the text is asked to be written in: the
	// document's own, else its voice's; nil leaves them to the prompt and
	// the template, as before they existed.
	Language *string `json:"language" dynamodbav:"language"`
	Tone     *string `json:"tone" dynamodbav:"tone"`
	// VoiceID names the account's voice the document is written in; Voice
	// is its id and name as the document last read them, kept after the
	// voice is deleted.
	VoiceID *int64    `json:"voice_id" dynamodbav:"voice_id"`
	Voice   *VoiceRef `json:"voice" dynamodbav:"-"`
	// The voice as the document last read it (voiceRef's Keep).
	VoiceName     *string `json:"-" dynamodbav:"voice_name"`
	VoiceLanguage *string `json:"-" dynamodbav:"voice_language"`
	VoiceTone     *string `json:"-" dynamodbav:"voice_tone"`
	// Variants is how many texts a generation writes, as given (1 for a
	// document made before there were variants).
	Variants int64   `json:"variants" dynamodbav:"variants"`
	Result   *string `json:"result" dynamodbav:"result"`
	Words    int64   `json:"words" dynamodbav:"words"`
	// Results are every text the last generation wrote, in its variants'
	// order, the first of them result and words; on a document of several
	// variants, until the client changes result (one of one text is its
	// result). Lists leave them out (nil): a list shows each document's
	// first text, and its size and cost stay what they were.
	Results *[]Variant `json:"results,omitempty" dynamodbav:"-"`
	// Others are the texts after the first, as stored; the first is
	// result and words, or the originals kept once the client changed
	// result, so no text is stored twice.
	Others []Variant `json:"-" dynamodbav:"other_results"`
	// GeneratedResult and GeneratedWords are the first text as generated,
	// kept once the client changed result on a document of several
	// variants (records.Originals).
	GeneratedResult *string           `json:"-" dynamodbav:"generated_result"`
	GeneratedWords  int64             `json:"-" dynamodbav:"generated_words,omitempty"`
	Favorite        bool              `json:"favorite" dynamodbav:"favorite"`
	Generation      *generation.State `json:"generation" dynamodbav:"generation"`
	CreatedAt       string            `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt       string            `json:"updated_at" dynamodbav:"updated_at"`
}

// VoiceRef is the {id, name} object of a document's voice.
type VoiceRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Variant is one text a generation wrote.
type Variant struct {
	Result string `json:"result" dynamodbav:"result"`
	Words  int64  `json:"words" dynamodbav:"words"`
}

// texts are the texts the last generation wrote, as stored: the first
// (result and words, or their originals), then the others.
func (d *Document) texts() []Variant {
	out := make([]Variant, 0, 1+len(d.Others))
	switch {
	case d.GeneratedResult != nil:
		out = append(out, Variant{Result: *d.GeneratedResult, Words: d.GeneratedWords})
	case d.Result != nil:
		out = append(out, Variant{Result: *d.Result, Words: d.Words})
	}
	return append(out, d.Others...)
}

// finish completes a stored document as it reads in view: its
// generation as it reads now, its template's name, its variants (1 for a
// document made before there were any), its voice, its language and tone
// (its own, else its voice's) and, but in a list, its texts.
func finish(d *Document, view records.View) error {
	d.Variants = max(d.Variants, 1)
	if !view.List {
		texts := d.texts()
		d.Results = &texts
	}
	d.Generation = view.State(d.Generation)
	if d.VoiceID != nil && d.VoiceName != nil {
		d.Voice = &VoiceRef{ID: *d.VoiceID, Name: *d.VoiceName}
	}
	d.Language = cmp.Or(d.Language, d.VoiceLanguage)
	d.Tone = cmp.Or(d.Tone, d.VoiceTone)
	d.Template = Template{ID: d.TemplateID}
	if d.TemplateID > 0 && d.TemplateID < int64(len(Templates)) {
		d.Template.Name = Templates[d.TemplateID]
	}
	return nil
}
