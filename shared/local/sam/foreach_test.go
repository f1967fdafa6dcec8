package sam

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// cfnLintExpansion is the AWS::LanguageExtensions transform as cfn-lint
// applies it before it lints a template (its Python API; the same code
// the cfn-lint of make lint runs), of each template named, as a JSON list:
// the reference Expand is held to. A template is decoded afresh for the
// transform, since building cfn-lint's Template rewrites the Conditions it
// is given. One process for all: importing cfn-lint takes seconds.
const cfnLintExpansion = `
import json, sys
from cfnlint.decode import decode
from cfnlint.template import Template
from cfnlint.template.transforms._language_extensions import language_extension

def load(path):
    tpl, matches = decode(path)
    if matches:
        sys.exit("decode: %s" % [str(m) for m in matches])
    return tpl

expanded = []
for path in sys.argv[1:]:
    cfn = Template(path, load(path), ["us-east-1"])
    cfn.template = load(path)
    matches, out = language_extension(cfn)
    if matches:
        sys.exit("%s: transform: %s" % (path, [str(m) for m in matches]))
    expanded.append(out)
json.dump(expanded, sys.stdout)
`

// cfnLint expands the templates at paths as cfn-lint does. cfn-lint is
// installed wherever make test runs (make lint needs it); without it the
// test is skipped, as TestTemplateLints is.
func cfnLint(t *testing.T, paths ...string) []map[string]any {
	t.Helper()
	if _, err := exec.LookPath("cfn-lint"); err != nil {
		t.Skip("cfn-lint is not installed here; make lint needs it")
	}
	cmd := exec.Command("python3", append([]string{"-c", cfnLintExpansion}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cfn-lint's expansion of %v (python3 must import the cfnlint that cfn-lint runs): %v\n%s", paths, err, stderr.Bytes())
	}
	var v []map[string]any
	if err := json.Unmarshal(out, &v); err != nil || len(v) != len(paths) {
		t.Fatalf("cfn-lint's expansion of %v: %d templates, %v", paths, len(v), err)
	}
	return v
}

// asJSON is v as JSON reads it back, so that Go's ints and cfn-lint's
// numbers compare alike.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// expandFile is Expand of the template at path.
func expandFile(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Expand(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The templates Expand is held to cfn-lint on: the project's, and one
// that uses every form the expansion knows (nested loops, &{}, Ref to the
// identifier, Ref and GetAtt of a Sub, Sub with variables, FindInMap of an
// identifier, Fn::If's branches, ToJsonString, loops in Outputs and in a
// resource's properties).
func TestExpansionIsCfnLints(t *testing.T) {
	project, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{project, filepath.Join("testdata", "foreach.yaml")}
	reference := cfnLint(t, paths...)
	for i, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := asJSON(t, reference[i]).(map[string]any)
			got := asJSON(t, expandFile(t, path)).(map[string]any)
			for _, section := range slices.Sorted(mapsKeys(want, got)) {
				if !reflect.DeepEqual(got[section], want[section]) {
					diffSection(t, section, got[section], want[section])
				}
			}
		})
	}
}

