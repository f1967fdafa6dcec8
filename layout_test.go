package contentapi_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"contentapi/shared/app"
	"contentapi/shared/records"
)

// deps lists each package matching patterns with its transitive imports,
// as the go command resolves them for a build (test files left out).
func deps(t *testing.T, patterns ...string) map[string][]string {
	return list(t, "Deps", patterns...)
}

// imports lists each package matching patterns with its direct imports.
func imports(t *testing.T, patterns ...string) map[string][]string {
	return list(t, "Imports", patterns...)
}

func list(t *testing.T, field string, patterns ...string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-f", `{{.ImportPath}} {{join .` + field + ` " "}}`}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		m[fields[0]] = fields[1:]
	}
	return m
}

// What ships carries no test code and nothing of the local stack: test
// helpers live in packages of their own (as net/http/httptest does).
func TestBinariesLinkNoTestCode(t *testing.T) {
	for pkg, imports := range deps(t, "./cmd/...", "./functions/...") {
		for _, imp := range imports {
			if imp == "testing" || strings.HasSuffix(imp, "test") && strings.HasPrefix(imp, "contentapi/") {
				t.Errorf("%s links %s", pkg, imp)
			}
		}
	}
	for pkg, imports := range deps(t, "./functions/...") {
		for _, imp := range imports {
			if strings.HasPrefix(imp, "contentapi/shared/local/") {
				t.Errorf("the function %s links %s, a package of the local stack", pkg, imp)
			}
		}
	}
}

