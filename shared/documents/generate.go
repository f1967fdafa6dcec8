package documents

import (
	"context"

	"contentapi/shared/generation"
	"contentapi/shared/prompts"
)

// content writes a document's result with the text model: its template's
// brief, its prompt, at temperature = creativity.
var content = &generation.Content{Make: generate}

func generate(ctx context.Context, m generation.Models, r generation.Record) (generation.Output, error) {
	var d Document
	if err := r.Decode(&d); err != nil {
		return generation.Output{}, err
	}
	req, err := prompts.Document(d.TemplateID, d.Prompt, d.Creativity)
	if err != nil {
		return generation.Output{}, generation.Wrap(generation.Internal, err)
	}
	res, err := m.Text.Text(ctx, req)
	if err != nil {
		return generation.Output{}, err
	}
	text, err := prompts.Result(d.TemplateID, res.Text, maxResult)
	if err != nil {
		return generation.Output{}, err
	}
	words := int64(Words(text))
	usage := generation.Tokens(res.InputTokens, res.OutputTokens)
	usage.Counted = words // against the month's words
	return generation.Output{
		Fields: map[string]any{"result": text, "words": words},
		Model:  res.Model,
		Usage:  usage,
	}, nil
}
