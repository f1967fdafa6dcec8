// Command voices is the Lambda function serving /api/v1/voices.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"contentapi/shared/app"
)

func main() {
	// Voices are not generated: DynamoDB alone.
	lambda.Start(app.MustAPI(context.Background(), "voices", app.Parts{}))
}
