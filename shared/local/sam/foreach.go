package sam

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// LanguageExtensions is CloudFormation's transform that brings
// Fn::ForEach. A template that declares it lists it before SAM's own, as
// CloudFormation applies transforms in their order.
const LanguageExtensions = "AWS::LanguageExtensions"

// forEachKey is the key of a loop: "Fn::ForEach::<name>", the name
// alphanumeric (CloudFormation's and cfn-lint's rule).
var forEachKey = regexp.MustCompile(`^Fn::ForEach::[a-zA-Z0-9]+$`)

// placeholder is a ${name} or &{name} left to substitute; a string that
// has none is plain text.
var placeholder = regexp.MustCompile(`(\$|&)\{[a-zA-Z0-9.:]+\}`)

// expandLanguageExtensions returns the template with every Fn::ForEach
// expanded, as the AWS::LanguageExtensions transform hands it to SAM's.
// cfn-lint's expansion is the reference, step for step (its
// template/transforms/_language_extensions.py; TestExpansionIsCfnLints
// holds the two equal):
//
//   - A loop's fragment is copied once per item of its collection, the
//     item substituted for ${Identifier} in the copy's keys and Fn::Sub
//     strings, and for &{Identifier} with its non-alphanumeric characters
//     removed; a Ref to the identifier is the item. A key copied twice, or
//     one the mapping already has, is an error.
//   - An Fn::Sub left with no placeholder is its string; a Ref's or an
//     Fn::GetAtt's argument is expanded first (Ref: !Sub '${Name}Table' is
//     Ref: ImagesTable).
//   - An Fn::FindInMap whose arguments are text, loop identifiers or
//     parameters with a default (taken at their default, as cfn-lint
//     does) is the mapping's value.
//   - Fn::ToJsonString's argument stays as written, and so does
//     Fn::If's condition name; a key whose value is null is dropped.
//
// Plain strings outside Fn::Sub stay as written, placeholders and all.
// Collections are written out (a list of strings); a collection from a
// parameter or any other intrinsic is an error here, as is an
// Fn::FindInMap that cannot be resolved: this reader does not guess.
func expandLanguageExtensions(root map[string]any) (map[string]any, error) {
	x := expander{mappings: map[string]any{}, defaults: map[string]string{}}
	if m, ok := root["Mappings"].(map[string]any); ok {
		x.mappings = m
	}
	if ps, ok := root["Parameters"].(map[string]any); ok {
		for name, p := range ps {
			if d, ok := p.(map[string]any)["Default"]; ok && d != nil {
				x.defaults[name] = fmt.Sprint(d)
			}
		}
	}
	v, err := x.walk(root, nil)
	if err != nil {
		return nil, err
	}
	out, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the expanded template is not a mapping")
	}
	return out, nil
}

// declaresLanguageExtensions reports whether the template's Transform
// (a name or a list of names) includes AWS::LanguageExtensions.
func declaresLanguageExtensions(root map[string]any) bool {
	switch t := root["Transform"].(type) {
	case string:
		return t == LanguageExtensions
	case []any:
		return slices.Contains(t, any(LanguageExtensions))
	}
	return false
}

// hasForEach reports whether v holds a loop anywhere.
func hasForEach(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if forEachKey.MatchString(k) || hasForEach(e) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(x, hasForEach)
	}
	return false
}

type expander struct {
	mappings map[string]any
	// defaults are the parameters' defaults, as text.
	defaults map[string]string
}

// walk returns v expanded with the loop identifiers' values params.
func (x expander) walk(v any, params map[string]string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		return x.walkMap(t, params)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			var err error
			if out[i], err = x.walk(e, params); err != nil {
				return nil, err
			}
		}
		return out, nil
	default:
		return v, nil
	}
}

