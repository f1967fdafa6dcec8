package images

import (
	"context"
	"fmt"

	"contentapi/shared/generation"
	"contentapi/shared/picture"
	"contentapi/shared/prompts"
)

// content draws an image's picture with the image model, at exactly its
// resolution with its filter, and stores it.
var content = &generation.Content{Picture: true, Make: generate}

func generate(ctx context.Context, m generation.Models, r generation.Record) (generation.Output, error) {
	var img Image
	if err := r.Decode(&img); err != nil {
		return generation.Output{}, err
	}
	req, err := prompts.Image(img.Description, deref(img.Style), deref(img.Medium), img.Resolution, r.Attempt)
	if err != nil {
		return generation.Output{}, generation.Wrap(generation.Internal, err)
	}
	req.Negative = prompts.Negative(deref(img.NegativePrompt))
	res, err := m.Image.Image(ctx, req)
	if err != nil {
		return generation.Output{}, err
	}
	width, height, err := picture.ParseResolution(img.Resolution)
	if err != nil {
		return generation.Output{}, generation.Wrap(generation.Internal, err)
	}
	png, err := picture.Render(res.Image, width, height, deref(img.Filter))
	if err != nil {
		return generation.Output{}, generation.Wrap(generation.Internal, fmt.Errorf("the model's picture: %w", err))
	}
	name, err := m.PutPicture(ctx, png)
	if err != nil {
		return generation.Output{}, err
	}
	return generation.Output{Fields: map[string]any{"result": name}, Model: res.Model}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
