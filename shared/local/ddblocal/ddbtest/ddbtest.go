// Package ddbtest gives each test its own tables, created from
// template.yaml in a DynamoDB Local shared by the test binary. It imports
// testing, so it lives apart from ddblocal, which the commands link: no
// binary carries the testing package (as net/http/httptest stands apart
// from net/http).
package ddbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/ddbmeter"
	"contentapi/shared/local/sam"
)

// TestEndpointEnv names a DynamoDB Local the tests use instead of starting
// their own, e.g. one left running by `make run` or started by hand.
const TestEndpointEnv = "DYNAMODB_TEST_ENDPOINT"

// Env is a set of freshly created tables for one test.
type Env struct {
	Client   *dynamodb.Client
	Endpoint string
	// Tables maps each table's logical ID in template.yaml to its name
	// here, e.g. "ImagesTable" -> "ImagesTable-3f9c01a2b4d6".
	Tables map[string]string
	tmpl   *sam.Template
}

// Vars is the environment that points the app at this Env's tables; see
// ddblocal.EnvVars.
func (e *Env) Vars() map[string]string {
	return ddblocal.EnvVars(e.tmpl, e.Endpoint, e.Tables)
}

// Setenv sets Vars in the environment for the rest of the test, for code
// that reads its configuration from there (app.FromEnv). Like t.Setenv it
// cannot be used in parallel tests; those should pass Tables on explicitly.
func (e *Env) Setenv(t testing.TB) {
	t.Helper()
	for k, v := range e.Vars() {
		t.Setenv(k, v)
	}
}

// Metered is a client on e's tables whose calls the returned meter records:
// a test holds code to the DynamoDB calls it makes, on DynamoDB Local itself
// (see ddbmeter.Meter.Measure).
func (e *Env) Metered(t testing.TB) (*dynamodb.Client, *ddbmeter.Meter) {
	t.Helper()
	m, err := ddbmeter.New(e.tmpl, e.Tables)
	if err != nil {
		t.Fatal(err)
	}
	return dynamodb.New(e.Client.Options(), m.Options), m
}

var shared struct {
	once     sync.Once
	endpoint string
	client   *dynamodb.Client
	tmpl     *sam.Template
	err      error
}

// New gives the test its own tables, created from template.yaml in a
// DynamoDB Local shared by the whole test binary (started on first use,
// unless $DYNAMODB_TEST_ENDPOINT names one). Table names carry a random
// suffix, so tests, parallel ones included, and test binaries sharing one
// endpoint never see each other's data. The tables are deleted when the
// test ends.
func New(t testing.TB) *Env {
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
	tables, err := ddblocal.CreateTables(ctx, shared.client, shared.tmpl, suffix)
	// Registered before the error check, so tables created before a failure
	// are dropped too.
	t.Cleanup(func() { dropTables(t, suffix) })
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Client: shared.client, Endpoint: shared.endpoint, Tables: tables, tmpl: shared.tmpl}
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
		srv, err := ddblocal.Start(ctx, ddblocal.Options{})
		if err != nil {
			return err
		}
		shared.endpoint = srv.Endpoint()
	}
	shared.client, err = ddblocal.NewClient(ctx, shared.endpoint)
	return err
}

// dropTables deletes the test's tables so a long test run does not pile up
// tables in the shared (in-memory) DynamoDB Local.
func dropTables(t testing.TB, suffix string) {
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
			t.Errorf("ddbtest: drop table %s: %v", name, err)
		}
	}
}

func isNotFound(err error) bool {
	var nf *types.ResourceNotFoundException
	return errors.As(err, &nf)
}
