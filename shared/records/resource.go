package records

import (
	"fmt"
	"strings"

	"contentapi/shared/generation"
)

// Field is one attribute a client may send.
type Field struct {
	Name string
	Kind Kind
	// Required on create; optional fields not sent take Default (nil: null).
	Required bool
	Default  any
	// Create and Update tell which operations take the field; Regenerate
	// that a regenerate may change it (an input of generation).
	Create, Update, Regenerate bool
}

// Filter is a list query parameter that selects records by equality on a
// stored attribute (the attribute must be projected into the list indexes).
type Filter struct {
	Param string
	Kind  Kind
	// OnRecord matches the record itself, not its list index entry: an
	// attribute the indexes do not project (adding one to a deployed
	// index means rebuilding it). Like a search by result, such a list
	// reads the candidates' records, within the read budget, and its
	// total may be estimated.
	OnRecord bool
	// Else, for a filter on the records, names the attribute matched where
	// the record holds no value of its own (a document's language from its
	// voice).
	Else string
}

// Resource describes one kind of record.
type Resource struct {
	// Name is the plural used in paths ("images"); Object the singular in
	// delete answers ("image").
	Name, Object string
	Fields       []Field
	// Scope, when set, is an immutable integer field every list is limited
	// to, with a default when the list does not name one (documents:
	// template_id). Records are counted per scope.
	Scope *Scope
	// Filters are the equality filters of the list (favorite, style, ...).
	Filters []Filter
	// SearchBy lists what search_by may name; the first is the default.
	SearchBy []string
	// Derive adds attributes computed from the sent ones (words from result).
	Derive func(Values)
	// Generated is the field generation writes ("result"): an update of it
	// waits until the record's generation has ended.
	Generated string
	// Stored names the attributes a record holds besides Fields: what
	// Derive adds and what the service writes itself. Deleting a record
	// clears Fields and Stored, so none of its content outlives it.
	Stored []string
	// Render is how a record reads as the API shows it (RenderAs).
	Render Render
	// Content is how a record gets its content where the deployment
	// generates; nil for a resource whose records get none.
	Content *generation.Content
	// Variants names the Int field that says how many texts one
	// generation writes (a document's variants); "" writes one. Each is a
	// generation's worth of the models' work, so a generation holds that
	// many times what one holds of the monthly quota (VariantsOf), and
	// stores up to that many times what Generated holds.
	Variants string
	// Originals, where set, keeps what a generation of several parts
	// wrote of the fields a client may then change (a document of several
	// variants: its result, and the words derived from it), so the record
	// still shows every part as generated (a document's results).
	Originals *Originals
	// Cap, when set, bounds how many records an account may hold at once.
	Cap *Cap
}

// Originals are where a record keeps the generated values of fields a
// client changes. A client's first update of one of Fields copies the
// stored value to the attribute named beside it, once, on a record that
// holds the attribute When (a document's other_results: a generation of
// several parts wrote it); the next generation's write removes them. A
// record without When keeps none: it costs to write and read what it did.
type Originals struct {
	Fields map[string]string
	When   string
}

// MaxVariants is the most variants one generation writes: the Variants
// field's bound, else 1.
func (r *Resource) MaxVariants() int64 {
	for _, f := range r.Fields {
		if k, ok := f.Kind.(Int); ok && f.Name == r.Variants && r.Variants != "" {
			return max(k.Max, 1)
		}
	}
	return 1
}

// VariantsOf is how many variants a generation of a record with values v
// writes: its Variants field, else 1.
func (r *Resource) VariantsOf(v Values) int64 {
	if n, ok := v[r.Variants].(int64); ok && r.Variants != "" && n > 1 {
		return n
	}
	return 1
}

// Scope is the integer field that partitions a resource's lists.
type Scope struct {
	Field   string
	Default int64
	Kind    Int
	// All, when set, is the value of Field that lists the records of every
	// scope at once (ListQuery.AllScopes).
	All string
}

