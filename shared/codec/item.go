package codec

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// UnmarshalItem decodes a stored item into out, a pointer to a struct,
// exactly as attributevalue.UnmarshalMap does: the same fields by the same
// `dynamodbav` names (an exact name first, else one that differs only in
// case), the same conversions, an error where it errs. The plan of each
// struct type is worked out once, from its fields, so a field added to a
// record is decoded without anyone touching this code; a struct holding
// what the plan does not cover (slices, maps, interfaces, embedded structs,
// custom unmarshalers, tag options that change decoding) goes to
// attributevalue itself.
func UnmarshalItem(item map[string]types.AttributeValue, out any) error {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return attributevalue.UnmarshalMap(item, out)
	}
	p := itemPlanOf(v.Type().Elem())
	if p == nil {
		return attributevalue.UnmarshalMap(item, out)
	}
	return p.decode(item, v.Elem())
}

// itemPlan decodes one struct type.
type itemPlan struct {
	fields []itemField
	byName map[string]int
}

type itemField struct {
	name   string
	index  int
	decode decodeFunc
}

// decodeFunc decodes one attribute into v (settable). av is never nil or
// NULL: those set the zero value before a decodeFunc is asked.
type decodeFunc func(av types.AttributeValue, v reflect.Value) error

var itemPlans sync.Map // reflect.Type -> *itemPlan, or nil when unsupported

func itemPlanOf(t reflect.Type) *itemPlan {
	if p, ok := itemPlans.Load(t); ok {
		return p.(*itemPlan)
	}
	p, _ := newItemPlan(t, map[reflect.Type]bool{})
	itemPlans.Store(t, p)
	return p
}

func (p *itemPlan) decode(item map[string]types.AttributeValue, v reflect.Value) error {
	for name, av := range item {
		i, ok := p.byName[name]
		if !ok {
			if i = p.foldedField(name); i < 0 {
				continue
			}
		}
		f := &p.fields[i]
		fv := v.Field(f.index)
		if isNull(av) {
			fv.SetZero()
			continue
		}
		if err := f.decode(av, fv); err != nil {
			return err
		}
	}
	return nil
}

// foldedField is the field whose name equals name but for case, as
// attributevalue falls back to; -1 if none.
func (p *itemPlan) foldedField(name string) int {
	for i := range p.fields {
		if len(p.fields[i].name) == len(name) && strings.EqualFold(p.fields[i].name, name) {
			return i
		}
	}
	return -1
}

func isNull(av types.AttributeValue) bool {
	_, null := av.(*types.AttributeValueMemberNULL)
	return av == nil || null
}

var (
	unmarshalerType = reflect.TypeFor[attributevalue.Unmarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

// newItemPlan works out how to decode t, or returns nil when t holds
// anything the plan leaves to attributevalue. seen guards recursive types.
func newItemPlan(t reflect.Type, seen map[reflect.Type]bool) (*itemPlan, error) {
	if seen[t] {
		return nil, fmt.Errorf("%s is recursive", t)
	}
	seen[t] = true
	defer delete(seen, t)
	p := &itemPlan{byName: map[string]int{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil, fmt.Errorf("%s embeds %s", t, sf.Type)
		}
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("dynamodbav"), ",")
		if name == "-" {
			continue
		}
		for _, o := range strings.Split(opts, ",") {
			if o == "string" || o == "unixtime" {
				return nil, fmt.Errorf("%s.%s: option %q", t, sf.Name, o)
			}
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := p.byName[name]; dup {
			return nil, fmt.Errorf("%s: two fields named %q", t, name)
		}
		dec, err := decoderFor(sf.Type, seen)
		if err != nil {
			return nil, err
		}
		p.byName[name] = len(p.fields)
		p.fields = append(p.fields, itemField{name: name, index: i, decode: dec})
	}
	// A name that equals another but for case would make attributevalue's
	// pick depend on the order it meets them in.
	for i := range p.fields {
		if p.foldedField(p.fields[i].name) != i {
			return nil, fmt.Errorf("%s: field names that differ only in case", t)
		}
	}
	return p, nil
}

func decoderFor(t reflect.Type, seen map[reflect.Type]bool) (decodeFunc, error) {
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) || t.ConvertibleTo(timeType) {
		return nil, fmt.Errorf("%s decodes itself", t)
	}
	switch t.Kind() {
	case reflect.String:
		return decodeString, nil
	case reflect.Bool:
		return decodeBool, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decodeInt, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return decodeUint, nil
	case reflect.Float32, reflect.Float64:
		return decodeFloat, nil
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Pointer {
			return nil, fmt.Errorf("%s: pointer to pointer", t)
		}
		elem, err := decoderFor(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return func(av types.AttributeValue, v reflect.Value) error {
			if v.IsNil() {
				v.Set(reflect.New(t.Elem()))
			}
			return elem(av, v.Elem())
		}, nil
	case reflect.Struct:
		p, err := newItemPlan(t, seen)
		if err != nil {
			return nil, err
		}
		return func(av types.AttributeValue, v reflect.Value) error {
			m, ok := av.(*types.AttributeValueMemberM)
			if !ok {
				return typeError(av, v)
			}
			return p.decode(m.Value, v)
		}, nil
	}
	return nil, fmt.Errorf("%s is left to attributevalue", t)
}

func decodeString(av types.AttributeValue, v reflect.Value) error {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		v.SetString(x.Value)
	case *types.AttributeValueMemberN:
		v.SetString(x.Value)
	default:
		return typeError(av, v)
	}
	return nil
}

func decodeBool(av types.AttributeValue, v reflect.Value) error {
	b, ok := av.(*types.AttributeValueMemberBOOL)
	if !ok {
		return typeError(av, v)
	}
	v.SetBool(b.Value)
	return nil
}

func decodeInt(av types.AttributeValue, v reflect.Value) error {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return typeError(av, v)
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return err
	}
	if v.OverflowInt(i) {
		return overflow(n.Value, v)
	}
	v.SetInt(i)
	return nil
}

func decodeUint(av types.AttributeValue, v reflect.Value) error {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return typeError(av, v)
	}
	i, err := strconv.ParseUint(n.Value, 10, 64)
	if err != nil {
		return err
	}
	if v.OverflowUint(i) {
		return overflow(n.Value, v)
	}
	v.SetUint(i)
	return nil
}

func decodeFloat(av types.AttributeValue, v reflect.Value) error {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return typeError(av, v)
	}
	f, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		return err
	}
	if v.OverflowFloat(f) {
		return overflow(n.Value, v)
	}
	v.SetFloat(f)
	return nil
}

func typeError(av types.AttributeValue, v reflect.Value) error {
	return &attributevalue.UnmarshalTypeError{Value: fmt.Sprintf("%T", av), Type: v.Type()}
}

func overflow(n string, v reflect.Value) error {
	return &attributevalue.UnmarshalTypeError{Value: "number overflow, " + n, Type: v.Type()}
}

// ItemPlanned returns nil when items are decoded into t (a struct type) by
// a plan of its own, else why t is left to attributevalue: still right,
// but slower.
func ItemPlanned(t reflect.Type) error {
	_, err := newItemPlan(t, map[reflect.Type]bool{})
	return err
}

// Stored is a stored item as a resource's records.Render decodes it: by
// UnmarshalItem's plans, which reflect on a type once, not per item.
type Stored map[string]types.AttributeValue

// Decode decodes the item into out, a pointer to a struct.
func (s Stored) Decode(out any) error { return UnmarshalItem(s, out) }
