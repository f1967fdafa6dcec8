package records

import "fmt"

// Ref is a field that names a record of another resource of the same
// account (a document's voice_id): its id, a whole number from 1. Whoever
// writes the record looks the named one up (shared/crud) and refuses a
// name that is not there, for this account, with a 422 naming the field
// (Unknown). Keep is what the naming record keeps of the named one, by the
// named record's field: written beside the id as the named record is when
// it is looked up (a document keeps its voice's name, so its voice still
// reads after the voice is deleted).
type Ref struct {
	Resource string
	Keep     map[string]string
}

// maxRefID bounds an id as the stored ids are bounded (below the store's
// scope stride, 10^12).
const maxRefID = 999_999_999_999

func (k Ref) parse(field string, v InputValue) (any, string) {
	return Int{Min: 1, Max: maxRefID}.parse(field, v)
}

// Refs are the resource's Ref fields.
func (r *Resource) Refs() []Field {
	var out []Field
	for _, f := range r.Fields {
		if _, ok := f.Kind.(Ref); ok {
			out = append(out, f)
		}
	}
	return out
}

// Unknown is the error of a Ref field naming no record the account has.
func Unknown(field string) error {
	return &InvalidError{Fields: map[string][]string{field: {fmt.Sprintf("The selected %s is invalid.", label(field))}}}
}

// Cap bounds how many records of a resource an account may hold at once
// (50 voices). A create past it is refused with a 422 naming Field, and
// writes nothing. A deleted record stops counting once the tally has taken
// it off the account's count, moments after the delete.
type Cap struct {
	Records int64
	Field   string
}

// CapError is the error of a create past the resource's Cap.
func (c Cap) Error(object string) error {
	return &InvalidError{Fields: map[string][]string{c.Field: {
		fmt.Sprintf("An account may have at most %d %ss; delete one to add another.", c.Records, object)}}}
}
