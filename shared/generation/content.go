package generation

import "context"

// Content is how a resource's records get their content: what one
// generation makes of a record with the models. A resource declares its
// own (records.Resource.Content); whoever generates (shared/generator)
// runs it, claims and writes back, and knows no resource.
type Content struct {
	// Picture: the content is a picture in the bucket, named in result;
	// the image model makes it. Otherwise the text model does.
	Picture bool
	// Make makes one record's content. Its errors are *Error, as the
	// models' are; any other error is Internal. Content made of parts (a
	// document's variants) may return, with its error, the parts it did
	// write (Output.Parts): they are kept, and a try taken up again
	// makes only the rest (State.Parts).
	Make func(context.Context, Models, Record) (Output, error)
}

// Models are what content is made with, for one generation.
type Models struct {
	Text  TextModel
	Image ImageModel
	// PutPicture stores a picture made for the record, under a name of
	// the generation's attempt (a repeated delivery rewrites that one
	// object), and returns the name for the record's result.
	PutPicture func(ctx context.Context, png []byte) (string, error)
}

// Record is the record a generation makes content for.
type Record struct {
	// Attempt is the generation's attempt: what a retried attempt asks of
	// the models is asked the same.
	Attempt string
	// Decode decodes the record as stored (the inputs of its generation)
	// into out, a pointer to the resource's own type, by its `dynamodbav`
	// names.
	Decode func(out any) error
	// Refs decode, by the field that names them (records.Ref), the
	// records of other resources the record names, as they read when the
	// generation started (a document's voice). A field naming none, or a
	// record no longer there, has none: the generation goes without it.
	Refs map[string]func(out any) error
}

// Output is what a generation made.
type Output struct {
	// Fields are the record's generated fields (result, words), written
	// with the generation's end.
	Fields map[string]any
	// Model is the model that answered.
	Model string
	// Usage is the tokens the models used and what the content counts
	// against what the generation holds of the monthly quota (Counted).
	Usage Usage
	// Parts are the parts of the content Fields hold, for content made of
	// parts; none otherwise. Fields, Usage and Model then cover every part
	// written, by this try and the earlier ones.
	Parts Parts
}