// Values are validated field values ready to store: string, bool, int64,
// float64, or nil for null; what a generation writes may also be lists
// ([]any) and maps (map[string]any) of them (a document's results).
type Values map[string]any

// ValidateCreate checks a create body: every field the resource takes on
// create, required ones present, no other field.
func (r *Resource) ValidateCreate(in Input) (Values, error) {
	errs := inputErrors(in)
	out := Values{}
	for _, f := range r.Fields {
		if !f.Create {
			continue
		}
		if take(in, f, errs, out) {
			continue
		}
		if f.Required {
			errs.add(f.Name, fmt.Sprintf("The %s field is required.", label(f.Name)))
		} else {
			out[f.Name] = f.Default
		}
	}
	r.refuseUnknown(in, errs, func(f Field) bool { return f.Create })
	if err := errs.err(); err != nil {
		return nil, err
	}
	if r.Derive != nil {
		r.Derive(out)
	}
	return out, nil
}

// ValidateUpdate checks a partial update: only fields the resource takes on
// update, at least one of them.
func (r *Resource) ValidateUpdate(in Input) (Values, error) {
	errs := inputErrors(in)
	out := Values{}
	var updatable []string
	for _, f := range r.Fields {
		if !f.Update {
			continue
		}
		updatable = append(updatable, f.Name)
		take(in, f, errs, out)
	}
	r.refuseUnknown(in, errs, func(f Field) bool { return f.Update })
	if len(errs) == 0 && len(out) == 0 {
		first, rest := updatable[0], updatable[1:]
		errs.add(first, fmt.Sprintf("The %s field is required when none of %s are present.",
			label(first), strings.Join(rest, " / ")))
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	if r.Derive != nil {
		r.Derive(out)
	}
	return out, nil
}

// take parses field f when the client gave it, into out or, when it is
// invalid, into errs; it reports whether f was given.
func take(in Input, f Field, errs fieldErrors, out Values) bool {
	v, given := present(in, f.Name)
	if !given {
		return false
	}
	if val, msg := f.Kind.parse(f.Name, v); msg != "" {
		errs.add(f.Name, msg)
	} else {
		out[f.Name] = val
	}
	return true
}

// ValidateRegenerate checks the new inputs of a regenerate: only fields
// that are inputs of generation, each validated as on create, none
// required (a field not given keeps its value; no body at all regenerates
// from the current inputs).
func (r *Resource) ValidateRegenerate(in Input) (Values, error) {
	errs := inputErrors(in)
	out := Values{}
	for _, f := range r.Fields {
		if !f.Regenerate {
			continue
		}
		take(in, f, errs, out)
	}
	r.refuseUnknown(in, errs, func(f Field) bool { return f.Regenerate })
	if err := errs.err(); err != nil {
		return nil, err
	}
	return out, nil
}

func inputErrors(in Input) fieldErrors {
	errs := fieldErrors{}
	for _, name := range in.Repeated {
		errs.add(name, fmt.Sprintf("The %s field must not be repeated.", label(name)))
	}
	return errs
}

// present returns a field's value when it was given: trimmed strings that
// end up empty, and JSON nulls, count as not given.
func present(in Input, name string) (InputValue, bool) {
	v, ok := in.Values[name]
	if !ok || v.Type == InputNull {
		return v, false
	}
	if v.Type == InputString {
		v.Text = strings.TrimSpace(v.Text)
		if v.Text == "" {
			return v, false
		}
	}
	return v, true
}

func (r *Resource) refuseUnknown(in Input, errs fieldErrors, takes func(Field) bool) {
	for _, name := range in.Names {
		known := false
		for _, f := range r.Fields {
			if f.Name == name && takes(f) {
				known = true
				break
			}
		}
		if !known {
			errs.add(name, fmt.Sprintf("The %s field is prohibited.", label(name)))
		}
	}
}
