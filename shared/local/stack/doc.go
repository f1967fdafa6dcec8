// Package stack stands in for the deployed stack on this machine: the
// parts of what template.yaml deploys that make run, the tests, the bench
// and the soak start in its place, and the project's binaries built as
// make builds them.
//
//   - The local stack as a process of its own (StartProcess: `local serve`,
//     as make run does), for the bench's load run and the fault-injection
//     soak, which drive it over HTTP (APIRequest) and watch its processes
//     (CPUSeconds, PeakRSSMB).
//   - Generation's parts together (StartGeneration): a stand-in of Bedrock
//     Runtime (or, with AWS credentials, Bedrock itself), an S3 server for
//     the pictures, and the delivery of the tables' streams to the
//     generator and tally functions (DeliverGenerator, DeliverTally), as
//     the template's event source mappings deliver them in AWS.
//   - The webhooks' queues where AWS's are not (StartWebhookQueue): the
//     deliveries' two lanes and their dead-letter queue as template.yaml
//     sets them, in an in-process SQS server that speaks SQS's protocol to
//     the SDK's client (sqslocal), feeding the sender as the template's
//     event source mappings do (lambdalocal.SQSMapping: each lane's batch
//     size and concurrency).
//   - The tally function over a test's tables (StartTally), so that a test
//     can wait for deletes' counts to come down (Tally.Drain) instead of
//     sleeping.
//   - The binaries as make builds them (GoBuild, BuildLambda,
//     BuildProcess), for the bench and the soak, which measure and run
//     what ships.
//
// localstack, genstack, hooklocal and tallytest were packages of their own,
// each too small to stand alone; names here carry what they belong to
// (Process, Generation, WebhookQueue, Tally). Nothing here links the
// testing package: the commands link this package, and no command carries
// test code (TestBinariesLinkNoTestCode).
package stack