func (x expander) walkMap(m map[string]any, params map[string]string) (any, error) {
	if name, arg, ok := Intrinsic(m); ok {
		if v, done, err := x.intrinsic(name, arg, params); done || err != nil {
			return v, err
		}
	}
	out := make(map[string]any, len(m))
	var loops []string
	for k, v := range m {
		if forEachKey.MatchString(k) {
			loops = append(loops, k)
			continue
		}
		if (k == "Ref" || strings.HasPrefix(k, "Fn::")) && len(m) > 1 {
			// CloudFormation would refuse it; cfn-lint's expansion would
			// depend on the keys' order.
			return nil, fmt.Errorf("%s beside other keys", k)
		}
		key, _ := substitute(k, params)
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("duplicate key %s", key)
		}
		w, err := x.walk(v, params)
		if err != nil {
			return nil, err
		}
		if w != nil {
			out[key] = w
		}
	}
	// In the order written, so that an error names the same key on every
	// run.
	slices.Sort(loops)
	for _, k := range loops {
		if err := x.loop(k, m[k], params, out); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	return out, nil
}

// intrinsic expands the intrinsics whose expansion is not a walk of their
// argument; done is false for the others, which walk on as mappings.
func (x expander) intrinsic(name string, arg any, params map[string]string) (v any, done bool, err error) {
	switch name {
	case "Fn::ToJsonString":
		return map[string]any{name: arg}, true, nil
	case "Fn::Sub":
		switch a := arg.(type) {
		case string:
			s, plain := substitute(a, params)
			if plain {
				return s, true, nil
			}
			return map[string]any{name: s}, true, nil
		case []any:
			if len(a) == 0 {
				break
			}
			s, isString := a[0].(string)
			if !isString {
				break
			}
			s, plain := substitute(s, params)
			if plain {
				return s, true, nil
			}
			out := slices.Clone(a)
			out[0] = s
			if len(a) == 2 {
				if out[1], err = x.walk(a[1], params); err != nil {
					return nil, true, err
				}
			}
			return map[string]any{name: out}, true, nil
		}
		return map[string]any{name: arg}, true, nil
	case "Ref":
		switch a := arg.(type) {
		case string:
			if p, ok := params[a]; ok {
				return p, true, nil
			}
			return map[string]any{name: a}, true, nil
		case map[string]any:
			r, err := x.walk(a, params)
			if err != nil {
				return nil, true, err
			}
			if s, ok := r.(string); ok {
				if p, ok := params[s]; ok {
					return p, true, nil
				}
			}
			return map[string]any{name: r}, true, nil
		}
		return map[string]any{name: arg}, true, nil
	case "Fn::GetAtt":
		switch arg.(type) {
		case []any, string:
			w, err := x.walk(arg, params)
			return map[string]any{name: w}, true, err
		}
		return map[string]any{name: arg}, true, nil
	case "Fn::If":
		a, ok := arg.([]any)
		if !ok || len(a) != 3 {
			return map[string]any{name: arg}, true, nil
		}
		out := slices.Clone(a)
		for _, i := range []int{1, 2} {
			if out[i], err = x.walk(a[i], params); err != nil {
				return nil, true, err
			}
		}
		return map[string]any{name: out}, true, nil
	case "Fn::FindInMap":
		v, err := x.findInMap(arg, params)
		return v, true, err
	}
	return nil, false, nil
}

// findInMap is the value !FindInMap [map, top, second] names, each argument
// text or the Ref of a loop identifier or of a parameter with a default.
func (x expander) findInMap(arg any, params map[string]string) (any, error) {
	a, ok := arg.([]any)
	if !ok || len(a) != 3 {
		return nil, fmt.Errorf("Fn::FindInMap %v: three arguments (a DefaultValue is not read here)", arg)
	}
	var path []string
	for _, e := range a {
		s, isString := e.(string)
		if name, ref, ok := Intrinsic(e); ok && name == "Ref" {
			id, _ := ref.(string)
			if s, isString = params[id]; !isString {
				s, isString = x.defaults[id]
			}
		}
		if !isString {
			return nil, fmt.Errorf("Fn::FindInMap %v: an argument is neither text nor a loop's identifier nor a parameter with a default", arg)
		}
		path = append(path, s)
	}
	var v any = x.mappings
	for _, key := range path {
		m, _ := v.(map[string]any)
		if v, ok = m[key]; !ok {
			return nil, fmt.Errorf("Fn::FindInMap %v: the Mappings have no %s", path, strings.Join(path, "."))
		}
	}
	switch v.(type) {
	case string, []any, int, float64, bool:
		return deepCopy(v), nil
	}
	return nil, fmt.Errorf("Fn::FindInMap %v is a %T, not a value", path, v)
}

