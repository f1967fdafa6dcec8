package app

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"
	"github.com/aws/smithy-go/middleware"
)

// forLambda trims the SDK's per-call work to what a function needs; the
// default client does all of this on every call, and a Lambda function
// pays for it in its duration.
//
// The endpoint is resolved once, at init, by the SDK's own rules, and then
// served as it is: the rules depend only on the region and the configured
// endpoint, never on a call (the tables are named, not given as ARNs, and
// account-based endpoints are off, as the environment's credentials carry
// no account).
//
// The middlewares taken out each add a header or bookkeeping that serve no
// purpose here: an invocation id and a user agent string built per call
// (the default Go user agent goes instead), the recursion-detection header
// (for Lambda's loop detection, which does not follow DynamoDB calls), the
// response time kept for clock-skew correction (Lambda's clock is kept in
// time), the raw response kept for callers that never read it, a check of
// inputs that the store builds and DynamoDB checks again, and steps that
// pass through unless features the functions never turn on are (legacy
// endpoint resolvers and their signing names, endpoint discovery,
// interceptors, request logging, plain HTTP). Retries, signing and the
// request id in errors stay, and so does every check that guards data:
// the CRC32 of each answer is computed as the SDK's default client does.
func forLambda(o *dynamodb.Options) error {
	o.AccountIDEndpointMode = aws.AccountIDEndpointModeDisabled
	ep, err := dynamodb.NewDefaultEndpointResolverV2().ResolveEndpoint(context.Background(), dynamodb.EndpointParameters{
		Region:                aws.String(o.Region),
		Endpoint:              o.BaseEndpoint,
		UseDualStack:          aws.Bool(false),
		UseFIPS:               aws.Bool(false),
		AccountIdEndpointMode: aws.String(string(aws.AccountIDEndpointModeDisabled)),
	})
	if err != nil {
		return fmt.Errorf("DynamoDB endpoint of %s: %w", o.Region, err)
	}
	o.EndpointResolverV2 = staticEndpoint{ep}
	o.APIOptions = append(o.APIOptions, removeMiddlewares)
	return nil
}

type staticEndpoint struct{ ep smithyendpoints.Endpoint }

func (s staticEndpoint) ResolveEndpoint(context.Context, dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	return s.ep, nil
}

// unneededMiddlewares are the IDs forLambda takes out, by step. An
// operation whose stack lacks one (not every operation validates input or
// discovers endpoints) simply runs without it.
var unneededMiddlewares = struct{ initialize, serialize, build, finalize, deserialize []string }{
	initialize:  []string{"OperationInputValidation"},
	serialize:   []string{"ResolveEndpoint"},
	build:       []string{"ClientRequestID", "UserAgent", "RecursionDetection"},
	finalize:    []string{"InterceptBeforeRetryLoop", "InterceptAttempt", "DiscoverEndpoint", "disableHTTPS", "setLegacyContextSigningOptions"},
	deserialize: []string{"AddRawResponseToMetadata", "RecordResponseTiming", "RequestResponseLogger"},
}

func removeMiddlewares(s *middleware.Stack) error {
	for _, id := range unneededMiddlewares.initialize {
		_, _ = s.Initialize.Remove(id)
	}
	for _, id := range unneededMiddlewares.serialize {
		_, _ = s.Serialize.Remove(id)
	}
	for _, id := range unneededMiddlewares.build {
		_, _ = s.Build.Remove(id)
	}
	for _, id := range unneededMiddlewares.finalize {
		_, _ = s.Finalize.Remove(id)
	}
	for _, id := range unneededMiddlewares.deserialize {
		_, _ = s.Deserialize.Remove(id)
	}
	return nil
}
