// Package codectest holds package codec to the reflective packages it
// stands in for: it builds values and stored items of any type from fuzz
// input, and checks that codec and encoding/json, or codec and
// attributevalue, make the same of them.
package codectest

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/codec"
)

// CheckJSON fails t unless codec.AppendJSON writes what encoding/json
// does for v, or both fail.
func CheckJSON(t testing.TB, v any) {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	wantErr := enc.Encode(v)
	got, err := codec.AppendJSON([]byte("prefix"), v)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%T: error %v, encoding/json's %v", v, err, wantErr)
	}
	if err != nil {
		if string(got) != "prefix" {
			t.Fatalf("%T: failed, yet appended %q", v, got)
		}
		return
	}
	if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got[len("prefix"):], w) {
		t.Fatalf("%T:\ncodec         %s\nencoding/json %s", v, got[len("prefix"):], w)
	}
}

// CheckItem fails t unless codec.UnmarshalItem decodes item into a new
// value of typ (a struct type) as attributevalue.UnmarshalMap does: both
// fail, or both give equal values.
func CheckItem(t testing.TB, typ reflect.Type, item map[string]types.AttributeValue) {
	t.Helper()
	got, want := reflect.New(typ), reflect.New(typ)
	err := codec.UnmarshalItem(item, got.Interface())
	wantErr := attributevalue.UnmarshalMap(item, want.Interface())
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s from %s: error %v, attributevalue's %v", typ, describe(item), err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got.Interface(), want.Interface()) {
		t.Fatalf("%s from %s:\ncodec          %+v\nattributevalue %+v", typ, describe(item), got.Elem(), want.Elem())
	}
}

func describe(item map[string]types.AttributeValue) string {
	var b strings.Builder
	for k, av := range item {
		b.WriteString(k + "=" + strings.TrimPrefix(reflect.TypeOf(av).String(), "*types.AttributeValueMember") + " ")
	}
	return b.String()
}

// Source makes choices from fuzz input; past its end every choice is the
// first, and first choices make full, valid values: what an encoder must
// get right most often, and what a field added to a record gets even from
// short input.
type Source struct{ data []byte }

// NewSource reads choices from data.
func NewSource(data []byte) *Source { return &Source{data: data} }

func (s *Source) byte() byte {
	if len(s.data) == 0 {
		return 0
	}
	b := s.data[0]
	s.data = s.data[1:]
	return b
}

// Intn is a choice among n.
func (s *Source) Intn(n int) int { return int(s.byte()) % n }

// texts are strings an encoder may get wrong: escapes, non-ASCII, invalid
// UTF-8, JavaScript's line ends, HTML, long runs.
var texts = []string{
	"Café opening in Zürich", "", "plain", "crème brûlée\n\tfor \"everyone\"", `back\slash`,
	"<b>&amp;</b>", "\x00\x01\x1f\x7f", "line\u2028end\u2029", "bad \xff\xfe utf-8", "cut \xe2\x82",
	"😀 emoji", "\ufffd", strings.Repeat("long prose, mostly plain. ", 200) + "é",
	strings.Repeat("é", 300) + "\xc3",
}

// String is one of texts, or a piece of the input itself.
func (s *Source) String() string {
	if i := s.Intn(len(texts) + 1); i < len(texts) {
		return texts[i]
	}
	n := min(s.Intn(64), len(s.data))
	str := string(s.data[:n])
	s.data = s.data[n:]
	return str
}

var numbers = []float64{0.75, 0, 1, -1, 0.5, 0.75, 1e-7, 1e-6, 123456789.125, 1e20, 1e21, 1e300, -2.5e-8, math.SmallestNonzeroFloat64, math.MaxFloat64}

// Value is a value of type t with every field set from the input; pointers,
// slices, maps and interfaces are sometimes nil.
func (s *Source) Value(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	s.fill(v, 0)
	return v
}

