package records

// What a client sent, parsed but not yet judged: the fields of a request
// body (Input) and the parameters of a query string (Query), in the order
// they came, repeats kept. The HTTP layer fills them in; the Resource's
// Validate and ParseList methods judge them. Neither side needs the other.

// InputType tells what JSON type a body value had; form values are all
// strings. (A field's Kind is what the field accepts; this is what came.)
type InputType int

const (
	InputString InputType = iota
	InputNumber
	InputBool
	InputNull
	// InputOther is an object, or an array of anything but strings: never
	// a valid field value.
	InputOther
	// InputList is a JSON array of strings, in Items: a field that takes a
	// list (a webhook's events) reads it; it is no value of any Kind.
	InputList
)

// InputValue is one field of a request body. Text is the string, the
// number as written, or "true"/"false".
type InputValue struct {
	Text  string
	Type  InputType
	Items []string // an InputList's strings
}

// Input is a parsed request body: fields in the order they came.
type Input struct {
	Names  []string
	Values map[string]InputValue
	// Repeated lists, once each, the fields sent more than once; such
	// input is refused rather than silently picking one.
	Repeated []string
	repeated map[string]bool
}

// Add records a field; a name already given keeps its first value and is
// noted as repeated.
func (f *Input) Add(name string, v InputValue) {
	if f.Values == nil {
		f.Values = map[string]InputValue{}
	}
	if _, dup := f.Values[name]; !dup {
		f.Names = append(f.Names, name)
		f.Values[name] = v
		return
	}
	if f.repeated[name] {
		return
	}
	if f.repeated == nil {
		f.repeated = map[string]bool{}
	}
	f.repeated[name] = true
	f.Repeated = append(f.Repeated, name)
}

// QueryParam is one name=value pair of a query string, decoded.
type QueryParam struct{ Name, Value string }

// Query is a query string with its order and repeats kept, so pagination
// links can rebuild it the way Laravel's paginator does.
type Query []QueryParam

// Get returns the value of name and whether it was given; a name given more
// than once is reported through repeated so the caller can refuse it.
func (p Query) Get(name string) (value string, given, repeated bool) {
	for _, q := range p {
		if q.Name != name {
			continue
		}
		if given {
			return value, true, true
		}
		value, given = q.Value, true
	}
	return value, given, false
}
