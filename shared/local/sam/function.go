package sam

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"
)

// FunctionType is the SAM resource type of a Lambda function.
const FunctionType = "AWS::Serverless::Function"

// DefaultRoute is the route key of the HTTP API's catch-all route.
const DefaultRoute = "$default"

// Function is an AWS::Serverless::Function as SAM deploys it: the template's
// Globals.Function section merged into its own properties.
type Function struct {
	LogicalID  string
	Properties map[string]any
	Metadata   map[string]any
}

// Route is one HTTP API route: an HttpApi event of a function.
type Route struct {
	// Method is upper case: GET, POST, ... or ANY. The $default route has
	// ANY, as it takes every method.
	Method string
	// Path is the route's path with its {variables}, e.g.
	// /api/v1/images/{id}, or "$default".
	Path string
	// Function is the logical ID of the function the route invokes.
	Function string
	// Event is the name of the event in the function's Events section.
	Event string
}

// Key is the route key API Gateway puts in routeKey: "GET /api/v1/images"
// or "$default".
func (r Route) Key() string {
	if r.Path == DefaultRoute {
		return DefaultRoute
	}
	return r.Method + " " + r.Path
}

// Functions returns the template's functions, sorted by logical ID.
func (t *Template) Functions() []Function {
	ids := t.ResourcesOfType(FunctionType)
	fns := make([]Function, 0, len(ids))
	for _, id := range ids {
		r := t.Resources[id]
		props := mergeGlobals(t.Globals["Function"], r.Properties)
		fns = append(fns, Function{LogicalID: id, Properties: props, Metadata: r.Metadata})
	}
	return fns
}

// Function returns the function with the given logical ID.
func (t *Template) Function(id string) (Function, error) {
	r, ok := t.Resources[id]
	if !ok || r.Type != FunctionType {
		return Function{}, fmt.Errorf("sam: no %s %q in the template", FunctionType, id)
	}
	return Function{
		LogicalID:  id,
		Properties: mergeGlobals(t.Globals["Function"], r.Properties),
		Metadata:   r.Metadata,
	}, nil
}

// mergeGlobals applies SAM's Globals rules: mappings merge key by key, a
// list in the resource is appended to the global list, and any other value
// set on the resource wins over the global one.
func mergeGlobals(global, local map[string]any) map[string]any {
	out := make(map[string]any, len(global)+len(local))
	for k, v := range global {
		out[k] = v
	}
	for k, lv := range local {
		gv, ok := out[k]
		if !ok {
			out[k] = lv
			continue
		}
		gm, gIsMap := gv.(map[string]any)
		lm, lIsMap := lv.(map[string]any)
		_, _, gIsFn := Intrinsic(gv)
		_, _, lIsFn := Intrinsic(lv)
		gl, gIsList := gv.([]any)
		ll, lIsList := lv.([]any)
		switch {
		case gIsMap && lIsMap && !gIsFn && !lIsFn:
			out[k] = mergeGlobals(gm, lm)
		case gIsList && lIsList:
			out[k] = append(append([]any{}, gl...), ll...)
		default:
			out[k] = lv
		}
	}
	return out
}

// Env returns the function's environment variables with their template
// values (strings, or intrinsics such as {"Ref": "ImagesTable"}).
func (f Function) Env() map[string]any {
	env, _ := lookup(f.Properties, "Environment", "Variables").(map[string]any)
	return env
}

