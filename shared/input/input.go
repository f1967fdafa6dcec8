// Package input is what a client sent, parsed but not yet judged: the
// fields of a request body and the parameters of a query string, in the
// order they came, repeats kept. The HTTP layer fills it in; the domain
// (records) validates it. Neither needs to know the other.
package input

// Kind tells what JSON type a body value had; form values are all strings.
type Kind int

const (
	KindString Kind = iota
	KindNumber
	KindBool
	KindNull
	// KindOther is an array or object: never a valid field value.
	KindOther
)

// Value is one field of a request body. Text is the string, the number as
// written, or "true"/"false".
type Value struct {
	Text string
	Kind Kind
}

// Fields is a parsed request body: fields in the order they came.
type Fields struct {
	Names  []string
	Values map[string]Value
	// Repeated lists, once each, the fields sent more than once; such
	// input is refused rather than silently picking one.
	Repeated []string
	repeated map[string]bool
}

// Add records a field; a name already given keeps its first value and is
// noted as repeated.
func (f *Fields) Add(name string, v Value) {
	if f.Values == nil {
		f.Values = map[string]Value{}
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

// Param is one name=value pair of a query string, decoded.
type Param struct{ Name, Value string }

// Params is a query string with its order and repeats kept, so pagination
// links can rebuild it the way Laravel's paginator does.
type Params []Param

// Get returns the value of name and whether it was given; a name given more
// than once is reported through repeated so the caller can refuse it.
func (p Params) Get(name string) (value string, given, repeated bool) {
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
