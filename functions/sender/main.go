// Command sender is the SenderFunction: it takes webhook deliveries from
// the WebhookDeliveries queue and makes their attempts. See
// shared/hooksender.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"contentapi/shared/app"
	"contentapi/shared/app/pictures"
	"contentapi/shared/app/queue"
)

func main() {
	// It takes deliveries from the queue and gives image events fresh
	// URLs.
	lambda.Start(app.MustSender(context.Background(), app.Parts{Pictures: pictures.New, Queue: queue.New}))
}
