package listgen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/documents"
	"contentapi/shared/local/sam"
	"contentapi/shared/records"

	"gopkg.in/yaml.v3"
)

// repo is the repository's root, from this package's directory.
const repo = "../../.."

// The documents are what make generate writes: a list edited in Go and not
// generated, or edited by hand in a document, fails here.
func TestDocumentsAreGenerated(t *testing.T) {
	srcs, err := Read(repo)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Generate(srcs, app.Resources)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range out {
		disk, err := os.ReadFile(filepath.Join(repo, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(disk) != string(want) {
			t.Errorf("%s is not what the code declares: run make generate", name)
		}
	}
	if len(out) != len(Documents)+2 {
		t.Errorf("generate wrote %d files", len(out))
	}
}

const doc = `# A document.
a:
  # make generate: letters
  enum: [x, y,
    z]   # said of the list

  # make generate: nullable
  enum2: ['x', null]
  anyOf:
    - $ref: '#/b'
    # make generate: pattern
    - pattern: "^old\u3000$"
  # make generate: prose
  description: |
    Old prose,
    on two lines.

  # make generate: max
  maximum: 3 # a comment
  other: [kept, 'as', written]
`

func values() map[string]*yaml.Node {
	return map[string]*yaml.Node{
		"letters":  list([]string{"a", "b", "c, d", "true", "on"}),
		"nullable": list([]string{"a", ""}),
		"pattern":  quoted("^[\t \u3000]\\d\"$"),
		"prose":    {Kind: yaml.ScalarNode, Style: yaml.LiteralStyle, Value: "New prose, " + strings.Repeat("an item, ", 12) + "the end.\n"},
		"max":      plain("!!int", "52"),
		// A value a flow scalar cannot carry: its line break folds.
		"folding": plain("!!str", "a\nb: 1"),
	}
}

// Only the marked values change, each as the code declares it, and the
// rest stays as written: comments, blank lines, quoting, flow lists.
func TestRewriteChangesOnlyTheMarkedValues(t *testing.T) {
	used := map[string]bool{}
	out, err := Rewrite([]byte(doc), values(), used)
	if err != nil {
		t.Fatal(err)
	}
	want := `# A document.
a:
  # make generate: letters
  enum: [a, b, 'c, d', 'true', 'on']   # said of the list

  # make generate: nullable
  enum2: [a, null]
  anyOf:
    - $ref: '#/b'
    # make generate: pattern
    - pattern: "^[\t \u3000]\\d\"$"
  # make generate: prose
  description: |
    New prose, an item, an item, an item, an item, an item, an item, an item, an item, an item,
    an item, an item, an item, the end.

  # make generate: max
  maximum: 52 # a comment
  other: [kept, 'as', written]
`
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	if len(used) != 5 {
		t.Errorf("used %v, want all five", used)
	}
	again, err := Rewrite(out, values(), used)
	if err != nil || string(again) != string(out) {
		t.Errorf("a second run changed the document (%v):\n%s", err, again)
	}
}

// A run of keys is written whole, between its mark and its end, and a
// loop's mark names its collection; the keys around them stay as written.
func TestRewriteRunsAndLoops(t *testing.T) {
	src := `paths:
  # make generate: run
  /old: {get: {}}
  /older:
    get: {}
  # make generate: end of run

  /kept: {get: {}} # as written
Resources:
  # make generate: letters
  Fn::ForEach::Copies:
    - Name
    - [x]
    - ${Name}Topic: {Type: AWS::SNS::Topic}
`
	vals := values()
	vals["run"] = &yaml.Node{Kind: yaml.ScalarNode, Tag: runTag, Value: "/new:\n  get:\n    summary: New\n/newer: {}\n"}
	used := map[string]bool{}
	out, err := Rewrite([]byte(src), vals, used)
	if err != nil {
		t.Fatal(err)
	}
	want := `paths:
  # make generate: run
  /new:
    get:
      summary: New
  /newer: {}
  # make generate: end of run

  /kept: {get: {}} # as written
Resources:
  # make generate: letters
  Fn::ForEach::Copies:
    - Name
    - [a, b, 'c, d', 'true', 'on']
    - ${Name}Topic: {Type: AWS::SNS::Topic}
`
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	if !used["run"] || !used["letters"] {
		t.Errorf("used %v", used)
	}
	if again, err := Rewrite(out, vals, used); err != nil || string(again) != string(out) {
		t.Errorf("a second run changed the document (%v):\n%s", err, again)
	}
	for _, tc := range []struct{ name, doc, err string }{
		{"a run without its end", "k:\n  # make generate: run\n  /old: {}\n", "is a run of keys where it ends"},
		{"an end where no run is declared", "k:\n  # make generate: max\n  m: 1\n  # make generate: end of max\n", "is a run of keys where it ends"},
		{"an end without its mark", "k:\n  m: 1\n  # make generate: end of run\n", "marks no key"},
		{"a loop that is not one", "R:\n  # make generate: letters\n  Fn::ForEach::X: [a, b]\n", "not [identifier, collection, fragment]"},
	} {
		if _, err := Rewrite([]byte(tc.doc), vals, map[string]bool{}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
		}
	}
}

func TestRewriteWrapsLongLists(t *testing.T) {
	long := list(strings.Fields(strings.Repeat("item_name ", 20)))
	out, err := Rewrite([]byte("k:\n  # make generate: long\n  enum: []\n"), map[string]*yaml.Node{"long": long}, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	for _, l := range lines[2:] {
		if len(l) > width {
			t.Errorf("%d characters: %q", len(l), l)
		}
	}
	if !strings.HasPrefix(lines[3], "    item_name,") {
		t.Errorf("a continued line is indented two more than its key: %q", lines[3])
	}
}

func TestRewriteRefuses(t *testing.T) {
	for _, tc := range []struct{ name, doc, err string }{
		{"unknown name", "# make generate: nothing\nk: v\n", "names nothing"},
		{"block list for a flow one", "# make generate: letters\nk:\n  - a\n", "one of its kind"},
		{"plain scalar on two lines", "# make generate: max\nk: a\n  b\n", "spans lines"},
		{"not YAML", "k: [\n", "did not find"},
		{"a value that reads back otherwise", "# make generate: folding\nk: [x]\n", "reads otherwise"},
		// A marker that marks no key would leave its value unwritten.
		{"another comment line under the marker", "a:\n  # make generate: max\n  # said of maximum\n  maximum: 3\n", "line 2: \"# make generate:\" marks no key"},
		{"a blank line under the marker", "a: 1\n# make generate: max\n\nmaximum: 3\n", "line 2: \"# make generate:\" marks no key"},
		{"a marker after the value", "maximum: 3 # make generate: max\n", "line 1: \"# make generate:\" marks no key"},
		{"a marked key and a stray marker", "# make generate: max\nm: 3\n# make generate: max\n# said of n\nn: 4\n", "line 3: \"# make generate:\" marks no key"},
	} {
		_, err := Rewrite([]byte(tc.doc), values(), map[string]bool{})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
		}
	}
}

// A declared value no document marks would be a list left to a hand-kept
// copy: generate refuses it.
func TestEveryDeclaredValueIsMarked(t *testing.T) {
	srcs, err := Read(repo)
	if err != nil {
		t.Fatal(err)
	}
	srcs["openapi.yaml"] = []byte(strings.Replace(string(srcs["openapi.yaml"]), marker+"generation.Codes\n", "\n", 1))
	if _, err := Generate(srcs, app.Resources); err == nil || !strings.Contains(err.Error(), "generation.Codes") {
		t.Fatalf("generate with generation.Codes unmarked: %v", err)
	}
}

// Each brief's id is followed by its template's name, whatever was there.
func TestNameTemplates(t *testing.T) {
	src := "system: {}\ndocuments:\n  - id: 1 # a stale name\n    shape: prose\n  - id: 2\n    shape: prose\n"
	out, err := NameTemplates([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := "system: {}\ndocuments:\n  - id: 1 # " + documents.Templates[1] + "\n    shape: prose\n  - id: 2 # " + documents.Templates[2] + "\n    shape: prose\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if _, err := NameTemplates([]byte("documents:\n  - id: 999\n")); err == nil || !strings.Contains(err.Error(), "no template") {
		t.Errorf("an unknown id: %v", err)
	}
}

// A marked block mapping is replaced line for line under its key, comments
// inside it included; what follows it stays.
func TestRewriteBlockMapping(t *testing.T) {
	src := `Fn:
  # make generate: events
  Events:
    Old:
      Type: HttpApi
    # a comment of the old block

    Older: {}

  Next: kept
`
	events := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "New", HeadComment: "# why"},
		{Kind: yaml.MappingNode, Content: []*yaml.Node{
			plain("!!str", "Properties"),
			{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{
				plain("!!str", "ApiId"), {Kind: yaml.ScalarNode, Tag: "!Ref", Value: "HttpApi"},
				plain("!!str", "Path"), plain("!!str", "/a/{id}"),
			}},
		}},
	}}
	out, err := Rewrite([]byte(src), map[string]*yaml.Node{"events": events}, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	want := `Fn:
  # make generate: events
  Events:
    # why
    New:
      Properties: {ApiId: !Ref HttpApi, Path: '/a/{id}'}

  Next: kept
`
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	if _, err := Rewrite([]byte("# make generate: events\nEvents: [a]\n"), map[string]*yaml.Node{"events": events}, map[string]bool{}); err == nil {
		t.Error("a block mapping replaced a flow list")
	}
}

// A list that copies a declared one without its mark is found: nobody
// would regenerate it.
func TestUnmarkedCopiesAreFound(t *testing.T) {
	src := "a:\n  # make generate: letters\n  enum: [a, b, 'c, d', 'true', 'on']\nb:\n  enum: [a, b, 'c, d', 'true', 'on']\n"
	err := Unmarked([]byte(src), values())
	if err == nil || !strings.Contains(err.Error(), "line 5 copies letters") {
		t.Fatalf("Unmarked = %v, want the copy on line 5", err)
	}
	if err := Unmarked([]byte(src[:strings.Index(src, "b:")]), values()); err != nil {
		t.Errorf("the marked list alone: %v", err)
	}
}

// A marked block sequence is replaced item for item, tags kept.
func TestRewriteBlockSequence(t *testing.T) {
	src := "Statement:\n  - Effect: Allow\n    # make generate: tables\n    Resource:\n      - !GetAtt Old.Arn\n    Action: x\n"
	tables := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!GetAtt", Value: "A.Arn"},
		{Kind: yaml.ScalarNode, Tag: "!Sub", Value: "${B.Arn}/index/x"},
	}}
	out, err := Rewrite([]byte(src), map[string]*yaml.Node{"tables": tables}, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Statement:\n  - Effect: Allow\n    # make generate: tables\n    Resource:\n      - !GetAtt A.Arn\n      - !Sub '${B.Arn}/index/x'\n    Action: x\n"
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

// A mapping marked "each name from its comment" has each key that names
// its source rewritten from it; the values, the comments and a key that
// names none stay as written.
func TestRewriteKeys(t *testing.T) {
	src := "Environment:\n  # make generate: each name from its comment\n  Variables:\n    # why\n    OLD_NAME: !Ref Table  # app.EnvX\n    KEPT: '1'\n    SAME: [a, b]  # app.EnvY\n"
	names := map[string]*yaml.Node{"app.EnvX": plain("!!str", "NEW_NAME"), "app.EnvY": plain("!!str", "SAME")}
	used := map[string]bool{}
	out, err := Rewrite([]byte(src), names, used)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(src, "OLD_NAME:", "NEW_NAME:", 1)
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	if !used["app.EnvX"] || !used["app.EnvY"] {
		t.Errorf("used %v", used)
	}
	for _, tc := range []struct{ name, doc, err string }{
		{"a name nothing declares", strings.Replace(src, "app.EnvY", "app.EnvZ", 1), `"app.EnvZ" names nothing`},
		{"a flow mapping", "# make generate: each name from its comment\nV: {A: 1}\n", "marks a block mapping"},
		{"a quoted key", "# make generate: each name from its comment\nV:\n  'A': 1 # app.EnvX\n", "not written plain"},
	} {
		if _, err := Rewrite([]byte(tc.doc), names, map[string]bool{}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
		}
	}
	// A declared name as a key that does not name its source would be a
	// copy nobody regenerates.
	err = Unmarked([]byte(strings.Replace(src, "SAME: [a, b]  # app.EnvY", "SAME: [a, b]", 1)), names)
	if err == nil || !strings.Contains(err.Error(), "line 7: the key SAME is app.EnvY") {
		t.Errorf("an unnamed key: %v", err)
	}
}

// Each function is given what app.DeployedEnv says it reads, and in its
// own Environment nothing else; the Globals only what every function reads.
func TestCheckEnvironment(t *testing.T) {
	load := func() *sam.Template {
		tmpl, err := sam.Load(filepath.Join(repo, "template.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return tmpl
	}
	if err := checkEnvironment(load(), app.Resources); err != nil {
		t.Fatal(err)
	}
	own := func(tmpl *sam.Template, fn string) map[string]any {
		return tmpl.Resources[fn].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	}
	global := func(tmpl *sam.Template, _ string) map[string]any {
		return tmpl.Globals["Function"]["Environment"].(map[string]any)["Variables"].(map[string]any)
	}
	images, documents := app.Resources[0], app.Resources[1]
	for _, tc := range []struct {
		name, fn string
		vars     func(*sam.Template, string) map[string]any
		change   func(map[string]any)
		err      string
	}{
		{"a table the function reads, missing", app.TallyFunction, own, func(v map[string]any) { delete(v, documents.TableEnv()) },
			"TallyFunction reads " + documents.TableEnv()},
		{"the webhooks' seal, missing", app.SenderFunction, own, func(v map[string]any) { delete(v, app.EnvWebhookSeal) },
			"SenderFunction reads " + app.EnvWebhookSeal},
		{"a setting every function reads, missing", "", global, func(v map[string]any) { delete(v, app.EnvStack) },
			"reads " + app.EnvStack},
		{"a table it has no business with", documents.Function(), own, func(v map[string]any) { v[app.EnvWebhooksTable] = "x" },
			"DocumentsFunction is given " + app.EnvWebhooksTable},
		{"the spend ledger's table, missing", documents.Function(), own, func(v map[string]any) { delete(v, images.TableEnv()) },
			"DocumentsFunction reads " + images.TableEnv()},
		{"a table for every function", "", global, func(v map[string]any) { v[images.TableEnv()] = "x" },
			"the Globals give every function " + images.TableEnv()},
	} {
		tmpl := load()
		tc.change(tc.vars(tmpl, tc.fn))
		if err := checkEnvironment(tmpl, app.Resources); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
		}
	}
	// A template shaped otherwise is refused with a clear error, not a
	// panic: a function with no Environment is not given what it reads.
	for _, tc := range []struct {
		name   string
		change func(*sam.Template)
		err    string
	}{
		{"a function without Environment", func(tmpl *sam.Template) { delete(tmpl.Resources[app.SenderFunction].Properties, "Environment") },
			"SenderFunction reads " + app.EnvWebhookSeal},
		{"an Environment without Variables", func(tmpl *sam.Template) {
			tmpl.Resources[app.SenderFunction].Properties["Environment"] = map[string]any{}
		}, "SenderFunction reads " + app.EnvWebhookSeal},
		{"an Environment from an intrinsic", func(tmpl *sam.Template) {
			tmpl.Resources[app.SenderFunction].Properties["Environment"] = map[string]any{"Fn::If": []any{"C", map[string]any{}, map[string]any{}}}
		}, "SenderFunction's Environment is not a mapping written out"},
		{"Variables from an intrinsic", func(tmpl *sam.Template) {
			tmpl.Resources[app.SenderFunction].Properties["Environment"] = map[string]any{"Variables": map[string]any{"Ref": "P"}}
		}, "SenderFunction's Environment.Variables is not a mapping written out"},
		{"Globals without Environment", func(tmpl *sam.Template) { delete(tmpl.Globals["Function"], "Environment") },
			"reads " + app.EnvStack},
		{"no Globals for functions", func(tmpl *sam.Template) { delete(tmpl.Globals, "Function") },
			"reads " + app.EnvStack},
	} {
		tmpl := load()
		tc.change(tmpl)
		if err := checkEnvironment(tmpl, app.Resources); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
		}
	}
}

// A table's indexes, a block sequence of block mappings holding block
// sequences of flow mappings, are written as the template writes them by
// hand.
func TestRewriteTableSchema(t *testing.T) {
	src := "Table:\n  Properties:\n    # make generate: t GlobalSecondaryIndexes\n    GlobalSecondaryIndexes:\n      - IndexName: old\n    Next: kept\n"
	v := map[string]*yaml.Node{}
	name := "by_x"
	schema(v, "t", dynamodb.CreateTableInput{
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: &name, AttributeType: types.ScalarAttributeTypeN}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  &name,
			KeySchema:  []types.KeySchemaElement{{AttributeName: &name, KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"a", "b"}},
		}},
	})
	out, err := Rewrite([]byte(src), v, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	want := `Table:
  Properties:
    # make generate: t GlobalSecondaryIndexes
    GlobalSecondaryIndexes:
      - IndexName: by_x
        KeySchema:
          - {AttributeName: by_x, KeyType: HASH}
        Projection:
          ProjectionType: INCLUDE
          NonKeyAttributes: [a, b]
    Next: kept
`
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	// N, a boolean to YAML 1.1, is quoted.
	attrs, err := renderBlock(v["t AttributeDefinitions"], 2)
	if err != nil || attrs != "  - {AttributeName: by_x, AttributeType: 'N'}" {
		t.Errorf("attributes %q, %v", attrs, err)
	}
}

