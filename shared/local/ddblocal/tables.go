package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/local/sam"
)

// Region is the region local clients sign for. DynamoDB Local runs with
// -sharedDb, so any region would reach the same tables; one fixed value
// keeps every local tool and test alike.
const Region = "us-east-1"

// NewClient returns a DynamoDB client for a DynamoDB Local endpoint. Its
// credentials are static dummies: DynamoDB Local checks only that requests
// are signed, and the SDK's default chain would otherwise go looking for
// real credentials (and the EC2 metadata service) on a machine with none.
func NewClient(ctx context.Context, endpoint string) (*dynamodb.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithRegion(Region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")),
	)
	if err != nil {
		return nil, fmt.Errorf("ddblocal: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		// DynamoDB Local sends a CRC32 header that does not match some of
		// its error bodies (CreateTable on an existing table with -dbPath),
		// and the SDK then logs a warning per call.
		o.DisableValidateResponseChecksum = true
	}), nil
}

// CreateTables creates every table of the template, named logical ID +
// suffix, and turns on TTL where the template does. It returns the names by
// logical ID.
//
// A table that already exists is kept with its data, so restarting `make
// run` on a -dbPath database loses nothing, and gets the indexes the
// template has added since, as a deploy would add them; but if its keys or
// its indexes otherwise no longer match the template, that is an error,
// since code written for the template would misbehave on the old table in
// ways hard to trace.
func CreateTables(ctx context.Context, client *dynamodb.Client, tmpl *sam.Template, suffix string) (map[string]string, error) {
	tables, err := tmpl.Tables()
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(tables))
	for _, t := range tables {
		name := t.LogicalID + suffix
		in := *t.Input
		in.TableName = aws.String(name)
		_, err := client.CreateTable(ctx, &in)
		var inUse *types.ResourceInUseException
		switch {
		case errors.As(err, &inUse):
			if err := addIndexes(ctx, client, &in); err != nil {
				return nil, err
			}
			if err := checkSchema(ctx, client, &in); err != nil {
				return nil, err
			}
			if err := enableStream(ctx, client, &in); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, fmt.Errorf("ddblocal: create table %s: %w", name, err)
		}
		if t.TTLAttribute != "" {
			if err := enableTTL(ctx, client, name, t.TTLAttribute); err != nil {
				return nil, err
			}
		}
		names[t.LogicalID] = name
	}
	return names, nil
}

// addIndexes creates the global and vector indexes of want that the
// existing table lacks (a .data database from before the template had
// them), one at a time as DynamoDB requires, and waits until each can be
// read. Under make run that includes every vector index on every start:
// the stand-in (VectorStandIn) keeps them in memory, and gets them again
// as a deploy adds a new one.
func addIndexes(ctx context.Context, client *dynamodb.Client, want *dynamodb.CreateTableInput) error {
	name := aws.ToString(want.TableName)
	d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: want.TableName})
	if err != nil {
		return fmt.Errorf("ddblocal: describe table %s: %w", name, err)
	}
	have := map[string]bool{}
	for _, x := range d.Table.GlobalSecondaryIndexes {
		have[aws.ToString(x.IndexName)] = true
	}
	for _, x := range d.Table.VectorIndexes {
		have[aws.ToString(x.IndexName)] = true
	}
	adds := map[string]*dynamodb.UpdateTableInput{}
	var order []string
	for _, x := range want.GlobalSecondaryIndexes {
		adds[aws.ToString(x.IndexName)] = &dynamodb.UpdateTableInput{
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: x.IndexName, KeySchema: x.KeySchema, Projection: x.Projection,
			}}},
		}
		order = append(order, aws.ToString(x.IndexName))
	}
	for _, x := range want.VectorIndexes {
		adds[aws.ToString(x.IndexName)] = &dynamodb.UpdateTableInput{
			VectorIndexUpdates: []types.VectorIndexUpdate{{Create: &types.CreateVectorIndexAction{
				IndexName: x.IndexName, VectorAttribute: x.VectorAttribute, Dimensions: x.Dimensions,
				DistanceFunction: x.DistanceFunction, SearchSchema: x.SearchSchema, Projection: x.Projection,
			}}},
		}
		order = append(order, aws.ToString(x.IndexName))
	}
	for _, index := range order {
		if have[index] {
			continue
		}
		in := adds[index]
		in.TableName, in.AttributeDefinitions = want.TableName, want.AttributeDefinitions
		if _, err := client.UpdateTable(ctx, in); err != nil {
			return fmt.Errorf("ddblocal: add index %s to %s: %w", index, name, err)
		}
		if err := waitIndex(ctx, client, name, index); err != nil {
			return err
		}
	}
	return nil
}

