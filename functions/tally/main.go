// Command tally is the TallyFunction: it takes the record tables' DynamoDB
// Streams (filtered by template.yaml to records turned tombstones) and
// takes each deleted record off its account's count, once; on a schedule,
// it settles the count changes an outage left open. See shared/tally.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"contentapi/shared/app"
)

func main() {
	lambda.Start(app.MustTally(context.Background()))
}
