// Package documents defines the document resource: its fields, templates,
// word count and JSON shape.
package documents

import (
	"unicode"

	"contentapi/shared/generation"
	"contentapi/shared/records"
)

var templateKind = records.Int{Min: 1, Max: int64(len(Templates) - 1)}

// Resource is the document resource. Every list is limited to one template
// (Freestyle unless template_id names another), as in the original app.
var Resource = &records.Resource{
	Name:   "documents",
	Object: "document",
	Fields: []records.Field{
		{Name: "name", Kind: records.Text{Min: 1, Max: 128}, Required: true, Create: true, Update: true},
		{Name: "prompt", Kind: records.Text{Min: 1, Max: 2048}, Required: true, Create: true, Regenerate: true},
		{Name: "creativity", Kind: records.Choice{0, 0.25, 0.5, 0.75, 1}, Default: 0.5, Create: true, Regenerate: true},
		{Name: "template_id", Kind: templateKind, Default: int64(FreestyleID), Create: true, Regenerate: true},
		{Name: "result", Kind: records.Text{Min: 1, Max: maxResult}, Update: true},
		{Name: "favorite", Kind: records.Bool{}, Update: true},
	},
	Scope:     &records.Scope{Field: "template_id", Default: FreestyleID, Kind: templateKind},
	Filters:   []records.Filter{{Param: "favorite", Kind: records.Bool{}}},
	SearchBy:  []string{"name", "result"},
	Derive:    deriveWords,
	Generated: "result",
	Stored:    []string{"words"},
	Render:    records.RenderAs(finish),
	Content:   content,
}

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
	ID         int64             `json:"id" dynamodbav:"id"`
	Name       string            `json:"name" dynamodbav:"name"`
	Prompt     string            `json:"prompt" dynamodbav:"prompt"`
	Creativity float64           `json:"creativity" dynamodbav:"creativity"`
	TemplateID int64             `json:"template_id" dynamodbav:"template_id"`
	Template   Template          `json:"template" dynamodbav:"-"`
	Result     *string           `json:"result" dynamodbav:"result"`
	Words      int64             `json:"words" dynamodbav:"words"`
	Favorite   bool              `json:"favorite" dynamodbav:"favorite"`
	Generation *generation.State `json:"generation" dynamodbav:"generation"`
	CreatedAt  string            `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt  string            `json:"updated_at" dynamodbav:"updated_at"`
}

// finish completes a stored document as it reads in view: its
// generation as it reads now, its template's name.
func finish(d *Document, view records.View) error {
	d.Generation = view.State(d.Generation)
	d.Template = Template{ID: d.TemplateID}
	if d.TemplateID > 0 && d.TemplateID < int64(len(Templates)) {
		d.Template.Name = Templates[d.TemplateID]
	}
	return nil
}
