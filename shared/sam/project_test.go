package sam

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestFindWalksUp(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, FileName), []byte("Resources: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	got, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	// TempDir may sit behind a symlink; compare what the paths point at.
	if a, b := mustStat(t, got), mustStat(t, filepath.Join(root, FileName)); !os.SameFile(a, b) {
		t.Errorf("Find = %s, want %s", got, filepath.Join(root, FileName))
	}
}

func TestFindReportsMissingTemplate(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "no template.yaml") {
		t.Fatalf("Find error = %v", err)
	}
}

func mustStat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// loadProject loads the repository's own template.yaml.
func loadProject(t *testing.T) *Template {
	t.Helper()
	p, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// The tests below pin the project template to the facts the code and the
// team rely on; a change to template.yaml that breaks one is a change of
// contract, not of configuration.

func TestProjectRoutes(t *testing.T) {
	var got []string
	for _, r := range loadProject(t).Routes() {
		got = append(got, r.Function+" "+r.Event+" "+r.Key())
	}
	want := []string{
		"DocumentsFunction CreateDocument POST /api/v1/documents",
		"DocumentsFunction DeleteDocument DELETE /api/v1/documents/{id}",
		"DocumentsFunction DocumentAnyMethod ANY /api/v1/documents/{id}",
		"DocumentsFunction DocumentsAnyMethod ANY /api/v1/documents",
		"DocumentsFunction GetDocument GET /api/v1/documents/{id}",
		"DocumentsFunction ListDocuments GET /api/v1/documents",
		"DocumentsFunction PatchDocument PATCH /api/v1/documents/{id}",
		"DocumentsFunction UpdateDocument PUT /api/v1/documents/{id}",
		"ImagesFunction CreateImage POST /api/v1/images",
		"ImagesFunction DefaultRoute $default",
		"ImagesFunction DeleteImage DELETE /api/v1/images/{id}",
		"ImagesFunction GetImage GET /api/v1/images/{id}",
		"ImagesFunction ImageAnyMethod ANY /api/v1/images/{id}",
		"ImagesFunction ImagesAnyMethod ANY /api/v1/images",
		"ImagesFunction ListImages GET /api/v1/images",
		"ImagesFunction OpenApiDocument GET /api/v1/openapi.json",
		"ImagesFunction PatchImage PATCH /api/v1/images/{id}",
		"ImagesFunction UpdateImage PUT /api/v1/images/{id}",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("routes:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func TestProjectFunctions(t *testing.T) {
	tmpl := loadProject(t)
	common := []string{"API_KEYS_TABLE", "AUTH_CACHE_SECONDS", "DYNAMODB_ENDPOINT", "IDEMPOTENCY_TABLE", "LOG_LEVEL", "RATE_LIMIT_PER_MINUTE"}
	tests := []struct {
		id, table, tableVar, logGroup string
	}{
		{"ImagesFunction", "ImagesTable", "IMAGES_TABLE", "ImagesLogGroup"},
		{"DocumentsFunction", "DocumentsTable", "DOCUMENTS_TABLE", "DocumentsLogGroup"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			f, err := tmpl.Function(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			p := f.Properties
			fixed := map[string]any{
				"CodeUri":       ".",
				"Runtime":       "provided.al2023",
				"Architectures": []any{"arm64"},
				"Handler":       "bootstrap",
				"MemorySize":    256,
				"Tracing":       "Active",
			}
			for k, v := range fixed {
				if !reflect.DeepEqual(p[k], v) {
					t.Errorf("%s = %#v, want %#v", k, p[k], v)
				}
			}
			if f.Timeout() != 10*time.Second {
				t.Errorf("Timeout = %v", f.Timeout())
			}
			if f.Metadata["BuildMethod"] != "makefile" {
				t.Errorf("Metadata = %v, want BuildMethod makefile", f.Metadata)
			}
			if lg := lookup(p, "LoggingConfig", "LogGroup"); !reflect.DeepEqual(lg, map[string]any{"Ref": tt.logGroup}) {
				t.Errorf("LoggingConfig.LogGroup = %v", lg)
			}
			if r := tmpl.Resources[tt.logGroup]; r.Type != "AWS::Logs::LogGroup" ||
				!reflect.DeepEqual(r.Properties["RetentionInDays"], map[string]any{"Ref": "LogRetentionDays"}) {
				t.Errorf("log group %s = %+v", tt.logGroup, r)
			}

			wantEnv := append([]string{tt.tableVar}, common...)
			sort.Strings(wantEnv)
			if got := f.EnvNames(); !reflect.DeepEqual(got, wantEnv) {
				t.Errorf("env = %v, want %v", got, wantEnv)
			}
			env := f.Env()
			for name, want := range map[string]any{
				tt.tableVar:             map[string]any{"Ref": tt.table},
				"API_KEYS_TABLE":        map[string]any{"Ref": "ApiKeysTable"},
				"IDEMPOTENCY_TABLE":     map[string]any{"Ref": "IdempotencyTable"},
				"AUTH_CACHE_SECONDS":    map[string]any{"Ref": "AuthCacheSeconds"},
				"RATE_LIMIT_PER_MINUTE": map[string]any{"Ref": "RateLimitPerMinute"},
				"DYNAMODB_ENDPOINT":     "",
			} {
				if !reflect.DeepEqual(env[name], want) {
					t.Errorf("env %s = %#v, want %#v", name, env[name], want)
				}
			}

			stmts, err := f.Statements()
			if err != nil {
				t.Fatal(err)
			}
			wantStmts := []Statement{
				{Effect: "Allow", Actions: []string{
					"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
					"dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:ConditionCheckItem",
				}, Resources: []ARN{
					{LogicalID: tt.table, Attribute: "Arn"},
					{LogicalID: tt.table, Attribute: "Arn", Suffix: "/index/*"},
				}},
				{Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}, Resources: []ARN{
					{LogicalID: "ApiKeysTable", Attribute: "Arn"},
				}},
				{Effect: "Allow", Actions: []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}, Resources: []ARN{
					{LogicalID: "IdempotencyTable", Attribute: "Arn"},
				}},
			}
			if !reflect.DeepEqual(stmts, wantStmts) {
				t.Errorf("statements:\n got %+v\nwant %+v", stmts, wantStmts)
			}
		})
	}
}

func TestProjectTables(t *testing.T) {
	tmpl := loadProject(t)
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Table{}
	for _, tbl := range tables {
		byID[tbl.LogicalID] = tbl
		if tbl.Input.BillingMode != types.BillingModePayPerRequest {
			t.Errorf("%s billing = %s", tbl.LogicalID, tbl.Input.BillingMode)
		}
		if len(tbl.Input.GlobalSecondaryIndexes) != 0 {
			t.Errorf("%s has GSIs; lists rely on strongly consistent LSIs", tbl.LogicalID)
		}
		r := tmpl.Resources[tbl.LogicalID]
		if !reflect.DeepEqual(r.Properties["DeletionProtectionEnabled"], map[string]any{"Ref": "DeletionProtection"}) ||
			!reflect.DeepEqual(lookup(r.Properties, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled"), true) ||
			!reflect.DeepEqual(lookup(r.Properties, "SSESpecification", "SSEEnabled"), true) {
			t.Errorf("%s lacks deletion protection, PITR or SSE: %v", tbl.LogicalID, r.Properties)
		}
	}
	if got, want := keysOf(byID), []string{"ApiKeysTable", "DocumentsTable", "IdempotencyTable", "ImagesTable"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tables = %v, want %v", got, want)
	}

	// Both hold items that expire: rate-limit windows, idempotency records.
	for id, key := range map[string]string{"ApiKeysTable": "key_hash HASH", "IdempotencyTable": "idempotency_key HASH"} {
		tbl := byID[id]
		if got := schema(tbl.Input.KeySchema); got != key || tbl.TTLAttribute != "ttl" {
			t.Errorf("%s key %q, ttl %q; want %q, ttl", id, got, tbl.TTLAttribute, key)
		}
	}

	for id, nonKey := range map[string][]string{
		"ImagesTable":    {"name_fold", "favorite", "resolution", "style", "medium", "filter"},
		"DocumentsTable": {"name_fold", "favorite", "template_id"},
	} {
		in := byID[id].Input
		if got := schema(in.KeySchema); got != "account HASH, id RANGE" {
			t.Errorf("%s key = %s", id, got)
		}
		var defs []string
		for _, d := range in.AttributeDefinitions {
			defs = append(defs, aws.ToString(d.AttributeName)+" "+string(d.AttributeType))
		}
		if want := []string{"account S", "id N", "id_key N", "name_key S"}; !reflect.DeepEqual(defs, want) {
			t.Errorf("%s attributes = %v, want %v", id, defs, want)
		}
		var lsis []string
		for _, x := range in.LocalSecondaryIndexes {
			if x.Projection.ProjectionType != types.ProjectionTypeInclude || !reflect.DeepEqual(x.Projection.NonKeyAttributes, nonKey) {
				t.Errorf("%s index %s projects %v", id, aws.ToString(x.IndexName), x.Projection)
			}
			lsis = append(lsis, aws.ToString(x.IndexName)+": "+schema(x.KeySchema))
		}
		if want := []string{"by_id: account HASH, id_key RANGE", "by_name: account HASH, name_key RANGE"}; !reflect.DeepEqual(lsis, want) {
			t.Errorf("%s LSIs = %v, want %v", id, lsis, want)
		}
	}
}

func TestProjectHTTPAPI(t *testing.T) {
	tmpl := loadProject(t)
	apis := tmpl.ResourcesOfType("AWS::Serverless::HttpApi")
	if len(apis) != 1 {
		t.Fatalf("HTTP APIs = %v, want one", apis)
	}
	// A named stage would put its name in rawPath and break every route.
	if stage := tmpl.Resources[apis[0]].Properties["StageName"]; stage != "$default" {
		t.Errorf("StageName = %v", stage)
	}
	for _, f := range tmpl.Functions() {
		events, _ := f.Properties["Events"].(map[string]any)
		for name, ev := range events {
			if api := lookup(ev.(map[string]any), "Properties", "ApiId"); !reflect.DeepEqual(api, map[string]any{"Ref": apis[0]}) {
				t.Errorf("%s.%s ApiId = %v: without it SAM makes a second, implicit API", f.LogicalID, name, api)
			}
		}
	}
}

func schema(ks []types.KeySchemaElement) string {
	var parts []string
	for _, k := range ks {
		parts = append(parts, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	return strings.Join(parts, ", ")
}

func keysOf[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
