package generator

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"contentapi/shared/documents"
	"contentapi/shared/generation"
	"contentapi/shared/images"
	"contentapi/shared/picture"
	"contentapi/shared/pictures"
	"contentapi/shared/prompts"
	"contentapi/shared/records"
)

// Content is how the records of one resource get their content; each
// resource declares its own (app.Resources).
type Content struct {
	// Picture: the content is a picture in the bucket, named in result.
	Picture bool
	make    func(context.Context, *Generator, Record) (Output, error)
}

var (
	// Document writes a document's result with the text model: its
	// template's brief, its prompt, at temperature = creativity.
	Document = &Content{make: document}
	// Image draws an image's picture with the image model, at exactly its
	// resolution with its filter, and stores it.
	Image = &Content{Picture: true, make: image}
)

func document(ctx context.Context, g *Generator, r Record) (Output, error) {
	var d documents.Document
	if err := attributevalue.UnmarshalMap(r.Item, &d); err != nil {
		return Output{}, generation.Wrap(generation.Internal, err)
	}
	req, err := prompts.Document(d.TemplateID, d.Prompt, d.Creativity)
	if err != nil {
		return Output{}, generation.Wrap(generation.Internal, err)
	}
	res, err := g.Text.Text(ctx, req)
	if err != nil {
		return Output{}, err
	}
	text, words, err := prompts.Result(d.TemplateID, res.Text)
	if err != nil {
		return Output{}, err
	}
	usage := generation.Tokens(res.InputTokens, res.OutputTokens)
	usage.Counted = words // against the month's words
	return Output{
		Fields: records.Values{"result": text, "words": words},
		Model:  res.Model,
		Usage:  usage,
	}, nil
}

func image(ctx context.Context, g *Generator, r Record) (Output, error) {
	var img images.Image
	if err := attributevalue.UnmarshalMap(r.Item, &img); err != nil {
		return Output{}, generation.Wrap(generation.Internal, err)
	}
	req, err := prompts.Image(img.Description, deref(img.Style), deref(img.Medium), img.Resolution, r.State.Attempt)
	if err != nil {
		return Output{}, generation.Wrap(generation.Internal, err)
	}
	res, err := g.Image.Image(ctx, req)
	if err != nil {
		return Output{}, err
	}
	width, height, err := picture.ParseResolution(img.Resolution)
	if err != nil {
		return Output{}, generation.Wrap(generation.Internal, err)
	}
	png, err := picture.Render(res.Image, width, height, deref(img.Filter))
	if err != nil {
		return Output{}, generation.Wrap(generation.Internal, fmt.Errorf("the model's picture: %w", err))
	}
	// Named after the attempt: a repeated delivery of it rewrites this one
	// object, and no other attempt's write-back can name it.
	name := pictures.Name(r.Account, r.Resource, r.ID, r.State.Attempt)
	if err := g.Pictures.Put(ctx, name, png); err != nil {
		return Output{}, generation.Wrap(generation.Internal, err)
	}
	return Output{Fields: records.Values{"result": name}, Model: res.Model, Picture: name}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