// indexWait bounds the wait for an index added to an existing table.
// DynamoDB Local backfills the index on a job pool of ten threads that
// also runs a deletion job per table with TTL on, each of which keeps its
// thread for 10 s per page it scans: with more TTL tables than free
// threads, the backfill queues behind them. Under make run (this
// template's few TTL tables) it starts within a second or two. The pool is
// the server's: with TestEndpointEnv set, every package's test binary
// shares one DynamoDB Local, so keeping a test off the parallel ones holds
// its backfill clear of TTL jobs only within its own package.
const indexWait = time.Minute

// waitIndex returns once the table's index (global or vector) is active, polling DescribeTable
// until indexWait has passed, or the caller's own deadline if that is
// sooner: the error says which, and how long it waited.
func waitIndex(ctx context.Context, client *dynamodb.Client, table, index string) error {
	caller := ctx
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, indexWait)
	defer cancel()
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("ddblocal: describe table %s: %w", table, err)
		}
		if err == nil && (slices.ContainsFunc(d.Table.GlobalSecondaryIndexes, func(x types.GlobalSecondaryIndexDescription) bool {
			return aws.ToString(x.IndexName) == index && x.IndexStatus == types.IndexStatusActive
		}) || slices.ContainsFunc(d.Table.VectorIndexes, func(x types.VectorIndexDescription) bool {
			return aws.ToString(x.IndexName) == index && x.IndexStatus == types.IndexStatusActive
		})) {
			return nil
		}
		select {
		case <-poll.C:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				deadline := fmt.Sprintf("indexWait (%v)", indexWait)
				if caller.Err() != nil {
					deadline = "the caller's deadline"
				}
				return fmt.Errorf("ddblocal: index %s of %s is not active after %v, when %s passed (DynamoDB Local backfills it on the job pool its TTL deletions hold)",
					index, table, time.Since(start).Round(time.Millisecond), deadline)
			}
			return ctx.Err()
		}
	}
}

// enableStream turns on the stream the template gives a table that was
// created without one (a .data database from before the template had it).
func enableStream(ctx context.Context, client *dynamodb.Client, want *dynamodb.CreateTableInput) error {
	if want.StreamSpecification == nil {
		return nil
	}
	d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: want.TableName})
	if err != nil {
		return fmt.Errorf("ddblocal: describe table %s: %w", aws.ToString(want.TableName), err)
	}
	if s := d.Table.StreamSpecification; s != nil && aws.ToBool(s.StreamEnabled) && s.StreamViewType == want.StreamSpecification.StreamViewType {
		return nil
	}
	_, err = client.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: want.TableName, StreamSpecification: want.StreamSpecification})
	if err != nil {
		return fmt.Errorf("ddblocal: enable the stream of %s: %w", aws.ToString(want.TableName), err)
	}
	return nil
}

func enableTTL(ctx context.Context, client *dynamodb.Client, table, attr string) error {
	// Enabling TTL twice is an error in DynamoDB, so look first.
	d, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		return fmt.Errorf("ddblocal: describe TTL of %s: %w", table, err)
	}
	if s := d.TimeToLiveDescription; s != nil && s.TimeToLiveStatus == types.TimeToLiveStatusEnabled && aws.ToString(s.AttributeName) == attr {
		return nil
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attr), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("ddblocal: enable TTL on %s: %w", table, err)
	}
	return nil
}

