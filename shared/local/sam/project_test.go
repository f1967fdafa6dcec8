package sam

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
			if ev.(map[string]any)["Type"] != "HttpApi" {
				continue
			}
			if api := lookup(ev.(map[string]any), "Properties", "ApiId"); !reflect.DeepEqual(api, map[string]any{"Ref": apis[0]}) {
				t.Errorf("%s.%s ApiId = %v: without it SAM makes a second, implicit API", f.LogicalID, name, api)
			}
		}
	}
}

// What a flood may cost is bounded by settings a deployer can tune: stage
// throttling on every route and, where the account's quota allows, reserved
// concurrency; both are parameters, with defaults a fresh account deploys.
func TestProjectFloodBounds(t *testing.T) {
	tmpl := loadProject(t)
	api := tmpl.Resources[tmpl.ResourcesOfType("AWS::Serverless::HttpApi")[0]].Properties
	params := map[string]int{"ApiThrottlingRateLimit": 0, "ApiThrottlingBurstLimit": 0, "ReservedConcurrency": 0}
	for name := range params {
		p, ok := tmpl.Parameters[name]
		if !ok || p.Type != "Number" {
			t.Fatalf("parameter %s = %+v, want a Number", name, p)
		}
		params[name], _ = p.Default.(int)
	}
	if params["ApiThrottlingRateLimit"] <= 0 || params["ApiThrottlingBurstLimit"] < params["ApiThrottlingRateLimit"] {
		t.Errorf("throttling defaults rate %d burst %d", params["ApiThrottlingRateLimit"], params["ApiThrottlingBurstLimit"])
	}
	// Lambda keeps 100 of an account's concurrency unreserved; new accounts
	// may have a quota of 10, where any reservation fails the deploy.
	if params["ReservedConcurrency"] != 0 {
		t.Errorf("ReservedConcurrency defaults to %d: a new account could not deploy", params["ReservedConcurrency"])
	}
	want := map[string]any{
		"ThrottlingRateLimit":  map[string]any{"Ref": "ApiThrottlingRateLimit"},
		"ThrottlingBurstLimit": map[string]any{"Ref": "ApiThrottlingBurstLimit"},
	}
	if got := api["DefaultRouteSettings"]; !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultRouteSettings = %v, want %v", got, want)
	}
	reserved := map[string]any{"Fn::If": []any{"ReservesConcurrency",
		map[string]any{"Ref": "ReservedConcurrency"}, map[string]any{"Ref": "AWS::NoValue"}}}
	routed := map[string]bool{}
	for _, r := range tmpl.Routes() {
		routed[r.Function] = true
	}
	for _, f := range tmpl.Functions() {
		if !routed[f.LogicalID] {
			continue // not behind the API: the generator has its own cap
		}
		if got := f.Properties["ReservedConcurrentExecutions"]; !reflect.DeepEqual(got, reserved) {
			t.Errorf("%s ReservedConcurrentExecutions = %v, want %v", f.LogicalID, got, reserved)
		}
	}
}

// The HTTP API logs every request as one JSON object, to a log group kept
// for a parameter's days, with the path but never the query string (search
// terms) nor any header (keys).
func TestProjectAccessLogs(t *testing.T) {
	tmpl := loadProject(t)
	api := tmpl.Resources[tmpl.ResourcesOfType("AWS::Serverless::HttpApi")[0]].Properties
	settings, _ := api["AccessLogSettings"].(map[string]any)
	dest, _ := settings["DestinationArn"].(map[string]any)
	getAtt, _ := dest["Fn::GetAtt"].([]any)
	if len(getAtt) != 2 || getAtt[1] != "Arn" {
		t.Fatalf("AccessLogSettings.DestinationArn = %v, want !GetAtt <LogGroup>.Arn", settings["DestinationArn"])
	}
	group := tmpl.Resources[getAtt[0].(string)]
	if group.Type != "AWS::Logs::LogGroup" || !reflect.DeepEqual(group.Properties["RetentionInDays"], map[string]any{"Ref": "AccessLogRetentionDays"}) {
		t.Errorf("access log group %v = %+v, want a log group kept AccessLogRetentionDays", getAtt[0], group)
	}
	if p, ok := tmpl.Parameters["AccessLogRetentionDays"]; !ok || p.Default == nil || len(p.AllowedValues) == 0 {
		t.Errorf("parameter AccessLogRetentionDays = %+v", p)
	}
	format, _ := settings["Format"].(string)
	var fields map[string]string
	if err := json.Unmarshal([]byte(format), &fields); err != nil {
		t.Fatalf("access log format is not one JSON object: %v\n%s", err, format)
	}
	// API Gateway refuses a format without the request id.
	if fields["requestId"] != "$context.requestId" || fields["path"] != "$context.path" || fields["status"] != "$context.status" {
		t.Errorf("access log fields %v lack requestId, path or status", fields)
	}
	for name, v := range fields {
		for _, leak := range []string{"querystring", "header", "rawQueryString", "authorizer", "requestOverride"} {
			if strings.Contains(strings.ToLower(v), strings.ToLower(leak)) {
				t.Errorf("access log field %s = %s logs a %s", name, v, leak)
			}
		}
	}
}

// sam build runs `make build-<LogicalId>` in the source directory with
// ARTIFACTS_DIR set, and deploys what lands in $(ARTIFACTS_DIR)/bootstrap:
// every function must have such a target, building its own main package
// for provided.al2023 on arm64.
func TestProjectBuildTargets(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	tmpl := loadProject(t)
	root := filepath.Dir(mustFind(t))
	for _, f := range tmpl.Functions() {
		if f.Metadata["BuildMethod"] != "makefile" || f.Properties["CodeUri"] != "." {
			t.Errorf("%s: BuildMethod %v, CodeUri %v; want makefile from the module root", f.LogicalID, f.Metadata["BuildMethod"], f.Properties["CodeUri"])
			continue
		}
		if arch := f.Properties["Architectures"]; !reflect.DeepEqual(arch, []any{"arm64"}) {
			t.Errorf("%s: Architectures %v", f.LogicalID, arch)
		}
		artifacts := t.TempDir()
		cmd := exec.Command(makeBin, "--dry-run", "build-"+f.LogicalID)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "ARTIFACTS_DIR="+artifacts)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("make build-%s: %v\n%s", f.LogicalID, err, out)
			continue
		}
		pkg := "./functions/" + strings.ToLower(strings.TrimSuffix(f.LogicalID, "Function"))
		for _, want := range []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "-tags lambda.norpc,nethttpomithttp2", `-o "` + artifacts + `/bootstrap"`, pkg} {
			if !strings.Contains(string(out), want) {
				t.Errorf("make build-%s runs %s, without %s", f.LogicalID, out, want)
			}
		}
	}
}

func mustFind(t *testing.T) string {
	t.Helper()
	p, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