// A metric's name edited by hand, in an alarm or among the dashboard's
// variables, is written back as shared/metrics declares it.
func TestMetricNamesAreWritten(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repo, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	values, err := declared(app.Resources)
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range [][2]string{
		{"QuotaRefusals: QuotaRefusals", "QuotaRefusals: QuotaRefusal"},
		{"DimKind: Kind", "DimKind: kind"},
		{"Namespace: ContentAPI", "Namespace: ContentApi"},
		{"MetricName: Generations", "MetricName: Generation"},
		{"- Name: Outcome", "- Name: Result"},
	} {
		edited := strings.Replace(string(src), edit[0], edit[1], 1)
		if edited == string(src) {
			t.Fatalf("template.yaml has no %q", edit[0])
		}
		out, err := Rewrite([]byte(edited), values, map[string]bool{})
		if err != nil {
			t.Fatalf("%s: %v", edit[1], err)
		}
		if string(out) != string(src) {
			t.Errorf("%q is not written back as %q", edit[1], edit[0])
		}
	}
}

// A metric of the service's named where make generate does not write it
// is refused.
func TestHandNamedMetricsAreFound(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repo, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := HandNamedMetrics(src); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	for _, edit := range [][2]string{
		{`["${Namespace}", "${ServerErrors}"`, `["ContentAPI", "${ServerErrors}"`},
		{`["${Namespace}", "${ServerErrors}"`, `["${Namespace}", "ServerErrors"`},
		{`"${DimFunction}", "images"`, `"Function", "images"`},
		{"              # make generate: metrics.Generations\n", ""},
		{"                # make generate: metrics.DimOutcome\n", ""},
		{"              # make generate: metrics.ServerErrors\n", ""},
		{`"${DimFunction}", "tally"`, `"${Function}", "tally"`},
	} {
		edited := strings.Replace(string(src), edit[0], edit[1], 1)
		if edited == string(src) {
			t.Fatalf("template.yaml has no %q", edit[0])
		}
		if err := HandNamedMetrics([]byte(edited)); err == nil || !strings.Contains(err.Error(), "by hand") {
			t.Errorf("%q instead of %q: %v", edit[1], edit[0], err)
		}
	}
}

