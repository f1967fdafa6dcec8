// Command documents is the Lambda function serving /api/v1/documents.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"contentapi/shared/app"
	"contentapi/shared/app/models"
)

func main() {
	// Documents are generated (the models); they keep no pictures and
	// serve no webhooks.
	lambda.Start(app.MustAPI(context.Background(), "documents", app.Parts{Models: models.New}))
}