func mapsKeys(ms ...map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// diffSection reports what differs in a section, entry by entry where the
// section is a mapping.
func diffSection(t *testing.T, section string, got, want any) {
	t.Helper()
	g, gok := got.(map[string]any)
	w, wok := want.(map[string]any)
	if !gok || !wok {
		t.Errorf("%s: Expand gives\n%s\ncfn-lint\n%s", section, indent(got), indent(want))
		return
	}
	for _, k := range slices.Sorted(mapsKeys(g, w)) {
		if !reflect.DeepEqual(g[k], w[k]) {
			t.Errorf("%s.%s: Expand gives\n%s\ncfn-lint\n%s", section, k, indent(g[k]), indent(w[k]))
		}
	}
}

func indent(v any) string {
	b, _ := json.MarshalIndent(v, "  ", " ")
	return "  " + string(b)
}

// What the expansion refuses, where CloudFormation would refuse it or
// where this reader would have to guess.
func TestExpandErrors(t *testing.T) {
	const header = "Transform: [AWS::LanguageExtensions, AWS::Serverless-2016-10-31]\n"
	testCases := []struct {
		name, yaml, want string
	}{
		{"a loop without the transform",
			"Resources:\n  Fn::ForEach::T:\n    - N\n    - [A]\n    - ${N}Topic: {Type: AWS::SNS::Topic}\n",
			"without the AWS::LanguageExtensions transform"},
		{"a copy named twice",
			header + "Resources:\n  Fn::ForEach::T:\n    - N\n    - [A, A]\n    - ${N}Topic: {Type: AWS::SNS::Topic}\n",
			"ATopic for A: there is one already"},
		{"a copy named as a resource written out",
			header + "Resources:\n  ATopic: {Type: AWS::SNS::Topic}\n  Fn::ForEach::T:\n    - N\n    - [A]\n    - ${N}Topic: {Type: AWS::SNS::Topic}\n",
			"ATopic for A: there is one already"},
		{"a collection from a parameter",
			header + "Parameters:\n  Names: {Type: CommaDelimitedList, Default: 'A,B'}\nResources:\n  Fn::ForEach::T:\n    - N\n    - !Ref Names\n    - ${N}Topic: {Type: AWS::SNS::Topic}\n",
			"the collection is not a list written out"},
		{"an empty collection",
			header + "Resources:\n  Fn::ForEach::T:\n    - N\n    - []\n    - ${N}Topic: {Type: AWS::SNS::Topic}\n",
			"the collection is not a list written out"},
		{"a loop of two arguments",
			header + "Resources:\n  Fn::ForEach::T:\n    - N\n    - [A]\n",
			"not a list of an identifier, a collection and a fragment"},
		{"a FindInMap of what is not mapped",
			header + "Mappings:\n  M:\n    A: {Name: a}\nResources:\n  Fn::ForEach::T:\n    - N\n    - [A, B]\n    - ${N}Topic:\n        Type: AWS::SNS::Topic\n        Properties: {TopicName: !FindInMap [M, !Ref N, Name]}\n",
			"the Mappings have no M.B.Name"},
		{"a FindInMap of a parameter",
			header + "Mappings:\n  M:\n    A: {Name: a}\nResources:\n  T:\n    Type: AWS::SNS::Topic\n    Properties: {TopicName: !FindInMap [M, !Ref AWS::Region, Name]}\n",
			"neither text nor a loop's identifier"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Expand([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

var update = flag.Bool("update", false, "write testdata/deployed.json from the template as it is")

// deployedFixture holds every resource and output of the stack as
// deployed before template.yaml's loops (cfn-lint's expansion of the
// template of that time), the ones a stack updated with today's template
// must keep as they are.
const deployedFixture = "testdata/deployed.json"

// A deployed stack updates in place: each resource and output it has
// keeps its logical ID, its type, its condition and policies, and its
// properties as CloudFormation computes them (an Fn::Sub of literal
// variables is its string), so no table is replaced and nothing changes
// that was not meant to. The expansion compared is Expand's, which
// TestExpansionIsCfnLints holds to cfn-lint's. A resource changed on
// purpose changes the fixture with it:
//
//	go test ./shared/local/sam -run TestProjectUpdatesInPlace -update
func TestProjectUpdatesInPlace(t *testing.T) {
	path, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	now := expandFile(t, path)
	current := map[string]any{"Resources": now["Resources"], "Outputs": now["Outputs"]}
	if *update {
		b, err := json.MarshalIndent(current, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(deployedFixture, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(deployedFixture)
	if err != nil {
		t.Fatal(err)
	}
	var deployed map[string]map[string]any
	if err := json.Unmarshal(b, &deployed); err != nil {
		t.Fatal(err)
	}
	if len(deployed["Resources"]) == 0 {
		t.Fatalf("%s holds no resources", deployedFixture)
	}
	for _, section := range []string{"Resources", "Outputs"} {
		have, _ := asJSON(t, current[section]).(map[string]any)
		for _, id := range slices.Sorted(mapsKeys(deployed[section])) {
			was, is := FoldLiteralSubs(deployed[section][id]), FoldLiteralSubs(have[id])
			switch {
			case have[id] == nil:
				t.Errorf("%s.%s is gone: CloudFormation would delete it", section, id)
			case !reflect.DeepEqual(is, was):
				t.Errorf("%s.%s changed: it was\n%s\nand is\n%s", section, id, indent(was), indent(is))
			}
		}
	}
}

// An Fn::Sub of text alone is its string; one that names the stack or a
// resource, or has a variable that is not text, stays.
func TestFoldLiteralSubs(t *testing.T) {
	sub := func(arg any) map[string]any { return map[string]any{"Fn::Sub": arg} }
	testCases := []struct {
		name    string
		in, out any
	}{
		{"variables of text", sub([]any{"The ${Name} function", map[string]any{"Name": "images"}}), "The images function"},
		{"a literal ${!x}", sub([]any{"${Name} costs ${!Price}", map[string]any{"Name": "x"}}), "x costs ${Price}"},
		{"a plain string", sub("no variable"), "no variable"},
		{"a pseudo parameter", sub("${AWS::Region}"), sub("${AWS::Region}")},
		{"a variable left", sub([]any{"${Name} in ${Table}", map[string]any{"Name": "x"}}),
			sub([]any{"${Name} in ${Table}", map[string]any{"Name": "x"}})},
		{"a variable that is a Ref", sub([]any{"${Name}", map[string]any{"Name": map[string]any{"Ref": "T"}}}),
			sub([]any{"${Name}", map[string]any{"Name": map[string]any{"Ref": "T"}}})},
		{"nested in a list and a mapping", []any{map[string]any{"Label": sub("a ${!b}")}}, []any{map[string]any{"Label": "a ${b}"}}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := FoldLiteralSubs(tc.in); !reflect.DeepEqual(got, tc.out) {
				t.Errorf("FoldLiteralSubs(%v) = %v, want %v", tc.in, got, tc.out)
			}
		})
	}
}
