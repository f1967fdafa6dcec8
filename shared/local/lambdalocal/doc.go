// Package lambdalocal stands in for AWS Lambda's own parts on this machine,
// so that the functions run here as Lambda runs them:
//
//   - the API Gateway HTTP API in front of them (Gateway, Router): an HTTP
//     request becomes the payload 2.0 event, routed by template.yaml's routes
//     to a function's entry point in process;
//   - the Lambda Runtime API (ColdStarts): a function's bootstrap exec'd
//     and handed one event, which is how make bench times cold starts;
//   - the EventBridge schedules of template.yaml (RunSchedules): at the
//     template's rate, the function's entry point gets a Scheduled Event;
//   - the DynamoDB event source mapping (StreamPoller, StreamMapping): a
//     table's stream read from DynamoDB Local and delivered to a function,
//     filtered, batched and retried as template.yaml says;
//   - the SQS event source mapping (SQSMapping): a queue's batches handed
//     to a function, what it reports failed left to come back;
//   - EventBridge's default bus (EventBus): an AWS service's events (Bedrock's
//     batch job state changes) handed to the functions whose rules match
//     them, invoked asynchronously and retried as Lambda retries them.
//
// Each was a package of its own (gateway, runtimeapi, schedules, streams, sqspoll); they are
// one because each stands in for the same thing, Lambda's runtime around a
// function, and none is large enough to be a room of its own.
package lambdalocal
