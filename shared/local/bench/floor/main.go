// Command floor is the floor of a cold start on the machine at hand: an
// aws-lambda-go handler that answers an API Gateway event at once, with
// nothing else linked. make bench builds it as the functions are built and
// times it as it times theirs (ms_cold_start_floor), so a function's cold
// start reads against what any Go function pays there to start.
package main

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, json.RawMessage) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusOK}, nil
	})
}