// checkSchema compares an existing table's keys and indexes with the ones
// the template would create.
func checkSchema(ctx context.Context, client *dynamodb.Client, want *dynamodb.CreateTableInput) error {
	name := aws.ToString(want.TableName)
	d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: want.TableName})
	if err != nil {
		return fmt.Errorf("ddblocal: describe table %s: %w", name, err)
	}
	t := d.Table
	have := []string{"key " + keys(t.KeySchema)}
	for _, x := range t.LocalSecondaryIndexes {
		have = append(have, index("lsi", x.IndexName, x.KeySchema, x.Projection))
	}
	for _, x := range t.GlobalSecondaryIndexes {
		have = append(have, index("gsi", x.IndexName, x.KeySchema, x.Projection))
	}
	expect := []string{"key " + keys(want.KeySchema)}
	for _, x := range want.LocalSecondaryIndexes {
		expect = append(expect, index("lsi", x.IndexName, x.KeySchema, x.Projection))
	}
	for _, x := range want.GlobalSecondaryIndexes {
		expect = append(expect, index("gsi", x.IndexName, x.KeySchema, x.Projection))
	}
	sort.Strings(have)
	sort.Strings(expect)
	if !slices.Equal(have, expect) {
		return fmt.Errorf("ddblocal: table %s exists with another schema than template.yaml's (have %v, template has %v); "+
			"delete it (for `make run`: remove .data/dynamodb) to have it created anew", name, have, expect)
	}
	return nil
}

func keys(ks []types.KeySchemaElement) string {
	parts := make([]string, 0, len(ks))
	for _, k := range ks {
		parts = append(parts, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	return strings.Join(parts, ", ")
}

func index(kind string, name *string, ks []types.KeySchemaElement, p *types.Projection) string {
	s := kind + " " + aws.ToString(name) + ": " + keys(ks)
	if p != nil {
		attrs := slices.Clone(p.NonKeyAttributes)
		sort.Strings(attrs)
		s += " " + string(p.ProjectionType) + " " + strings.Join(attrs, ",")
	}
	return s
}

// EnvVars returns the environment the functions read their configuration
// from, pointed at DynamoDB Local: every variable the template gives a
// function, with a reference to a table replaced by that table's name in
// tables (by logical ID) and a parameter reference by the parameter's
// default; plus the endpoint, region and dummy credentials. It is what
// `make run`, `invoke` and the tests give the app, taken from the template
// so a variable added there reaches local runs without further edits.
func EnvVars(tmpl *sam.Template, endpoint string, tables map[string]string) map[string]string {
	env := map[string]string{}
	for _, f := range tmpl.Functions() {
		for name, v := range f.Env() {
			switch x := tmpl.ResolveParameters(v).(type) {
			case string:
				env[name] = x
			case int, float64, bool:
				env[name] = fmt.Sprint(x)
			default:
				if fn, arg, ok := sam.Intrinsic(x); ok && fn == "Ref" {
					if t, ok := tables[fmt.Sprint(arg)]; ok {
						env[name] = t
					}
				}
			}
		}
	}
	// Rate limits are for deployed stacks (the template's 600 a minute);
	// locally they stay off unless the developer exports
	// RATE_LIMIT_PER_MINUTE, which the local stack keeps.
	env["RATE_LIMIT_PER_MINUTE"] = "0"
	// So are the monthly limits' defaults (the template's are sized for
	// the price of Bedrock's models; the local stand-ins cost nothing): an
	// account is limited locally by limits of its own (make limits), or by
	// defaults the developer exports (DEFAULT_MONTHLY_IMAGES=5 make run).
	for name := range env {
		if strings.HasPrefix(name, "DEFAULT_MONTHLY_") {
			env[name] = "unlimited"
		}
	}
	// The template's checksum secret exists only in AWS: locally keys carry
	// the public checksum, which the demo key and events/ have.
	env["KEY_CHECKSUM_SECRET"] = ""
	env["DYNAMODB_ENDPOINT"] = endpoint
	env["AWS_REGION"] = Region
	env["AWS_ACCESS_KEY_ID"] = "local"
	env["AWS_SECRET_ACCESS_KEY"] = "local"
	return env
}
