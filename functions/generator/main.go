// Command generator is the GeneratorFunction: it takes the record tables'
// DynamoDB Streams (filtered by template.yaml to what needs it) and makes
// records' content, keeps their pictures and deletes the ones no record
// owns. See shared/generator.
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
	// It calls the models, keeps pictures and publishes the ends.
	lambda.Start(app.MustGenerator(context.Background(), app.Parts{Models: models.New, Pictures: pictures.New, Queue: queue.New}))
}
