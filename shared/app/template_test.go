package app_test

import (
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/crud"
	"contentapi/shared/documents"
	"contentapi/shared/images"
	"contentapi/shared/records"
	"contentapi/shared/sam"
	"contentapi/shared/store"
)

func loadTemplate(t testing.TB) *sam.Template {
	t.Helper()
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// functionResources is which resource each function of the template serves.
var functionResources = map[string]*records.Resource{
	"ImagesFunction":    images.Resource,
	"DocumentsFunction": documents.Resource,
}

var resourceTables = map[*records.Resource]string{images.Resource: "ImagesTable", documents.Resource: "DocumentsTable"}

// The store's indexes must project every attribute a list filters on, and
// never the large text fields a list must not read.
func TestTemplateTablesMatchTheStore(t *testing.T) {
	tables, err := loadTemplate(t).Tables()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]sam.Table{}
	for _, tbl := range tables {
		byID[tbl.LogicalID] = tbl
	}
	for res, id := range resourceTables {
		tbl, ok := byID[id]
		if !ok {
			t.Fatalf("template has no %s", id)
		}
		in := tbl.Input
		if in.BillingMode != types.BillingModePayPerRequest {
			t.Errorf("%s billing %s", id, in.BillingMode)
		}
		if got := keySchema(in.KeySchema); got != store.AttrAccount+" HASH, "+store.AttrID+" RANGE" {
			t.Errorf("%s key schema %s", id, got)
		}
		want := []string{store.AttrNameFold, store.AttrFavorite}
		for _, f := range res.Filters {
			want = append(want, f.Param)
		}
		if res.Scope != nil {
			want = append(want, res.Scope.Field)
		}
		// Global indexes only: a local one would cap an account at 10 GB
		// in one partition.
		indexes := map[string]string{store.IndexByID: store.AttrIDKey, store.IndexByName: store.AttrNameKey}
		if len(in.GlobalSecondaryIndexes) != len(indexes) || len(in.LocalSecondaryIndexes) != 0 {
			t.Errorf("%s: %d GSIs, %d LSIs", id, len(in.GlobalSecondaryIndexes), len(in.LocalSecondaryIndexes))
		}
		for _, gsi := range in.GlobalSecondaryIndexes {
			sortKey, ok := indexes[*gsi.IndexName]
			if !ok {
				t.Errorf("%s: unknown index %s", id, *gsi.IndexName)
				continue
			}
			if got := keySchema(gsi.KeySchema); got != store.AttrAccount+" HASH, "+sortKey+" RANGE" {
				t.Errorf("%s.%s keys %s", id, *gsi.IndexName, got)
			}
			if gsi.Projection.ProjectionType != types.ProjectionTypeInclude {
				t.Errorf("%s.%s projects %s", id, *gsi.IndexName, gsi.Projection.ProjectionType)
			}
			for _, attr := range want {
				if !slices.Contains(gsi.Projection.NonKeyAttributes, attr) {
					t.Errorf("%s.%s does not project %s, which lists filter on", id, *gsi.IndexName, attr)
				}
			}
			for _, large := range []string{"description", "prompt", "result"} {
				if slices.Contains(gsi.Projection.NonKeyAttributes, large) {
					t.Errorf("%s.%s projects %s", id, *gsi.IndexName, large)
				}
			}
		}
	}
	if got := keySchema(byID["ApiKeysTable"].Input.KeySchema); got != "key_hash HASH" || byID["ApiKeysTable"].TTLAttribute != "ttl" {
		t.Errorf("ApiKeysTable keys %s ttl %q", got, byID["ApiKeysTable"].TTLAttribute)
	}
	if got := keySchema(byID["IdempotencyTable"].Input.KeySchema); got != "idempotency_key HASH" || byID["IdempotencyTable"].TTLAttribute != "ttl" {
		t.Errorf("IdempotencyTable keys %s ttl %q", got, byID["IdempotencyTable"].TTLAttribute)
	}
}

func keySchema(ks []types.KeySchemaElement) string {
	var parts []string
	for _, k := range ks {
		parts = append(parts, *k.AttributeName+" "+string(k.KeyType))
	}
	return strings.Join(parts, ", ")
}

