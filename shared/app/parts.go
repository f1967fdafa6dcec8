package app

import (
	"context"
	"fmt"

	"contentapi/shared/generation"
	"contentapi/shared/generator"
	"contentapi/shared/hooksender"
)

// Parts build the clients of the AWS services beyond DynamoDB that only
// some functions call: the models (Bedrock Runtime), the pictures' bucket
// (S3) and the webhooks' queue (SQS). Each comes from a package of its own
// (shared/app/models, shared/app/pictures, shared/app/queue), and a
// function's main passes those its function calls. So a function's
// bootstrap links, and initializes at every cold start, only the services
// it uses (TestFunctionsLinkOnlyTheirServices). A part a function needs
// but was not given stops it at init, naming the part.
type Parts struct {
	Models   func(Config) (Models, error)
	Pictures func(Config) (Pictures, error)
	Queue    func(Config) (hooksender.Queue, error)
}

// Models is what generation calls: the text and the image model
// (bedrock.Client).
type Models interface {
	generation.TextModel
	generation.ImageModel
	// TextModel and ImageModel are the configured model ids.
	TextModel() string
	ImageModel() string
}

// Pictures is where pictures are kept (picturebucket.Store): the
// generator's, and their URLs for the answers and the webhooks' events.
type Pictures interface {
	generator.Pictures
	URL(ctx context.Context, name string) (string, error)
}

// errNoPart is the error of a function built without the part it needs.
func errNoPart(part, why string) error {
	return fmt.Errorf("%s, but this function was built without app.Parts.%s", why, part)
}
