package codec_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/codec"
	"contentapi/shared/codec/codectest"
)

// The shapes records take, and some the plans leave to the reflective
// packages; each must come out as those packages make it.

type status string

type nested struct {
	Status status  `json:"status" dynamodbav:"status"`
	Tokens *int64  `json:"tokens" dynamodbav:"tokens"`
	Ended  *string `json:"ended" dynamodbav:"ended"`
	Hidden string  `json:"-" dynamodbav:"hidden,omitempty"`
	Count  int     `json:"-" dynamodbav:"count,omitempty"`
}

type record struct {
	ID       int64    `json:"id" dynamodbav:"id"`
	Name     string   `json:"name" dynamodbav:"name"`
	Score    float64  `json:"score" dynamodbav:"score"`
	Ratio    float32  `json:"ratio" dynamodbav:"ratio"`
	Small    int8     `json:"small" dynamodbav:"small"`
	Size     uint16   `json:"size" dynamodbav:"size"`
	Result   *string  `json:"result" dynamodbav:"result"`
	Favorite bool     `json:"favorite" dynamodbav:"favorite"`
	Nested   *nested  `json:"nested" dynamodbav:"nested"`
	Inline   nested   `json:"inline" dynamodbav:"inline"`
	Computed string   `json:"computed" dynamodbav:"-"`
	Untagged string   // named Untagged in both
	Omitted  string   `json:"omitted,omitempty" dynamodbav:"omitted"`
	Link     *string  `json:"link,omitempty"`
	Odd      string   `json:"cost€"` // a name encoding/json refuses: the Go name stands
	Tags     []string `json:"tags" dynamodbav:"-"`
	unseen   string
}

// Types the plans leave to the reflective packages.
type (
	withTime struct {
		At time.Time `json:"at" dynamodbav:"at"`
	}
	withRaw struct {
		Raw json.RawMessage `json:"raw" dynamodbav:"-"`
	}
	withList struct {
		Items []string       `json:"items" dynamodbav:"items"`
		Attrs map[string]int `json:"attrs" dynamodbav:"attrs"`
		Any   any            `json:"any" dynamodbav:"any"`
	}
	withEmbedded struct {
		nested
		Own string `json:"own" dynamodbav:"own"`
	}
	withStringOption struct {
		N int64 `json:"n,string" dynamodbav:"n,string"`
	}
	recursive struct {
		Name     string       `json:"name" dynamodbav:"name"`
		Children []*recursive `json:"children" dynamodbav:"-"`
		Next     *recursive   `json:"next" dynamodbav:"next"`
	}
)

var structTypes = []reflect.Type{
	reflect.TypeFor[record](), reflect.TypeFor[nested](), reflect.TypeFor[withTime](), reflect.TypeFor[withRaw](),
	reflect.TypeFor[withList](), reflect.TypeFor[withEmbedded](), reflect.TypeFor[withStringOption](), reflect.TypeFor[recursive](),
}

// answer is shaped like the service's list answers: a map of any, its
// records as they are and as they come encoded already (codec.JSON).
func answer(s *codectest.Source, t reflect.Type) map[string]any {
	data := []any{s.Value(t).Interface(), s.Value(reflect.PointerTo(t)).Interface()}
	if encoded, err := codec.AppendJSON(nil, s.Value(t).Interface()); err == nil {
		data = append(data, codec.JSON(encoded))
	}
	return map[string]any{"data": data, "status": 200, "meta": map[string]any{"total": int64(12), "path": s.String()}, "links": nil}
}

func FuzzJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte("\x05\x07\x0d\x0c\x03\x01\x09\x08\x0b\x02\x04\x06\x0a\x0e\xff\x80"))
	f.Add([]byte("\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e\x0e"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := codectest.NewSource(data)
		for _, typ := range structTypes {
			codectest.CheckJSON(t, s.Value(typ).Interface())
			codectest.CheckJSON(t, answer(s, typ))
		}
		codectest.CheckJSON(t, s.String())
		codectest.CheckJSON(t, s.Value(reflect.TypeFor[map[string][]string]()).Interface())
	})
}

func FuzzItem(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte("\x02\x03\x04\x05\x06\x07\x08\x09\x02\x03\x04\x05\x06\x07\x08\x09\x02\x03\x04\x05\x06\x07\x08\x09"))
	f.Add([]byte("\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := codectest.NewSource(data)
		for _, typ := range structTypes {
			codectest.CheckItem(t, typ, s.Item(typ))
		}
	})
}

