// Package voices defines brand voices: an account's house style in its own
// words (guide), with the language and tone its documents default to. A
// document names one by voice_id (documents.Resource); its generation
// follows the guide as the voice reads when the generation starts. Voices
// generate nothing.
package voices

import (
	"contentapi/shared/documents"
	"contentapi/shared/records"
)

// MaxGuide is the longest guide, in characters.
const MaxGuide = 4000

// MaxPerAccount is how many voices an account may have at once: a brand
// or a client each, not one per document.
const MaxPerAccount = 50

// Resource is the voice resource.
var Resource = &records.Resource{
	Name:   "voices",
	Object: "voice",
	Fields: []records.Field{
		{Name: "name", Kind: records.Text{Min: 1, Max: 128}, Required: true, Create: true, Update: true},
		{Name: "guide", Kind: records.Text{Min: 1, Max: MaxGuide}, Required: true, Create: true, Update: true},
		{Name: "language", Kind: documents.Languages, Create: true, Update: true},
		{Name: "tone", Kind: documents.Tones, Create: true, Update: true},
	},
	SearchBy: []string{"name"},
	Render:   records.RenderAs[Voice](nil),
	Cap:      &records.Cap{Records: MaxPerAccount, Field: "name"},
}

// Voice is a voice as the API shows it.
type Voice struct {
	ID   int64  `json:"id" dynamodbav:"id"`
	Name string `json:"name" dynamodbav:"name"`
	// Guide is the house style, as the account wrote it: given to the
	// model as a style guide, never as instructions.
	Guide string `json:"guide" dynamodbav:"guide"`
	// Language and Tone are what a document with this voice is written
	// in when it does not say; nil leaves them to the document.
	Language  *string `json:"language" dynamodbav:"language"`
	Tone      *string `json:"tone" dynamodbav:"tone"`
	CreatedAt string  `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt string  `json:"updated_at" dynamodbav:"updated_at"`
}
