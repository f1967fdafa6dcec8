// Package sam reads the project's AWS SAM template (template.yaml), so the
// local gateway, DynamoDB Local and the tests take routes, tables, environment
// and policies from the one file that is deployed, instead of restating them.
//
// It understands the subset of SAM and CloudFormation this project uses and
// says so with an error when it meets something it cannot interpret, rather
// than guessing: a test that reads a policy it misunderstood would pass for
// the wrong reason.
package sam

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// FileName is the template's name at the repository root.
const FileName = "template.yaml"

// Template is a parsed SAM template. Intrinsic functions are kept in their
// long (JSON) form whichever way the file wrote them: `!Ref X` and
// `{Ref: X}` both read as map[string]any{"Ref": "X"}, `!GetAtt T.Arn` as
// {"Fn::GetAtt": ["T", "Arn"]}, `!Sub s` as {"Fn::Sub": s}, so a consumer
// handles one shape.
type Template struct {
	// Transforms are the template's Transform, in order.
	Transforms []string
	Parameters map[string]Parameter
	// Globals is the template's Globals section, by section name
	// ("Function", "HttpApi", ...).
	Globals   map[string]map[string]any
	Resources map[string]Resource
	Outputs   map[string]map[string]any
	// Rules is the template's Rules section: what CloudFormation asserts
	// of the parameters before it deploys, by rule name.
	Rules map[string]map[string]any
	// Mappings is the template's Mappings section: map, top-level key,
	// second-level key, value.
	Mappings map[string]map[string]any
}

// Parameter is one entry of the Parameters section.
type Parameter struct {
	Type          string
	Default       any // nil when the parameter has no default
	AllowedValues []any
	// MinValue and MaxValue bound a Number; nil when unbounded.
	MinValue, MaxValue any
}

// Resource is one entry of the Resources section.
type Resource struct {
	Type                string
	Properties          map[string]any
	Metadata            map[string]any
	Condition           string
	DeletionPolicy      string
	UpdateReplacePolicy string
}

// Find returns the path of template.yaml in the working directory or the
// nearest parent that has one, so commands and tests work from any package
// directory of the repository.
func Find() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("sam: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, FileName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("sam: %w", err)
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("sam: no %s in %s or any parent directory", FileName, wd)
		}
	}
}

// LoadProject loads the project's own template.yaml, found from the working
// directory as Find does.
func LoadProject() (*Template, error) {
	path, err := Find()
	if err != nil {
		return nil, err
	}
	return Load(path)
}

// Load reads and parses the template at path.
func Load(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sam: %w", err)
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("sam: %s: %w", path, err)
	}
	return t, nil
}

// Parse parses a template from its YAML (or JSON, a subset of YAML) text,
// its Fn::ForEach loops expanded as CloudFormation expands them (Expand).
func Parse(b []byte) (*Template, error) {
	root, err := Expand(b)
	if err != nil {
		return nil, err
	}
	t := &Template{
		Parameters: map[string]Parameter{},
		Globals:    map[string]map[string]any{},
		Resources:  map[string]Resource{},
		Outputs:    map[string]map[string]any{},
		Rules:      map[string]map[string]any{},
		Mappings:   map[string]map[string]any{},
	}
	if err := t.fill(root); err != nil {
		return nil, err
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// Expand reads a template's text as the plain values Decode gives, with
// the AWS::LanguageExtensions transform applied when the template
// declares it: each Fn::ForEach loop replaced by its copies, one per item
// of its collection (expandLanguageExtensions says how), which is the
// template SAM's own transform and so CloudFormation read. A loop in a
// template without the transform is an error, as it is for CloudFormation.
func Expand(b []byte) (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("empty template")
	}
	v, err := Decode(&doc)
	if err != nil {
		return nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the template is not a mapping")
	}
	if !declaresLanguageExtensions(root) {
		if hasForEach(root) {
			return nil, fmt.Errorf("Fn::ForEach without the %s transform", LanguageExtensions)
		}
		return root, nil
	}
	if root, err = expandLanguageExtensions(root); err != nil {
		return nil, fmt.Errorf("%s: %w", LanguageExtensions, err)
	}
	return root, nil
}

func (t *Template) fill(root map[string]any) error {
	if _, ok := root["Resources"]; !ok {
		return errors.New("no Resources section")
	}
	switch tr := root["Transform"].(type) {
	case string:
		t.Transforms = []string{tr}
	case []any:
		for _, name := range tr {
			s, ok := name.(string)
			if !ok {
				return fmt.Errorf("the Transform %v is not a name", name)
			}
			t.Transforms = append(t.Transforms, s)
		}
	}
	sections := []struct {
		name string
		fill func(name string, body map[string]any) error
	}{
		{"Parameters", func(name string, body map[string]any) error {
			p := Parameter{Default: body["Default"], MinValue: body["MinValue"], MaxValue: body["MaxValue"]}
			p.Type, _ = body["Type"].(string)
			p.AllowedValues, _ = body["AllowedValues"].([]any)
			t.Parameters[name] = p
			return nil
		}},
		{"Globals", func(name string, body map[string]any) error {
			t.Globals[name] = body
			return nil
		}},
		{"Resources", func(name string, body map[string]any) error {
			r := Resource{}
			var ok bool
			if r.Type, ok = body["Type"].(string); !ok {
				return fmt.Errorf("resource %s: Type is missing or not a string", name)
			}
			for key, dst := range map[string]*map[string]any{"Properties": &r.Properties, "Metadata": &r.Metadata} {
				if v, present := body[key]; present {
					if *dst, ok = v.(map[string]any); !ok {
						return fmt.Errorf("resource %s: %s is not a mapping", name, key)
					}
				}
			}
			r.Condition, _ = body["Condition"].(string)
			r.DeletionPolicy, _ = body["DeletionPolicy"].(string)
			r.UpdateReplacePolicy, _ = body["UpdateReplacePolicy"].(string)
			t.Resources[name] = r
			return nil
		}},
		{"Outputs", func(name string, body map[string]any) error {
			t.Outputs[name] = body
			return nil
		}},
		{"Rules", func(name string, body map[string]any) error {
			t.Rules[name] = body
			return nil
		}},
		{"Mappings", func(name string, body map[string]any) error {
			t.Mappings[name] = body
			return nil
		}},
	}
	for _, s := range sections {
		v, ok := root[s.name]
		if !ok {
			continue
		}
		entries, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not a mapping", s.name)
		}
		for name, e := range entries {
			body, ok := e.(map[string]any)
			if !ok {
				return fmt.Errorf("%s.%s is not a mapping", s.name, name)
			}
			if err := s.fill(name, body); err != nil {
				return err
			}
		}
	}
	return nil
}

