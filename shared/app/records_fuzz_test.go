package app_test

import (
	"reflect"
	"testing"

	"contentapi/shared/app"
	"contentapi/shared/codec"
	"contentapi/shared/codec/codectest"
	"contentapi/shared/crud"
	"contentapi/shared/records"
)

// recordTypes are the Go types the resources' Render answers with, taken
// from the declarations: a resource added, or a field added to a record,
// is covered here without touching this test.
func recordTypes(t testing.TB) []reflect.Type {
	var types []reflect.Type
	for _, r := range app.Resources {
		v, err := r.Def.Render.Render(codec.Stored{}, records.View{})
		if err != nil {
			t.Fatalf("%s: rendering an empty item: %v", r.Def.Name, err)
		}
		types = append(types, reflect.TypeOf(v))
	}
	return types
}

// Every record type is decoded and written by the codec's own plans: one
// that falls back to the reflective packages is still right, but costs
// what the plans save (BENCHMARKS.md); extend shared/codec for the new
// field's type.
func TestRecordTypesArePlanned(t *testing.T) {
	for _, typ := range recordTypes(t) {
		if err := codec.ItemPlanned(typ); err != nil {
			t.Errorf("%s: items decoded by attributevalue: %v", typ, err)
		}
		if err := codec.JSONPlanned(typ); err != nil {
			t.Errorf("%s: written by encoding/json: %v", typ, err)
		}
	}
}

// FuzzRecords holds the codec to attributevalue and encoding/json on every
// record type, alone and in the answers it goes out in: any item decodes
// to the same record, any record writes the same bytes.
func FuzzRecords(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})
	f.Add([]byte("\x02\x03\x02\x03\x02\x03\x02\x03\x02\x03\x02\x03\x02\x03\x02\x03\x02\x03\x02\x03\x02\x03"))
	f.Add([]byte("\x0e\x0d\x0c\x0b\x0a\x09\x08\x07\x06\x05\x04\x03\x02\x01\x00\xff\xfe\xfd\xfc\xfb"))
	types := recordTypes(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s := codectest.NewSource(data)
		for _, typ := range types {
			codectest.CheckItem(t, typ, s.Item(typ))
			record := s.Value(typ).Interface()
			codectest.CheckJSON(t, record)
			codectest.CheckJSON(t, map[string]any{"data": record, "status": 200})
			codectest.CheckJSON(t, map[string]any{
				"data":   []any{record, s.Value(typ).Interface()},
				"links":  s.Value(reflect.TypeFor[crud.Links]()).Interface(),
				"meta":   s.Value(reflect.TypeFor[records.Meta]()).Interface(),
				"status": 200,
			})
		}
	})
}
