// Command images is the Lambda function serving /api/v1/images.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"contentapi/shared/app"
	"contentapi/shared/app/models"
	"contentapi/shared/app/pictures"
	"contentapi/shared/app/queue"
)

func main() {
	// Images are generated pictures, with URLs; the first resource's
	// function serves the webhooks too (a test event is queued).
	lambda.Start(app.MustAPI(context.Background(), "images", app.Parts{Models: models.New, Pictures: pictures.New, Queue: queue.New}))
}
