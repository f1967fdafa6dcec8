package generation

import "context"

// TextRequest asks a text model for one answer.
type TextRequest struct {
	// System is the template's instruction: who writes, what, in which form.
	System string
	// Prompt is the user's input, as they wrote it.
	Prompt string
	// Temperature is the record's creativity, 0 to 1.
	Temperature float32
	// MaxTokens bounds the answer; the model stops there.
	MaxTokens int32
}

// TextResult is a text model's answer.
type TextResult struct {
	Text string
	// Model is the model id that answered.
	Model        string
	InputTokens  int64
	OutputTokens int64
	// Truncated is set when the model stopped at MaxTokens.
	Truncated bool
}

// ImageRequest asks an image model for one picture.
type ImageRequest struct {
	Prompt string
	// Negative names what the picture should not show; models that take no
	// negative prompt ignore it.
	Negative string
	// Width and Height are the size to draw at: a size the model supports,
	// which the caller then scales to the record's resolution.
	Width, Height int
	// Seed makes a repeated request draw the same picture.
	Seed uint32
}

// ImageResult is an image model's picture.
type ImageResult struct {
	// Image is the encoded picture as the model sent it (PNG).
	Image []byte
	Model string
}

// TextModel writes text. Its errors are *Error, classified for clients; a
// call that failed after the model answered (its content filters stopped
// the answer) still gives the tokens it used, and the model, in its
// result.
type TextModel interface {
	Text(context.Context, TextRequest) (TextResult, error)
}

// ImageModel draws pictures. Its errors are *Error, classified for clients.
type ImageModel interface {
	Image(context.Context, ImageRequest) (ImageResult, error)
}
