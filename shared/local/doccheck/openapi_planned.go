package doccheck

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// plannedMark is the extension that marks an operation, parameter or
// property that is part of the contract but not served yet.
const plannedMark = "x-planned"

func planned(ext map[string]any) bool {
	b, _ := ext[plannedMark].(bool)
	return b
}

// relaxPlanned lets answers of today's service pass while the contract
// already lists what is planned: a planned property is not required yet.
// Its presence in an answer is an error of its own (plannedServed), so the
// mark cannot outlive the work it announces.
func relaxPlanned(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(ref *openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		for name, p := range s.Properties {
			if p.Value != nil && planned(p.Value.Extensions) {
				s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
			}
			walk(p)
		}
		walk(s.Items)
		for _, list := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range list {
				walk(sub)
			}
		}
	}
	if doc.Components != nil {
		for _, s := range doc.Components.Schemas {
			walk(s)
		}
	}
}

// plannedServed names the planned properties an answer's body holds, as
// paths from the body's root ("data.generation").
func plannedServed(schema *openapi3.SchemaRef, body []byte) []string {
	var v any
	if schema == nil || json.Unmarshal(body, &v) != nil {
		return nil
	}
	var found []string
	var walk func(ref *openapi3.SchemaRef, v any, path string)
	walk = func(ref *openapi3.SchemaRef, v any, path string) {
		if ref == nil || ref.Value == nil {
			return
		}
		s := ref.Value
		switch v := v.(type) {
		case map[string]any:
			for name, p := range s.Properties {
				value, ok := v[name]
				if !ok {
					continue
				}
				where := strings.TrimPrefix(path+"."+name, ".")
				if p.Value != nil && planned(p.Value.Extensions) && !slices.Contains(found, where) {
					found = append(found, where)
				}
				walk(p, value, where)
			}
		case []any:
			for _, item := range v {
				walk(s.Items, item, path+"[]")
			}
		}
		for _, list := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range list {
				walk(sub, v, path)
			}
		}
	}
	walk(schema, v, "")
	slices.Sort(found)
	return found
}

// PlannedOperations lists the operations marked x-planned, as Operations
// lists the others.
func (v *OpenAPIValidator) PlannedOperations() []string { return v.operations(true) }

func (v *OpenAPIValidator) operations(plannedOnes bool) []string {
	var ops []string
	for path, item := range v.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if planned(op.Extensions) == plannedOnes {
				ops = append(ops, method+" "+path)
			}
		}
	}
	slices.Sort(ops)
	return ops
}

func plannedError(fields []string) error {
	return fmt.Errorf("the service now sends %s, which openapi.yaml marks %s: remove the mark",
		strings.Join(fields, ", "), plannedMark)
}