// HTTP sits above the domain: records and store (and what they import of
// ours) use no HTTP, return the domain's errors, and only the HTTP layer
// turns those into statuses. The AWS SDK underneath the store speaks HTTP
// to DynamoDB, so for the store only its own imports are checked.
func TestDomainKnowsNoHTTP(t *testing.T) {
	domain := []string{"./shared/records", "./shared/store", "./shared/fold"}
	for pkg, all := range deps(t, domain...) {
		for _, imp := range all {
			if imp == "contentapi/shared/httpapi" || imp == "contentapi/shared/crud" ||
				pkg != "contentapi/shared/store" && strings.HasPrefix(imp, "net/http") {
				t.Errorf("%s depends on %s", pkg, imp)
			}
		}
	}
	for pkg, direct := range imports(t, domain...) {
		for _, imp := range direct {
			if strings.HasPrefix(imp, "net/http") {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}

// resourcePackages are the packages that declare the resources the
// service serves: each one's, known by the type its records read as.
func resourcePackages(t *testing.T) []string {
	var pkgs []string
	for _, r := range app.Resources {
		v, err := r.Def.Render.Render(nothingStored{}, records.View{})
		if err != nil {
			t.Fatalf("%s: rendering an empty record: %v", r.Def.Name, err)
		}
		pkgs = append(pkgs, reflect.TypeOf(v).PkgPath())
	}
	return pkgs
}

// nothingStored is a stored record with no attributes.
type nothingStored struct{}

func (nothingStored) Decode(any) error { return nil }

// A resource is its declaration, in the domain's terms: its fields, how
// its records read, what it generates. It knows neither the storage nor
// its encoding, and the machinery that stores, serves and generates knows
// no resource, so that adding one is its package and the few edits
// docs/architecture.md lists ("Adding a resource").
func TestResourcesAreDeclarations(t *testing.T) {
	resources := resourcePackages(t)
	if len(resources) != len(app.Resources) || slices.Contains(resources, "") {
		t.Fatalf("resource packages %q", resources)
	}
	for pkg, all := range deps(t, resources...) {
		for _, imp := range all {
			if imp == "contentapi/shared/store" || strings.HasPrefix(imp, "github.com/aws/aws-sdk-go-v2/feature/dynamodb/") ||
				strings.HasPrefix(imp, "github.com/aws/aws-sdk-go-v2/service/dynamodb") {
				t.Errorf("the resource %s depends on %s", pkg, imp)
			}
		}
	}
	machinery := []string{"./shared/generator", "./shared/crud", "./shared/store", "./shared/records", "./shared/generation"}
	for pkg, all := range deps(t, machinery...) {
		for _, imp := range all {
			if slices.Contains(resources, imp) {
				t.Errorf("%s depends on the resource %s", pkg, imp)
			}
		}
	}
}

// Bedrock's control-plane client (service/bedrock) is make preflight's,
// run by an operator: no function calls the control plane, so none links
// it and pays for it in its bootstrap.
func TestFunctionsLinkNoBedrockControlPlane(t *testing.T) {
	for pkg, imports := range deps(t, "./functions/...") {
		for _, imp := range imports {
			if imp == "github.com/aws/aws-sdk-go-v2/service/bedrock" || strings.HasPrefix(imp, "github.com/aws/aws-sdk-go-v2/service/bedrock/") {
				t.Errorf("%s links %s", pkg, imp)
			}
		}
	}
}

// Each function links the AWS services beyond DynamoDB that it calls, and
// no other: every service linked is package init paid at each cold start.
// Its main passes the parts it calls (app.Parts); this holds them to what
// the function does, both ways. An API function calls the models where its
// resource is generated and the bucket where that is pictures; the first
// resource's also serves the webhooks, which queue a test event. The
// generator calls the models, keeps pictures and publishes the ends; the
// sender takes deliveries and gives image events fresh URLs; the tally
// only counts.
func TestFunctionsLinkOnlyTheirServices(t *testing.T) {
	const (
		models   = "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
		pictures = "github.com/aws/aws-sdk-go-v2/service/s3"
		queue    = "github.com/aws/aws-sdk-go-v2/service/sqs"
	)
	want := map[string][]string{}
	anyPictures := false
	for i, r := range app.Resources {
		var services []string
		if c := r.Def.Content; c != nil {
			services = append(services, models)
			if c.Picture {
				services, anyPictures = append(services, pictures), true
			}
		}
		if i == 0 {
			services = append(services, queue)
		}
		want["contentapi/functions/"+r.Def.Name] = services
	}
	want["contentapi/functions/generator"] = []string{models, queue}
	want["contentapi/functions/sender"] = []string{queue}
	if anyPictures {
		want["contentapi/functions/generator"] = append(want["contentapi/functions/generator"], pictures)
		want["contentapi/functions/sender"] = append(want["contentapi/functions/sender"], pictures)
	}
	want["contentapi/functions/tally"] = nil
	for pkg, all := range deps(t, "./functions/...") {
		services, ok := want[pkg]
		if !ok {
			t.Errorf("%s: a function this test does not know", pkg)
			continue
		}
		var linked []string
		for _, imp := range all {
			if imp == models || imp == pictures || imp == queue {
				linked = append(linked, imp)
			}
		}
		slices.Sort(linked)
		slices.Sort(services)
		if !slices.Equal(linked, services) {
			t.Errorf("%s links %v, want %v (the services it calls)", pkg, linked, services)
		}
	}
}

// maxBootstrapBytes is a function's bound (BENCHMARKS.md's
// bytes_bootstrap): the size of the file, as `make build` writes it.
const maxBootstrapBytes = 16_000_000

// Every function's bootstrap, built as the Makefile builds what is
// deployed, stays within maxBootstrapBytes.
func TestBootstrapsFit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every function")
	}
	make, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	dir := t.TempDir()
	cmd := exec.Command(make, "--no-print-directory", "build", "BUILD_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	functions, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(imports(t, "./functions/...")); len(functions) != n {
		t.Fatalf("make build made %d bootstraps for %d functions", len(functions), n)
	}
	for _, f := range functions {
		st, err := os.Stat(filepath.Join(dir, f.Name(), "bootstrap"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", f.Name(), st.Size())
		if st.Size() > maxBootstrapBytes {
			t.Errorf("%s's bootstrap is %d bytes, past its %d", f.Name(), st.Size(), maxBootstrapBytes)
		}
	}
}

// The bench stays in proportion to what it measures: its generic harness
// (seeding, load, the local stack, builds, figures, prices) lives in
// shared/local, and cmd/bench holds what is particular to its figures and
// the report's prose, within this many non-blank lines (2000 until the
// compression figures and the cost targets of issue 26, whose generic
// parts are bench.GzipFigures and bench.CostModel.Figures; 2100 until the
// webhooks' figures of issue 27, whose generic parts are
// stack.WebhookQueue and bench.CostModel.Delivery).
func TestBenchInProportion(t *testing.T) {
	const most = 2400
	files, err := filepath.Glob("cmd/bench/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("cmd/bench: %v (%d files)", err, len(files))
	}
	lines := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			if strings.TrimSpace(line) != "" {
				lines++
			}
		}
	}
	if lines > most {
		t.Errorf("cmd/bench has %d non-blank lines, more than %d: move what is not particular to its figures into a shared/local package", lines, most)
	}
}

// go.mod lists what the functions link apart from what only the tests, the
// local stack and the tools use: its first require block, under its
// comment, is exactly the modules the functions link that the code
// imports itself, and the second the other direct requirements. A second
// module for the local stack and the commands would not say it: the
// shipping packages' own tests import the local stack, so go mod tidy
// would list its requirements here all the same.
func TestGoModListsWhatTheFunctionsLinkFirst(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string][]string{}
	var comment, in string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "//") && in == "":
			comment = line
		case line == "require (":
			in = comment
		case line == ")":
			in, comment = "", ""
		case in != "" && !strings.HasSuffix(line, "// indirect"):
			blocks[in] = append(blocks[in], strings.Fields(line)[0])
		}
	}
	const linked, others = "// What the functions link (go list -deps ./functions/...).", "// What only the tests, the local stack and the tools use."
	if len(blocks) != 2 || blocks[linked] == nil || blocks[others] == nil {
		t.Fatalf("go.mod's direct requirements are not in two blocks under %q and %q: %q", linked, others, blocks)
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "./functions/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	links := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		links[m] = true
	}
	for _, m := range blocks[linked] {
		if !links[m] {
			t.Errorf("go.mod lists %s as linked by the functions; none links it: move it to the second block", m)
		}
	}
	for _, m := range blocks[others] {
		if links[m] {
			t.Errorf("the functions link %s: move it to go.mod's first block", m)
		}
	}
}
