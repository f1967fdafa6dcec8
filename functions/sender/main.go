// Command sender is the SenderFunction: it takes webhook deliveries from
// the WebhookDeliveries queue and makes their attempts. See
// shared/hooksender.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"contentapi/shared/app"
)

func main() {
	lambda.Start(app.MustSender(context.Background()))
}
