package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/local/sam"
)

func loadTemplate(t testing.TB) *sam.Template {
	t.Helper()
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// The tables are billed per request and have global indexes only: a local
// one would cap an account at 10 GB in one partition. Their keys and
// indexes are their packages' Schema (store, auth, ratelimit, idempotency,
// hookstore), which make generate writes, and so are the attributes their
// TTL drops items by; the keys table drops nothing by TTL: an expired key's
// item stays, and the code refuses it on every request.
func TestTemplateTables(t *testing.T) {
	tables, err := loadTemplate(t).Tables()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]sam.Table{}
	for _, tbl := range tables {
		byID[tbl.LogicalID] = tbl
		if in := tbl.Input; in.BillingMode != types.BillingModePayPerRequest || len(in.LocalSecondaryIndexes) != 0 {
			t.Errorf("%s: billing %s, %d local indexes", tbl.LogicalID, in.BillingMode, len(in.LocalSecondaryIndexes))
		}
	}
	for _, r := range app.Resources {
		if _, ok := byID[r.Table()]; !ok {
			t.Errorf("template has no %s", r.Table())
		}
	}
	if ttl := byID["ApiKeysTable"].TTLAttribute; ttl != "" {
		t.Errorf("ApiKeysTable drops keys by TTL on %s", ttl)
	}
}

// Only the resources' functions are routed: their routes, which make
// generate writes from the code (cmd/listgen), are all the API has.
func TestTemplateRoutesOnlyTheResources(t *testing.T) {
	functions := map[string]bool{}
	for _, res := range app.Resources {
		functions[res.Function()] = true
	}
	for _, r := range loadTemplate(t).Routes() {
		if !functions[r.Function] {
			t.Errorf("the template routes %s to %s, which serves no resource", r.Key(), r.Function)
		}
	}
}

