// Package doccheck holds the documents clients read to the code: real
// requests and answers are checked against openapi.yaml (OpenAPIValidator),
// so that tests fail as soon as the code and the contract part, and the
// commands of README.md and docs/*.md are found for the tests that run or
// check them (ReadPages, Commands), so that wherever text moves between
// pages, the same checks find it.
//
// Like net/http/httptest, it is a package of its own: the validator
// library (kin-openapi) stays out of the Lambda binaries, which serve the
// document but never check it.
package doccheck
