package ddblocal

// A test's own tables: TestEnv gives each test its own tables, created from
// template.yaml in a DynamoDB Local shared by the test binary. It takes a
// TestingT rather than importing testing, so the commands that link
// ddblocal (make run's) carry no testing package.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/local/sam"
)

// TestEndpointEnv names a DynamoDB Local the tests use instead of starting
// their own, e.g. one left running by `make run` or started by hand.
const TestEndpointEnv = "DYNAMODB_TEST_ENDPOINT"

// TestingT is the part of testing.TB that the local stack's test helpers
// use (TestEnv here, stack's tally): *testing.T and *testing.B satisfy it.
// An interface of ddblocal's own, where testing.TB would link the testing
// package into make run's commands.
type TestingT interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Cleanup(func())
	Setenv(key, value string)
}

// TestEnv is a set of freshly created tables for one test.
type TestEnv struct {
	Client   *dynamodb.Client
	Endpoint string
	// Tables maps each table's logical ID in template.yaml to its name
	// here, e.g. "ImagesTable" -> "ImagesTable-3f9c01a2b4d6".
	Tables map[string]string
	// Vectors is the stand-in for DynamoDB's vector indexes that Endpoint
	// names, in front of DynamoDB Local (shared by the test binary).
	Vectors *VectorStandIn
	tmpl    *sam.Template
}

// Vars is the environment that points the app at this TestEnv's tables; see
// EnvVars.
func (e *TestEnv) Vars() map[string]string {
	return EnvVars(e.tmpl, e.Endpoint, e.Tables)
}

// Setenv sets Vars in the environment for the rest of the test, for code
// that reads its configuration from there (app.FromEnv). Like t.Setenv it
// cannot be used in parallel tests; those should pass Tables on explicitly.
func (e *TestEnv) Setenv(t TestingT) {
	t.Helper()
	for k, v := range e.Vars() {
		t.Setenv(k, v)
	}
}

// Metered is a client on e's tables whose calls the returned meter records:
// a test holds code to the DynamoDB calls it makes, on DynamoDB Local itself
// (see Meter.Measure).
func (e *TestEnv) Metered(t TestingT) (*dynamodb.Client, *Meter) {
	t.Helper()
	m, err := NewMeter(e.tmpl, e.Tables)
	if err != nil {
		t.Fatal(err)
	}
	return dynamodb.New(e.Client.Options(), m.Options), m
}

var shared struct {
	once     sync.Once
	endpoint string
	vectors  *VectorStandIn
	client   *dynamodb.Client
	tmpl     *sam.Template
	err      error
}

// NewTestEnv gives the test its own tables, created from template.yaml in a
// DynamoDB Local shared by the whole test binary (started on first use,
// unless $DYNAMODB_TEST_ENDPOINT names one), behind a vector stand-in. Table names carry a random
// suffix, so tests, parallel ones included, and test binaries sharing one
// endpoint never see each other's data. The tables are deleted when the
// test ends.
func NewTestEnv(t TestingT) *TestEnv {
	t.Helper()
	shared.once.Do(func() { shared.err = setup() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails, by its documentation
	suffix := "-" + hex.EncodeToString(b[:])

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tables, err := CreateTables(ctx, shared.client, shared.tmpl, suffix)
	// Registered before the error check, so tables created before a failure
	// are dropped too.
	t.Cleanup(func() { dropTables(t, suffix) })
	if err != nil {
		t.Fatal(err)
	}
	return &TestEnv{Client: shared.client, Endpoint: shared.endpoint, Tables: tables, Vectors: shared.vectors, tmpl: shared.tmpl}
}

func setup() error {
	var err error
	if shared.tmpl, err = sam.LoadProject(); err != nil {
		return err
	}
	ctx := context.Background()
	shared.endpoint = os.Getenv(TestEndpointEnv)
	if shared.endpoint == "" {
		// Never stopped: it lives as long as the test binary and dies with
		// it (parent-death signal), after the last test is done with it.
		srv, err := Start(ctx, Options{})
		if err != nil {
			return err
		}
		shared.endpoint = srv.Endpoint()
	}
	// Tests reach DynamoDB Local through the vector stand-in, as make run's
	// functions do. Its index definitions are the test binary's own, even on
	// a DynamoDB Local that $DYNAMODB_TEST_ENDPOINT shares.
	if shared.vectors, err = StartVectorStandIn(shared.endpoint, VectorOptions{}); err != nil {
		return err
	}
	shared.endpoint = shared.vectors.URL()
	shared.client, err = NewClient(ctx, shared.endpoint)
	return err
}

// dropTables deletes the test's tables so a long test run does not pile up
// tables in the shared (in-memory) DynamoDB Local.
func dropTables(t TestingT, suffix string) {
	tables, err := shared.tmpl.Tables()
	if err != nil {
		return // New failed on the same error and said so
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tbl := range tables {
		name := tbl.LogicalID + suffix
		_, err := shared.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		if err != nil && !isNotFound(err) {
			t.Errorf("ddblocal: drop table %s: %v", name, err)
		}
	}
}

func isNotFound(err error) bool {
	var nf *types.ResourceNotFoundException
	return errors.As(err, &nf)
}