// Every character a string can hold, alone and amid plain text, and cut
// by the copy's runs at every offset.
func TestStrings(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		codectest.CheckJSON(t, string(r))
		codectest.CheckJSON(t, "plain text "+string(r)+" more plain text")
	}
	for b := range 256 {
		codectest.CheckJSON(t, "x"+string([]byte{byte(b)})+"y")
	}
	const mix = "aé€😀\n\"\\\u2028"
	long := []byte{}
	for i := range 600 {
		long = append(long, mix[i%len(mix)])
	}
	for i := range len(long) {
		codectest.CheckJSON(t, string(long[i:]))
	}
}

func TestFloats(t *testing.T) {
	for _, f := range []float64{0, 1, -0.5, 1e-6, 9.99e-7, 1e21, 9.99e20, 1.5e-300, 123.456, 3.4e38} {
		codectest.CheckJSON(t, f)
		codectest.CheckJSON(t, float32(f))
	}
}

// What the item of a record holds is decoded as attributevalue decodes it.
func TestItem(t *testing.T) {
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	null := &types.AttributeValueMemberNULL{Value: true}
	testCases := []struct {
		name string
		item map[string]types.AttributeValue
	}{
		{"every field", map[string]types.AttributeValue{
			"id": n("7"), "name": str("Café"), "score": n("0.75"), "ratio": n("0.5"), "small": n("-8"), "size": n("65535"),
			"result": str("text"), "favorite": &types.AttributeValueMemberBOOL{Value: true}, "Untagged": str("u"),
			"nested":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"status": str("done"), "tokens": n("12"), "count": n("3")}},
			"inline":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"ended": str("2026-01-01")}},
			"account": str("acme"), "id_key": n("1000000000007"),
		}},
		{"nulls", map[string]types.AttributeValue{"id": null, "result": null, "nested": null, "inline": null, "name": null}},
		{"names in another case", map[string]types.AttributeValue{"ID": n("3"), "untagged": str("u"), "NAME": str("n")}},
		{"a number as text", map[string]types.AttributeValue{"name": n("12.50")}},
		{"text as a number", map[string]types.AttributeValue{"id": str("7")}},
		{"a decimal as an integer", map[string]types.AttributeValue{"id": n("7.5")}},
		{"overflow", map[string]types.AttributeValue{"small": n("128")}},
		{"a negative size", map[string]types.AttributeValue{"size": n("-1")}},
		{"float32 overflow", map[string]types.AttributeValue{"ratio": n("1e39")}},
		{"a list as text", map[string]types.AttributeValue{"name": &types.AttributeValueMemberL{}}},
		{"text as a map", map[string]types.AttributeValue{"nested": str("x")}},
		{"a bool as a number", map[string]types.AttributeValue{"score": &types.AttributeValueMemberBOOL{}}},
		{"a nil attribute", map[string]types.AttributeValue{"name": nil}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, typ := range structTypes {
				codectest.CheckItem(t, typ, tc.item)
			}
		})
	}
}

// A value decoded fills only what it names; the rest keeps its zero value.
func TestItemDecodes(t *testing.T) {
	r := record{unseen: "kept"}
	err := codec.UnmarshalItem(map[string]types.AttributeValue{
		"id":     &types.AttributeValueMemberN{Value: "42"},
		"result": &types.AttributeValueMemberS{Value: "done"},
		"nested": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"status": &types.AttributeValueMemberS{Value: "running"}}},
	}, &r)
	if err != nil || r.ID != 42 || r.Result == nil || *r.Result != "done" || r.Nested == nil || r.Nested.Status != "running" || r.Name != "" || r.unseen != "kept" {
		t.Fatalf("decoded %+v, %v", r, err)
	}
}

func TestAppendKeepsPrefixOnError(t *testing.T) {
	b, err := codec.AppendJSON([]byte("x"), map[string]any{"a": []any{1, struct{ F float64 }{F: nanValue()}}})
	if err == nil || string(b) != "x" {
		t.Fatalf("NaN: %q, %v", b, err)
	}
}

func nanValue() float64 { var z float64; return z / z }

// QuotedLen is the length encoding/json, HTML escaping off as the Lambda
// runtime sets it, gives a string: every character, alone and amid plain
// text, and every byte, valid or not.
func TestQuotedLen(t *testing.T) {
	check := func(s string) {
		t.Helper()
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := codec.QuotedLen([]byte(s)), b.Len()-1; got != want { // Encode adds a newline
			t.Fatalf("QuotedLen(%q) = %d, want %d", s, got, want)
		}
	}
	for r := rune(0); r < 0x3000; r++ {
		check(string(r))
		check("plain text " + string(r) + " more plain text")
	}
	for b := range 256 {
		check("x" + string([]byte{byte(b)}) + "y")
	}
	check(strings.Repeat("\"\u2028\\\x01<>&\n", 1000))
}