func (s *Source) fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s.String())
	case reflect.Bool:
		v.SetBool(s.Intn(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(int8(s.byte()^7)) << s.Intn(57))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(s.byte()^7) << s.Intn(57))
	case reflect.Float32, reflect.Float64:
		f := numbers[s.Intn(len(numbers))]
		if s.Intn(8) == 7 {
			f = []float64{math.NaN(), math.Inf(1)}[s.Intn(2)]
		}
		v.SetFloat(f)
	case reflect.Pointer:
		if depth < 4 && s.Intn(4) != 3 {
			v.Set(reflect.New(v.Type().Elem()))
			s.fill(v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				s.fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if depth < 4 && s.Intn(4) != 3 {
			n := 1 + s.Intn(3)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				s.fill(v.Index(i), depth+1)
			}
		}
	case reflect.Map:
		if depth < 4 && s.Intn(4) != 3 {
			v.Set(reflect.MakeMap(v.Type()))
			for range 1 + s.Intn(3) {
				k := reflect.New(v.Type().Key()).Elem()
				e := reflect.New(v.Type().Elem()).Elem()
				s.fill(k, depth+1)
				s.fill(e, depth+1)
				v.SetMapIndex(k, e)
			}
		}
	case reflect.Interface:
		// Only an empty interface holds any of the choices; another (an
		// error kept for logs, tagged "-") stays nil.
		if v.NumMethod() == 0 && s.Intn(4) != 3 {
			choices := []any{s.String(), int64(s.byte()), s.Intn(2) == 1, numbers[s.Intn(len(numbers))], []any{"x", 1}, map[string]any{"b": 1, "a": "x"}}
			v.Set(reflect.ValueOf(choices[s.Intn(len(choices))]))
		}
	}
}

// Item is a stored item for struct type t: each of its fields' attributes
// left out, null, of the field's type or of another, sometimes named in
// another case; and attributes no field names.
func (s *Source) Item(t reflect.Type) map[string]types.AttributeValue {
	return s.item(t, 0)
}

func (s *Source) item(t reflect.Type, depth int) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("dynamodbav"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		switch s.Intn(8) {
		case 6: // left out
			continue
		case 7:
			name = strings.ToUpper(name)
		}
		item[name] = s.attribute(sf.Type, depth)
	}
	for range s.Intn(6) {
		// Names no field answers to, in any case.
		item["extra_"+strconv.Itoa(s.Intn(100))] = s.attribute(reflect.TypeFor[string](), depth)
	}
	return item
}

// attribute is a value for a field of type t: mostly of its type, at
// times NULL or of a type it cannot take.
func (s *Source) attribute(t reflect.Type, depth int) types.AttributeValue {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch s.Intn(10) {
	case 8:
		return &types.AttributeValueMemberNULL{Value: true}
	case 9:
		return s.anyAttribute(depth)
	}
	switch t.Kind() {
	case reflect.String:
		if s.Intn(8) == 7 {
			return &types.AttributeValueMemberN{Value: s.number()}
		}
		return &types.AttributeValueMemberS{Value: s.String()}
	case reflect.Bool:
		return &types.AttributeValueMemberBOOL{Value: s.Intn(2) == 0}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return &types.AttributeValueMemberN{Value: s.number()}
	case reflect.Struct:
		if depth < 3 {
			return &types.AttributeValueMemberM{Value: s.item(t, depth+1)}
		}
	}
	return s.anyAttribute(depth)
}

// number is a DynamoDB number: an integer, a decimal, an exponent, one too
// large for an int64, a negative one, or not a number at all.
func (s *Source) number() string {
	choices := []string{"9990", "0", "7", "-3", "0.75", "1e3", "1.5E-7", "18446744073709551616", "-9223372036854775809",
		"300", "70000", "3e38", "4e38", "1e309", "abc", "", strconv.Itoa(int(s.byte()) << s.Intn(40))}
	return choices[s.Intn(len(choices))]
}

func (s *Source) anyAttribute(depth int) types.AttributeValue {
	switch s.Intn(9) {
	case 0:
		return &types.AttributeValueMemberS{Value: s.String()}
	case 1:
		return &types.AttributeValueMemberN{Value: s.number()}
	case 2:
		return &types.AttributeValueMemberBOOL{Value: s.Intn(2) == 1}
	case 3:
		return &types.AttributeValueMemberB{Value: []byte(s.String())}
	case 4:
		return &types.AttributeValueMemberSS{Value: []string{s.String()}}
	case 5:
		return &types.AttributeValueMemberNS{Value: []string{s.number()}}
	case 6:
		if depth < 3 {
			return &types.AttributeValueMemberL{Value: []types.AttributeValue{s.anyAttribute(depth + 1)}}
		}
	case 7:
		if depth < 3 {
			return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": s.anyAttribute(depth + 1)}}
		}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}