// Each function's own table is its resource's, and the first resource's
// function, which serves the usage, reads every resource's counter item.
// Which variables each function gets is app.DeployedEnv's, which make
// generate holds the template to (cmd/listgen). Least privilege: a function
// may read keys but never write them (a bug could otherwise revoke, restore
// or move a key); it writes only its own table, the rate-limit counters and
// idempotency records, and reads other resources' tables only to serve the
// usage.
func TestTemplateEnvironmentAndPolicies(t *testing.T) {
	tmpl := loadTemplate(t)
	for _, res := range app.Resources {
		fn := res.Function()
		servesUsage := slices.Contains(app.ExtraRoutes(fn), "GET "+app.UsagePath)
		f, err := tmpl.Function(fn)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Env()[res.TableEnv()]; !reflect.DeepEqual(got, map[string]any{"Ref": res.Table()}) {
			t.Errorf("%s: %s is %v, want !Ref %s", fn, res.TableEnv(), got, res.Table())
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
		table := res.Table()
		want := map[string][]string{
			table:              {"BatchGetItem", "GetItem", "PutItem", "Query", "UpdateItem"},
			table + "/index/*": {"BatchGetItem", "GetItem", "PutItem", "Query", "UpdateItem"},
			"ApiKeysTable":     {"GetItem"},
			"RateLimitTable":   {"UpdateItem"},
			"IdempotencyTable": {"UpdateItem"},
		}
		for _, other := range app.Resources {
			if other.Def != res.Def && servesUsage {
				want[other.Table()] = []string{"GetItem"}
			}
		}
		// The records its records name (a document's voice) it only reads.
		for _, name := range app.NamedBy(res) {
			want[upperFirst(name)+"Table"] = []string{"GetItem"}
		}
		// Its generations' worst cases it holds, and gives back, on the
		// accounts' spend ledgers in the first generated resource's table.
		if ledger := app.Resources[slices.IndexFunc(app.Resources, func(r app.Resource) bool { return r.Def.Content != nil })]; res.Def.Content != nil && ledger.Def != res.Def && !servesUsage {
			want[ledger.Table()] = []string{"UpdateItem"}
		}
		// The function that serves the usage serves the webhook endpoints
		// too: registration and delete are transactions of a Put or
		// Delete with the count's Update; a test event is queued in its
		// endpoint's lane.
		wantSQS := []string(nil)
		if servesUsage {
			want["WebhooksTable"] = []string{"DeleteItem", "GetItem", "PutItem", "Query", "UpdateItem"}
			wantSQS = []string{"SendMessage WebhookDeliveries", "SendMessage WebhookSlowLane"}
		}
		var gotSQS []string
		got := map[string][]string{}
		for _, st := range statements {
			if st.Condition == generationOn {
				continue // generation's own grants: TestTemplateGeneration
			}
			if st.Effect != "Allow" {
				t.Errorf("%s has a %s statement", fn, st.Effect)
			}
			for _, r := range st.Resources {
				if r.LogicalID == "" || r.Attribute != "Arn" {
					t.Errorf("%s: resource %s is not a table of this stack", fn, r)
				}
				for _, a := range st.Actions {
					if action, ok := strings.CutPrefix(a, "sqs:"); ok {
						gotSQS = append(gotSQS, action+" "+r.LogicalID)
						continue
					}
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
		if !slices.Equal(gotSQS, wantSQS) {
			t.Errorf("%s may on SQS %v, want %v", fn, gotSQS, wantSQS)
		}
		if actions := got["ApiKeysTable"]; len(actions) != 1 || actions[0] != "GetItem" {
			t.Errorf("%s may %v on the keys table; it must only read it", fn, actions)
		}
		checkChecksumSecret(t, tmpl, fn, f.Env()[app.EnvKeyChecksum])
	}
}

// The functions get the keys' checksum secret from a secret the stack
// generates, long enough for auth.NewChecksum and kept with the keys.
func checkChecksumSecret(t *testing.T, tmpl *sam.Template, fn string, v any) {
	t.Helper()
	name, arg, _ := sam.Intrinsic(v)
	ref, _ := arg.(string)
	const prefix, suffix = "{{resolve:secretsmanager:${", "}:SecretString}}"
	if name != "Fn::Sub" || !strings.HasPrefix(ref, prefix) || !strings.HasSuffix(ref, suffix) {
		t.Errorf("%s.%s = %v, want a secretsmanager dynamic reference", fn, app.EnvKeyChecksum, v)
		return
	}
	id := strings.TrimSuffix(strings.TrimPrefix(ref, prefix), suffix)
	secret := tmpl.Resources[id]
	length, _ := secret.Properties["GenerateSecretString"].(map[string]any)["PasswordLength"].(int)
	if secret.Type != "AWS::SecretsManager::Secret" || length < auth.MinSecretLen || secret.DeletionPolicy != "Retain" {
		t.Errorf("%s: secret %s is %+v; want a generated secret of at least %d characters, retained like the keys", fn, id, secret, auth.MinSecretLen)
	}
	if out := tmpl.Outputs["KeyChecksumSecretArn"]; !reflect.DeepEqual(out["Value"], map[string]any{"Ref": id}) {
		t.Errorf("output KeyChecksumSecretArn = %v: the apikey command needs the secret's ARN", out)
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

// Each resource's function is in the template and built from its folder
// under functions/ (the Makefile's build-<Function> targets derive one from
// the other).
func TestEveryResourceHasItsFunction(t *testing.T) {
	tmpl := loadTemplate(t)
	path, err := sam.Find()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range app.Resources {
		f, err := tmpl.Function(r.Function())
		if err != nil {
			t.Errorf("%s: %v", r.Def.Name, err)
			continue
		}
		if f.Metadata["BuildMethod"] != "makefile" {
			t.Errorf("%s builds with %v, want the Makefile", f.LogicalID, f.Metadata["BuildMethod"])
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), "functions", r.Def.Name, "main.go")); err != nil {
			t.Errorf("%s: %v", f.LogicalID, err)
		}
	}
}