// Every operation the code serves has its route to the right function, and
// the template routes nothing the code does not serve.
func TestTemplateRoutesMatchTheCode(t *testing.T) {
	tmpl := loadTemplate(t)
	got := map[string][]string{}
	for _, r := range tmpl.Routes() {
		got[r.Function] = append(got[r.Function], r.Key())
	}
	for fn, res := range functionResources {
		var want []string
		paths := map[string]bool{}
		for _, r := range crud.New(res, nil, nil).Routes() {
			path := strings.ReplaceAll(r.Pattern, "{id}", "{id}")
			want = append(want, r.Method+" "+path)
			paths[path] = true
		}
		for path := range paths {
			want = append(want, "ANY "+path)
		}
		want = append(want, app.ExtraRoutes(fn)...)
		sort.Strings(want)
		sort.Strings(got[fn])
		if strings.Join(got[fn], "\n") != strings.Join(want, "\n") {
			t.Errorf("%s routes:\n got %v\nwant %v", fn, got[fn], want)
		}
	}
}

// Each function gets the environment the app reads, and only its own table.
func TestTemplateEnvironmentAndPolicies(t *testing.T) {
	tmpl := loadTemplate(t)
	common := []string{app.EnvEndpoint, app.EnvKeysTable, app.EnvIdempotency, app.EnvAuthCache, app.EnvRateLimit, app.EnvLogLevel}
	own := map[string]string{"ImagesFunction": app.EnvImagesTable, "DocumentsFunction": app.EnvDocumentsTable}
	for fn, res := range functionResources {
		f, err := tmpl.Function(fn)
		if err != nil {
			t.Fatal(err)
		}
		env := f.EnvNames()
		for _, name := range append(common, own[fn]) {
			if !slices.Contains(env, name) {
				t.Errorf("%s lacks %s", fn, name)
			}
		}
		for other, name := range own {
			if other != fn && slices.Contains(env, name) {
				t.Errorf("%s is given %s", fn, name)
			}
		}
		if to := f.Timeout(); to.Seconds() >= 30 || to <= 0 {
			t.Errorf("%s timeout %v, must be below the API's 30 s", fn, to)
		}
		statements, err := f.Statements()
		if err != nil {
			t.Fatal(err)
		}
		// What the code calls on each table: single-item writes only, no
		// transactions, no deletes (a deleted record is a tombstone).
		table := resourceTables[res]
		want := map[string][]string{
			table:              {"BatchGetItem", "GetItem", "PutItem", "Query", "UpdateItem"},
			table + "/index/*": {"BatchGetItem", "GetItem", "PutItem", "Query", "UpdateItem"},
			"ApiKeysTable":     {"GetItem", "UpdateItem"},
			"IdempotencyTable": {"UpdateItem"},
		}
		got := map[string][]string{}
		for _, st := range statements {
			if st.Effect != "Allow" {
				t.Errorf("%s has a %s statement", fn, st.Effect)
			}
			for _, r := range st.Resources {
				if r.LogicalID == "" || r.Attribute != "Arn" {
					t.Errorf("%s: resource %s is not a table of this stack", fn, r)
				}
				for _, a := range st.Actions {
					action, ok := strings.CutPrefix(a, "dynamodb:")
					if !ok || strings.Contains(a, "*") {
						t.Errorf("%s: action %s", fn, a)
					}
					got[r.LogicalID+r.Suffix] = append(got[r.LogicalID+r.Suffix], action)
				}
			}
		}
		for res, actions := range got {
			sort.Strings(actions)
			if strings.Join(actions, ",") != strings.Join(want[res], ",") {
				t.Errorf("%s on %s: %v, want %v", fn, res, actions, want[res])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s has access to %v, want %v", fn, keys(got), keys(want))
		}
	}
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cfn-lint is the authority on the template's CloudFormation; it ships on
// these machines and make test runs it too.
func TestTemplateLints(t *testing.T) {
	path, err := sam.Find()
	if err != nil {
		t.Fatal(err)
	}
	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not installed here; make lint runs it")
	}
	if out, err := exec.Command(lint, path).CombinedOutput(); err != nil {
		t.Fatalf("cfn-lint: %v\n%s", err, out)
	}
}
