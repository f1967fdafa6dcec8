// Package codec turns stored items into records and records into JSON
// without the per-call reflection of attributevalue and encoding/json,
// whose output it reproduces byte for byte: a plan per type, worked out
// once from the type's fields and tags, does the work. What a plan does not
// cover is handed to those packages, so a type can only be slower, never
// different; the fuzz tests hold both halves to the reflective packages on
// every record type the service declares.
package codec

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// AppendJSON appends the JSON of v to b: what a json.Encoder with
// SetEscapeHTML(false) writes, without its trailing newline. On error b is
// returned as it came.
func AppendJSON(b []byte, v any) ([]byte, error) {
	out, err := appendAny(b, v)
	if err != nil {
		return b, err
	}
	return out, nil
}

// JSON is a value AppendJSON has already encoded, written again as it is:
// an answer that had to measure its parts encodes each one once.
// encoding/json compacts it, which leaves AppendJSON's output unchanged.
type JSON []byte

// MarshalJSON makes encoding/json write it as AppendJSON does.
func (j JSON) MarshalJSON() ([]byte, error) { return j, nil }

// appendAny encodes an interface value: the types answers are made of
// first, any other through its plan.
func appendAny(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x), nil
	case JSON:
		return append(b, x...), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case map[string]any:
		return appendMapAny(b, x)
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendAny(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	rv := reflect.ValueOf(v)
	return jsonPlanOf(rv.Type())(b, rv)
}

func appendMapAny(b []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	var buf [8]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendAny(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// encodeFunc appends the JSON of v.
type encodeFunc func(b []byte, v reflect.Value) ([]byte, error)

var jsonPlans sync.Map // reflect.Type -> encodeFunc

func jsonPlanOf(t reflect.Type) encodeFunc {
	if f, ok := jsonPlans.Load(t); ok {
		return f.(encodeFunc)
	}
	f, err := newJSONPlan(t, map[reflect.Type]bool{})
	if err != nil {
		f = appendReflective
	}
	actual, _ := jsonPlans.LoadOrStore(t, f)
	return actual.(encodeFunc)
}

// appendReflective is encoding/json itself, for what the plans leave to it.
func appendReflective(b []byte, v reflect.Value) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v.Interface()); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
)

// newJSONPlan works out how to encode t, or errs when t holds anything
// encoding/json treats specially that the plans do not reproduce.
func newJSONPlan(t reflect.Type, seen map[reflect.Type]bool) (encodeFunc, error) {
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) || t == numberType {
		return nil, fmt.Errorf("%s encodes itself", t)
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Struct:
		if seen[t] {
			return nil, fmt.Errorf("%s is recursive", t)
		}
		seen[t] = true
		defer delete(seen, t)
	}
	switch t.Kind() {
	case reflect.String:
		return func(b []byte, v reflect.Value) ([]byte, error) { return appendString(b, v.String()), nil }, nil
	case reflect.Bool:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendBool(b, v.Bool()), nil }, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendInt(b, v.Int(), 10), nil }, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendUint(b, v.Uint(), 10), nil }, nil
	case reflect.Float32:
		return func(b []byte, v reflect.Value) ([]byte, error) { return appendFloat(b, v.Float(), 32) }, nil
	case reflect.Float64:
		return func(b []byte, v reflect.Value) ([]byte, error) { return appendFloat(b, v.Float(), 64) }, nil
	case reflect.Interface:
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			return appendAny(b, v.Elem().Interface())
		}, nil
	case reflect.Pointer:
		elem, err := newJSONPlan(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			return elem(b, v.Elem())
		}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, fmt.Errorf("%s is base64", t)
		}
		elem, err := newJSONPlan(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			b = append(b, '[')
			for i := range v.Len() {
				if i > 0 {
					b = append(b, ',')
				}
				var err error
				if b, err = elem(b, v.Index(i)); err != nil {
					return b, err
				}
			}
			return append(b, ']'), nil
		}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(textMarshalerType) || reflect.PointerTo(t.Key()).Implements(textMarshalerType) {
			return nil, fmt.Errorf("%s has keys that are not strings", t)
		}
		elem, err := newJSONPlan(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			keys := v.MapKeys()
			slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
			b = append(b, '{')
			for i, k := range keys {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, k.String())
				b = append(b, ':')
				var err error
				if b, err = elem(b, v.MapIndex(k)); err != nil {
					return b, err
				}
			}
			return append(b, '}'), nil
		}, nil
	case reflect.Struct:
		return newStructPlan(t, seen)
	}
	return nil, fmt.Errorf("%s is left to encoding/json", t)
}

// jsonField is one field of a struct plan.
type jsonField struct {
	index     int
	key       []byte // `"name":`
	omitEmpty bool
	encode    encodeFunc
}

func newStructPlan(t reflect.Type, seen map[reflect.Type]bool) (encodeFunc, error) {
	var fields []jsonField
	names := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil, fmt.Errorf("%s embeds %s", t, sf.Type)
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !validName(name) {
			name = sf.Name
		}
		f := jsonField{index: i}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "", "-":
			case "omitempty":
				f.omitEmpty = true
			default: // string, omitzero: encoding/json's own business
				return nil, fmt.Errorf("%s.%s: option %q", t, sf.Name, o)
			}
		}
		if names[name] {
			return nil, fmt.Errorf("%s: two fields named %q", t, name)
		}
		names[name] = true
		enc, err := newJSONPlan(sf.Type, seen)
		if err != nil {
			return nil, err
		}
		f.key = append(appendString(nil, name), ':')
		f.encode = enc
		fields = append(fields, f)
	}
	return func(b []byte, v reflect.Value) ([]byte, error) {
		b = append(b, '{')
		first := true
		for i := range fields {
			f := &fields[i]
			fv := v.Field(f.index)
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, f.key...)
			var err error
			if b, err = f.encode(b, fv); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	}, nil
}

// validName is encoding/json's rule for a name in a tag; an invalid one
// leaves the field its Go name.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// isEmpty is encoding/json's emptiness, for omitempty.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// appendFloat writes a float as encoding/json does: like ES6, plain
// digits between 1e-6 and 1e21, exponents outside, NaN and ±Inf refused.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, bits)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// JSONPlanned returns nil when values of t are written by a plan of their
// own, else why t is left to encoding/json: still right, but slower.
func JSONPlanned(t reflect.Type) error {
	_, err := newJSONPlan(t, map[reflect.Type]bool{})
	return err
}