// EnvNames returns the names of the function's environment variables,
// sorted.
func (f Function) EnvNames() []string {
	env := f.Env()
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Timeout is the function's timeout; Lambda's default of 3 s when the
// template sets none.
func (f Function) Timeout() time.Duration {
	switch v := f.Properties["Timeout"].(type) {
	case int:
		return time.Duration(v) * time.Second
	case float64:
		return time.Duration(v * float64(time.Second))
	}
	return 3 * time.Second
}

// MemorySize is the function's memory in MB; Lambda's default of 128 when
// the template sets none.
func (f Function) MemorySize() int {
	switch v := f.Properties["MemorySize"].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 128
}

// Statement is one statement of an inline IAM policy.
type Statement struct {
	Effect    string
	Actions   []string
	Resources []ARN
	// Condition names the template condition the statement's policy is
	// granted under (an Fn::If with AWS::NoValue as its other branch); ""
	// for always.
	Condition string
	// When is the statement's own IAM Condition block, one entry per
	// operator and key, sorted; nil for none.
	When []When
}

// When is one key of a statement's IAM Condition: ForAnyValue:StringEquals
// aws-marketplace:ProductId [prod-...] is {"ForAnyValue:StringEquals",
// "aws-marketplace:ProductId", []any{"prod-..."}}. Value is kept as the
// template wrote it (a string, a list, or an intrinsic such as a Ref).
type When struct {
	Operator, Key string
	Value         any
}

// ARN is a statement's resource. Most are built from a template resource:
// !GetAtt ImagesTable.Arn is {LogicalID: "ImagesTable", Attribute: "Arn"},
// !Sub '${ImagesTable.Arn}/index/*' adds Suffix "/index/*". Anything else
// (a literal ARN, a Sub over pseudo parameters) is kept as Literal.
type ARN struct {
	LogicalID string
	Attribute string
	Suffix    string
	Literal   string
	// Condition names the template condition the resource is listed under
	// (an Fn::If with AWS::NoValue as its other branch); "" for always.
	Condition string
}

func (a ARN) String() string {
	if a.LogicalID == "" {
		return a.Literal
	}
	s := a.LogicalID
	if a.Attribute != "" {
		s += "." + a.Attribute
	}
	return s + a.Suffix
}

// Statements returns the statements of the function's inline policies.
// SAM policy templates and managed policies are errors: this project
// grants only explicit actions on explicit resources, and a test that
// checks that must not skip over something it cannot read. A policy may be
// granted under a condition, !If [Cond, policy, !Ref AWS::NoValue]; its
// statements then carry the condition.
func (f Function) Statements() ([]Statement, error) {
	var policies []any
	switch p := f.Properties["Policies"].(type) {
	case nil:
		return nil, nil
	case []any:
		policies = p
	default:
		policies = []any{p}
	}
	var out []Statement
	for i, p := range policies {
		cond, p, err := conditional(p)
		if err != nil {
			return nil, fmt.Errorf("sam: %s: policy %d: %w", f.LogicalID, i, err)
		}
		doc, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("sam: %s: policy %d is a managed policy (%v), not an inline statement list", f.LogicalID, i, p)
		}
		stmts, ok := doc["Statement"]
		if !ok {
			return nil, fmt.Errorf("sam: %s: policy %d is a policy template (%s), not an inline statement list", f.LogicalID, i, strings.Join(keys(doc), ","))
		}
		list, ok := stmts.([]any)
		if !ok {
			list = []any{stmts}
		}
		for j, s := range list {
			st, err := parseStatement(s)
			if err != nil {
				return nil, fmt.Errorf("sam: %s: policy %d statement %d: %w", f.LogicalID, i, j, err)
			}
			st.Condition = cond
			out = append(out, st)
		}
	}
	return out, nil
}

// conditional takes apart !If [Cond, value, !Ref AWS::NoValue]: the
// condition and the value. Anything else is returned as it is, under no
// condition; an If whose other branch is a value is an error, since one
// branch or the other would be granted.
func conditional(v any) (string, any, error) {
	name, arg, ok := Intrinsic(v)
	if !ok || name != "Fn::If" {
		return "", v, nil
	}
	l, ok := arg.([]any)
	if !ok || len(l) != 3 {
		return "", nil, fmt.Errorf("malformed Fn::If %v", arg)
	}
	cond, _ := l[0].(string)
	if n, a, _ := Intrinsic(l[2]); cond == "" || n != "Ref" || a != "AWS::NoValue" {
		return "", nil, fmt.Errorf("Fn::If %v: the else branch must be AWS::NoValue", l)
	}
	return cond, l[1], nil
}

// ParseStatements reads the statements of a policy document (as an
// AWS::IAM::Policy or a bucket policy holds it).
func ParseStatements(doc map[string]any) ([]Statement, error) {
	list, ok := doc["Statement"].([]any)
	if !ok {
		return nil, errors.New("sam: a policy document without a Statement list")
	}
	var out []Statement
	for i, s := range list {
		st, err := parseStatement(s)
		if err != nil {
			return nil, fmt.Errorf("sam: statement %d: %w", i, err)
		}
		out = append(out, st)
	}
	return out, nil
}

func parseStatement(v any) (Statement, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Statement{}, errors.New("not a mapping")
	}
	for k := range m {
		switch k {
		case "Effect", "Action", "Resource", "Sid", "Condition":
		default:
			return Statement{}, fmt.Errorf("unsupported key %s", k)
		}
	}
	var st Statement
	if st.Effect, ok = m["Effect"].(string); !ok {
		return Statement{}, errors.New("no Effect")
	}
	for _, a := range listOf(m["Action"]) {
		s, ok := a.(string)
		if !ok {
			return Statement{}, fmt.Errorf("action %v is not a string", a)
		}
		st.Actions = append(st.Actions, s)
	}
	for _, r := range listOf(m["Resource"]) {
		cond, r, err := conditional(r)
		if err != nil {
			return Statement{}, err
		}
		arn, err := parseARN(r)
		if err != nil {
			return Statement{}, err
		}
		arn.Condition = cond
		st.Resources = append(st.Resources, arn)
	}
	if len(st.Actions) == 0 || len(st.Resources) == 0 {
		return Statement{}, errors.New("no Action or no Resource")
	}
	if c, ok := m["Condition"]; ok {
		when, err := parseCondition(c)
		if err != nil {
			return Statement{}, err
		}
		st.When = when
	}
	return st, nil
}