// ResourcesOfType returns the logical IDs of the resources of type typ
// (e.g. "AWS::DynamoDB::Table"), sorted so callers behave the same on every
// run.
func (t *Template) ResourcesOfType(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// intrinsicTags are the CloudFormation short-form tags. Anything else that
// looks like a custom tag is a typo the deploy would reject, so Parse does too.
var intrinsicTags = map[string]string{
	"!Ref":          "Ref",
	"!Condition":    "Condition",
	"!GetAtt":       "Fn::GetAtt",
	"!Sub":          "Fn::Sub",
	"!If":           "Fn::If",
	"!Equals":       "Fn::Equals",
	"!And":          "Fn::And",
	"!Or":           "Fn::Or",
	"!Not":          "Fn::Not",
	"!Join":         "Fn::Join",
	"!Select":       "Fn::Select",
	"!Split":        "Fn::Split",
	"!FindInMap":    "Fn::FindInMap",
	"!Base64":       "Fn::Base64",
	"!Cidr":         "Fn::Cidr",
	"!GetAZs":       "Fn::GetAZs",
	"!ImportValue":  "Fn::ImportValue",
	"!Transform":    "Fn::Transform",
	"!ToJsonString": "Fn::ToJsonString",
	"!Length":       "Fn::Length",
}

// Decode turns a YAML node into plain Go values (map[string]any, []any,
// string, int, float64, bool, nil) with short-form intrinsics rewritten to
// their long form, so two documents that read alike decode equal, tags
// included. yaml.v3 cannot decode a custom tag into `any` by itself,
// hence the walk over the node tree.
func Decode(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		return Decode(n.Content[0])
	case yaml.AliasNode:
		return Decode(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: mapping key is not a scalar", k.Line)
			}
			// CloudFormation rejects duplicate keys and yaml.v3 keeps the
			// last one silently: two events with one name would lose a route.
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			x, err := Decode(val)
			if err != nil {
				return nil, err
			}
			m[k.Value] = x
		}
		v = m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			x, err := Decode(c)
			if err != nil {
				return nil, err
			}
			s = append(s, x)
		}
		v = s
	case yaml.ScalarNode:
		if isCustomTag(n.Tag) {
			v = n.Value
		} else if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
	default:
		return nil, fmt.Errorf("line %d: unexpected YAML node kind %d", n.Line, n.Kind)
	}
	if !isCustomTag(n.Tag) {
		return v, nil
	}
	name, ok := intrinsicTags[n.Tag]
	if !ok {
		return nil, fmt.Errorf("line %d: unknown tag %s", n.Line, n.Tag)
	}
	if name == "Fn::GetAtt" {
		if s, ok := v.(string); ok {
			// The short form's "Resource.Attribute" string is the long
			// form's two-element list.
			res, attr, found := strings.Cut(s, ".")
			if !found {
				return nil, fmt.Errorf("line %d: !GetAtt %q is not Resource.Attribute", n.Line, s)
			}
			v = []any{res, attr}
		}
	}
	return map[string]any{name: v}, nil
}

func isCustomTag(tag string) bool {
	return strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!")
}

// Intrinsic reports whether v is an intrinsic function in long form, and
// which: the single key of the mapping ("Ref", "Fn::Sub", ...) and its
// argument.
func Intrinsic(v any) (name string, arg any, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap || len(m) != 1 {
		return "", nil, false
	}
	for k, a := range m {
		if k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::") {
			return k, a, true
		}
	}
	return "", nil, false
}

// ResolveParameters returns v with every {"Ref": P} replaced by parameter
// P's default, where P is a parameter that has one; other values are
// returned as they are. Local tools have no stack to take parameter values
// from, and the defaults are what a plain deploy uses.
func (t *Template) ResolveParameters(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if name, arg, ok := Intrinsic(x); ok && name == "Ref" {
			if ref, isStr := arg.(string); isStr {
				if p, isParam := t.Parameters[ref]; isParam && p.Default != nil {
					return p.Default
				}
			}
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = t.ResolveParameters(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = t.ResolveParameters(e)
		}
		return out
	default:
		return v
	}
}
