// Package bench is the measuring harness of make bench and make chaos:
// the accounts they seed, the load and the in-process calls they drive,
// what they measure, and how they write it down.
//
//   - Seed fills an account with what a heavy user of the original app
//     holds: realistic documents and images, written as the store writes
//     them, for the bench to measure against (SeededAccount).
//   - DriveLoad drives the running local stack (stack.Process) with
//     concurrent clients, a realistic mix of reads and writes on a seeded
//     account, and says what they saw: requests, errors and latencies, by
//     kind (LoadResult).
//   - A Caller calls the app's handlers in process, as API Gateway would,
//     with one API key, and reads their answers: what a request costs with
//     no network in between.
//   - SeedWorstCase seeds the account that costs the most to read, and
//     MeasureWorstCase measures what its most expensive requests cost,
//     through the real handlers: no request may read more than the read
//     budget, nor answer more than the answer bound, whatever the account
//     holds (issue 18; worstcase.go says what the worst case is).
//   - The figures: what make bench and make chaos measure, one named value
//     a line (Figure, Board), written into BENCHMARKS.md, where each
//     command owns a Section of its own.
//   - What they do with the go tool: run a test binary's benchmarks in
//     rounds and read what they say (BenchRounds: each benchmark's ns/op
//     and allocs/op), split one benchmark's CPU time by the functions on
//     its samples' stacks (CPUProfile), and time the answers' gzip encoder
//     against the standard library's (GzipFigures).
//   - A CostModel prices requests at AWS's list prices: what a million
//     requests of an operation cost, from its DynamoDB calls and request
//     units, its answer's size, its duration, the models it calls, what it
//     writes to CloudWatch Logs (measured by a LogMeter, the functions'
//     log output, as the template's logging configuration keeps the
//     lines) and the traces it makes.
//   - A webhook delivery measured (MeasureDelivery: its calls, its lines,
//     and an attempt without answer's), and deliveries timed beside a
//     receiver that never answers (BesideDeadEndpoint).
//
// seed, loadgen, apicall, worstcase, figures, gobench and cost were
// packages of their own; names here carry what they belong to
// (SeededAccount and WorstCaseAccount, LoadResult and BenchResult,
// CostModel). What the bench runs of the stack, and the binaries as make
// builds them, are package stack's, which imports nothing of this one.
package bench