// parseCondition reads an IAM Condition block: operators, each with keys
// and their values. An empty or malformed block is an error, since a test
// must not read a condition it cannot see as no condition.
func parseCondition(v any) ([]When, error) {
	ops, ok := v.(map[string]any)
	if !ok || len(ops) == 0 {
		return nil, fmt.Errorf("unsupported Condition %v: want operators with keys", v)
	}
	var out []When
	for _, op := range keys(ops) {
		byKey, ok := ops[op].(map[string]any)
		if _, _, fn := Intrinsic(ops[op]); !ok || fn || len(byKey) == 0 {
			return nil, fmt.Errorf("unsupported Condition %s: %v: want keys and values", op, ops[op])
		}
		for _, k := range keys(byKey) {
			out = append(out, When{Operator: op, Key: k, Value: byKey[k]})
		}
	}
	return out, nil
}

// subPrefix matches a Sub string that starts with a resource reference:
// "${Table.Arn}/index/*" or "${Table}".
var subPrefix = regexp.MustCompile(`^\$\{([A-Za-z0-9]+)(?:\.([A-Za-z0-9.]+))?\}`)

func parseARN(v any) (ARN, error) {
	if s, ok := v.(string); ok {
		return ARN{Literal: s}, nil
	}
	name, arg, ok := Intrinsic(v)
	if !ok {
		return ARN{}, fmt.Errorf("resource %v is neither a string nor an intrinsic", v)
	}
	switch name {
	case "Ref":
		if s, ok := arg.(string); ok {
			return ARN{LogicalID: s}, nil
		}
	case "Fn::GetAtt":
		if l, ok := arg.([]any); ok && len(l) == 2 {
			res, _ := l[0].(string)
			attr, _ := l[1].(string)
			if res != "" && attr != "" {
				return ARN{LogicalID: res, Attribute: attr}, nil
			}
		}
	case "Fn::Sub":
		s, ok := arg.(string)
		if !ok {
			break
		}
		m := subPrefix.FindStringSubmatch(s)
		rest := ""
		if m != nil {
			rest = s[len(m[0]):]
		}
		// A pseudo parameter (${AWS::Region}) or a second reference makes
		// this an ARN we do not take apart.
		if m == nil || strings.Contains(rest, "${") {
			return ARN{Literal: s}, nil
		}
		return ARN{LogicalID: m[1], Attribute: m[2], Suffix: rest}, nil
	}
	return ARN{}, fmt.Errorf("unsupported resource %v", v)
}

// Routes returns every HttpApi event of every function as a route, sorted by
// function, then event name.
func (t *Template) Routes() []Route {
	var routes []Route
	for _, f := range t.Functions() {
		events, _ := f.Properties["Events"].(map[string]any)
		for _, name := range keys(events) {
			ev, _ := events[name].(map[string]any)
			if ev["Type"] != "HttpApi" {
				continue
			}
			props, _ := ev["Properties"].(map[string]any)
			r := Route{Function: f.LogicalID, Event: name, Method: "ANY", Path: DefaultRoute}
			if p, ok := props["Path"].(string); ok {
				r.Path = p
				r.Method = strings.ToUpper(props["Method"].(string))
			}
			routes = append(routes, r)
		}
	}
	return routes
}

var httpAPIMethods = map[string]bool{
	"ANY": true, http.MethodGet: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodHead: true, http.MethodOptions: true,
}

// validate checks what Routes relies on, so Routes needs no error: every
// HttpApi event has a Path and a Method, or neither (the $default route),
// and no two events claim one route key, which API Gateway would refuse.
func (t *Template) validate() error {
	seen := map[string]string{}
	for _, f := range t.Functions() {
		events, ok := f.Properties["Events"].(map[string]any)
		if !ok && f.Properties["Events"] != nil {
			return fmt.Errorf("%s: Events is not a mapping", f.LogicalID)
		}
		for _, name := range keys(events) {
			ev, ok := events[name].(map[string]any)
			if !ok {
				return fmt.Errorf("%s: event %s is not a mapping", f.LogicalID, name)
			}
			if ev["Type"] != "HttpApi" {
				continue
			}
			props, _ := ev["Properties"].(map[string]any)
			path, hasPath := props["Path"]
			method, hasMethod := props["Method"]
			key := DefaultRoute
			switch {
			case !hasPath && !hasMethod:
			case hasPath && hasMethod:
				p, pOK := path.(string)
				m, mOK := method.(string)
				if !pOK || !mOK {
					return fmt.Errorf("%s: event %s: Path and Method must be plain strings", f.LogicalID, name)
				}
				if !strings.HasPrefix(p, "/") {
					return fmt.Errorf("%s: event %s: path %q does not start with /", f.LogicalID, name, p)
				}
				if !httpAPIMethods[strings.ToUpper(m)] {
					return fmt.Errorf("%s: event %s: unknown method %q", f.LogicalID, name, m)
				}
				key = strings.ToUpper(m) + " " + p
			default:
				return fmt.Errorf("%s: event %s: an HttpApi event needs both Path and Method, or neither for $default", f.LogicalID, name)
			}
			if other, dup := seen[key]; dup {
				return fmt.Errorf("route %q is declared twice: %s and %s.%s", key, other, f.LogicalID, name)
			}
			seen[key] = f.LogicalID + "." + name
		}
	}
	return nil
}

func lookup(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func listOf(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	default:
		return []any{x}
	}
}

func keys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
