// Package images defines the image resource: its fields, the values the
// original app allows, and its JSON shape.
package images

import (
	"contentapi/shared/generation"
	"contentapi/shared/records"
)

// Allowed values, as the original app's config/images.php has them.
var (
	Resolutions = records.Enum{"256x256", "512x512", "1024x1024"}
	Styles      = records.Enum{"3d_render", "abstract", "anime", "art_deco", "cartoon", "digital_art",
		"illustration", "origami", "pixel_art", "photography", "pop_art", "retro", "sketch", "vaporwave"}
	Media   = records.Enum{"acrylic", "canvas", "chalk", "charcoal", "crayon", "glass", "ink", "pastel", "pencil", "spray_paint", "watercolor"}
	Filters = records.Enum{"grayscale", "sepia", "invert"}
)

// MaxNegativePrompt is the longest negative_prompt an image takes: what
// the image models take, less room for the service's own list after it
// (prompts.Negative).
const MaxNegativePrompt = 1000

// Resource is the image resource.
var Resource = &records.Resource{
	Name:   "images",
	Object: "image",
	Fields: []records.Field{
		{Name: "name", Kind: records.Text{Min: 1, Max: 128}, Required: true, Create: true, Update: true},
		{Name: "description", Kind: records.Text{Min: 1, Max: 2048}, Required: true, Create: true, Regenerate: true},
		{Name: "resolution", Kind: Resolutions, Required: true, Create: true, Regenerate: true},
		{Name: "style", Kind: Styles, Create: true, Regenerate: true},
		{Name: "medium", Kind: Media, Create: true, Regenerate: true},
		{Name: "filter", Kind: Filters, Create: true, Regenerate: true},
		{Name: "negative_prompt", Kind: records.Text{Min: 1, Max: MaxNegativePrompt}, Create: true, Regenerate: true},
		{Name: "favorite", Kind: records.Bool{}, Update: true},
	},
	Filters: []records.Filter{
		{Param: "resolution", Kind: Resolutions},
		{Param: "style", Kind: Styles},
		{Param: "medium", Kind: Media},
		{Param: "filter", Kind: Filters},
		{Param: "favorite", Kind: records.Bool{}},
	},
	SearchBy:  []string{"name"},
	Generated: "result",
	// A generator writes result (the picture's file name).
	Stored:  []string{"result"},
	Render:  records.RenderAs(finish),
	Content: content,
}

// Image is an image as the API shows it.
type Image struct {
	ID          int64   `json:"id" dynamodbav:"id"`
	Name        string  `json:"name" dynamodbav:"name"`
	Description string  `json:"description" dynamodbav:"description"`
	Resolution  string  `json:"resolution" dynamodbav:"resolution"`
	Style       *string `json:"style" dynamodbav:"style"`
	Medium      *string `json:"medium" dynamodbav:"medium"`
	Filter      *string `json:"filter" dynamodbav:"filter"`
	// NegativePrompt is what the picture must not show, as the client
	// wrote it; null for nothing.
	NegativePrompt *string `json:"negative_prompt" dynamodbav:"negative_prompt"`
	Favorite       bool    `json:"favorite" dynamodbav:"favorite"`
	// Result is the stored file name of the generated picture, null until
	// one exists; URL links it, presigned afresh on every read.
	Result     *string           `json:"result" dynamodbav:"result"`
	URL        *string           `json:"url" dynamodbav:"-"`
	Generation *generation.State `json:"generation" dynamodbav:"generation"`
	CreatedAt  string            `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt  string            `json:"updated_at" dynamodbav:"updated_at"`
}

// finish completes a stored image as it reads in view: its generation as
// it reads now, a fresh link to its picture.
func finish(img *Image, view records.View) error {
	var err error
	img.Generation = view.State(img.Generation)
	img.URL, err = view.URL(img.Result)
	return err
}