// loop adds to out the copies of a Fn::ForEach's fragment.
func (x expander) loop(key string, v any, params map[string]string, out map[string]any) error {
	args, ok := v.([]any)
	if !ok || len(args) != 3 {
		return errors.New("not a list of an identifier, a collection and a fragment")
	}
	id, ok := args[0].(string)
	if !ok || id == "" {
		return errors.New("the identifier is not a name")
	}
	items, ok := args[1].([]any)
	if !ok || len(items) == 0 {
		return errors.New("the collection is not a list written out (of one item or more)")
	}
	fragment, ok := args[2].(map[string]any)
	if !ok {
		return errors.New("the fragment is not a mapping")
	}
	for _, item := range items {
		s, ok := item.(string)
		if !ok {
			return fmt.Errorf("the collection's item %v is not text", item)
		}
		inner := make(map[string]string, len(params)+1)
		for k, p := range params {
			inner[k] = p
		}
		inner[id] = s
		copied, err := x.walk(fragment, inner)
		if err != nil {
			return err
		}
		for k, c := range copied.(map[string]any) {
			if _, dup := out[k]; dup {
				return fmt.Errorf("%s for %s: there is one already", k, s)
			}
			out[k] = c
		}
	}
	return nil
}

// substitute puts params in s's ${name} and &{name} (the latter without the
// value's non-alphanumeric characters); plain reports whether no
// placeholder is left.
func substitute(s string, params map[string]string) (string, bool) {
	if !placeholder.MatchString(s) {
		return s, true
	}
	for name, v := range params {
		s = strings.ReplaceAll(s, "${"+name+"}", v)
		s = strings.ReplaceAll(s, "&{"+name+"}", alphanumeric.ReplaceAllString(v, ""))
	}
	return s, !placeholder.MatchString(s)
}

var alphanumeric = regexp.MustCompile(`[^0-9a-zA-Z]+`)

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// subVariable is a ${name} of an Fn::Sub string; ${!name} is the literal
// text ${name}, not a variable.
var subVariable = regexp.MustCompile(`\$\{[^!}][^}]*\}`)

// FoldLiteralSubs returns v with each Fn::Sub that CloudFormation would
// compute from text alone replaced by its string: one whose variables are
// all text (!Sub ['The ${Name} function', {Name: images}] is "The images
// function") and whose string names nothing else. So two templates that
// give a property the same value, one through a loop's FindInMap, compare
// equal. Anything else stays as it is.
func FoldLiteralSubs(v any) any {
	switch t := v.(type) {
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = FoldLiteralSubs(e)
		}
		return out
	case map[string]any:
		if name, arg, ok := Intrinsic(t); ok && name == "Fn::Sub" {
			if s, folded := foldSub(arg); folded {
				return s
			}
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = FoldLiteralSubs(e)
		}
		return out
	}
	return v
}

// foldSub is the string an Fn::Sub of arg computes, if text alone makes it.
func foldSub(arg any) (string, bool) {
	s, ok := arg.(string)
	if a, isList := arg.([]any); isList && len(a) == 2 {
		vars, isMap := a[1].(map[string]any)
		if s, ok = a[0].(string); !ok || !isMap {
			return "", false
		}
		for name, v := range vars {
			text, isText := v.(string)
			if !isText {
				return "", false
			}
			s = strings.ReplaceAll(s, "${"+name+"}", text)
		}
	}
	if !ok || subVariable.MatchString(s) {
		return "", false
	}
	return strings.ReplaceAll(s, "${!", "${"), true
}