// What openapi.yaml says of a resource follows from its declaration: a
// resource without generation has no regenerate operation and none of
// its answers; one that counts no monthly limit is refused for its rate
// alone; its operations, responses and schemas are named after it.
func TestResourceOpenAPIFollowsTheDeclaration(t *testing.T) {
	plain := &records.Resource{Name: "voices", Object: "voice",
		Fields: []records.Field{
			{Name: "name", Kind: records.Text{Min: 1, Max: 128}, Required: true, Create: true, Update: true},
			{Name: "guide", Kind: records.Text{Min: 1, Max: 4000}, Required: true, Create: true, Update: true},
		},
		SearchBy: []string{"name"}}
	v := map[string]*yaml.Node{}
	if err := openAPIRuns(v, []app.Resource{app.Resources[0], {Def: plain}}); err != nil {
		t.Fatal(err)
	}
	keys := func(run string) []string {
		var m yaml.Node
		if err := yaml.Unmarshal([]byte(v[run].Value), &m); err != nil {
			t.Fatalf("%s: %v\n%s", run, err, v[run].Value)
		}
		var out []string
		for i := 0; i < len(m.Content[0].Content); i += 2 {
			out = append(out, m.Content[0].Content[i].Value)
		}
		return out
	}
	for _, tc := range []struct {
		run        string
		has, lacks []string
	}{
		{"paths of the resources", []string{"/api/v1/images/{id}/regenerate", "/api/v1/voices", "/api/v1/voices/{id}"},
			[]string{"/api/v1/voices/{id}/regenerate"}},
		{"responses of the resources", []string{"ImageRegenerated", "VoicePage", "VoiceOK", "VoiceCreated", "VoiceUpdated", "VoiceDeleted"},
			[]string{"VoiceRegenerated", "VoiceRegenerating"}},
		{"schemas of the resources", []string{"ImageAcceptedResponse", "VoiceResponse", "VoiceCreatedResponse", "VoiceList", "VoiceDeleted"},
			[]string{"VoiceAcceptedResponse"}},
	} {
		got := keys(tc.run)
		for _, k := range tc.has {
			if !slices.Contains(got, k) {
				t.Errorf("%s lack %s: %v", tc.run, k, got)
			}
		}
		for _, k := range tc.lacks {
			if slices.Contains(got, k) {
				t.Errorf("%s have %s", tc.run, k)
			}
		}
	}
	paths := v["paths of the resources"].Value
	voices := paths[strings.Index(paths, "/api/v1/voices:"):]
	for _, want := range []string{"operationId: createVoice", "summary: Create a voice", "requestBody: {$ref: '#/components/requestBodies/VoiceCreate'}",
		"'429': {$ref: '#/components/responses/TooManyRequests'}", "A partial update of `name` and `guide`"} {
		if !strings.Contains(voices, want) {
			t.Errorf("the voices' paths lack %q", want)
		}
	}
	if strings.Contains(voices, "TooManyRequestsOrQuota") || strings.Contains(voices, "generat") {
		t.Errorf("the voices' paths speak of a quota or a generation:\n%s", voices)
	}
	images := paths[:strings.Index(paths, "/api/v1/voices:")]
	if !strings.Contains(images, "'429': {$ref: '#/components/responses/TooManyRequestsOrQuota'}") ||
		!strings.Contains(images, "description: &preflightDescription") {
		t.Error("the images' paths lack their quota's refusal or the preflight's anchors")
	}
	for _, line := range strings.Split(paths, "\n") {
		if len(line) > width && !strings.Contains(line, "$ref") {
			t.Errorf("a line of %d characters: %q", len(line), line)
		}
	}
}
