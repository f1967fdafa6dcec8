package records_test

import (
	"testing"

	"contentapi/shared/documents"
	"contentapi/shared/httpapi"
	"contentapi/shared/images"
	"contentapi/shared/records"
)

// TestSpellings: text takes the documented spellings of a value (the
// OpenAPI document states them as patterns), and a JSON number counts by
// its value, as JSON Schema validators count it.
func TestSpellings(t *testing.T) {
	text := func(s string) records.InputValue { return records.InputValue{Text: s, Type: records.InputString} }
	number := func(s string) records.InputValue { return records.InputValue{Text: s, Type: records.InputNumber} }
	tests := []struct {
		res   *records.Resource
		field string
		in    records.InputValue
		want  any // nil: refused
	}{
		{documents.Resource, "template_id", text("9"), int64(9)},
		{documents.Resource, "template_id", text("09"), int64(9)},
		{documents.Resource, "template_id", text("0000000000000000000000052"), int64(52)},
		{documents.Resource, "template_id", text("+9"), nil},
		{documents.Resource, "template_id", text("9.0"), nil},
		{documents.Resource, "template_id", text("0"), nil},
		{documents.Resource, "template_id", text("1000000000000000000000"), nil},
		{documents.Resource, "template_id", number("9"), int64(9)},
		{documents.Resource, "template_id", number("9.0"), int64(9)},
		{documents.Resource, "template_id", number("5.2e1"), int64(52)},
		{documents.Resource, "template_id", number("9.5"), nil},
		{documents.Resource, "template_id", number("-9"), nil},
		{documents.Resource, "template_id", number("1e300"), nil},
		{documents.Resource, "creativity", text("+.5"), 0.5},
		{documents.Resource, "creativity", text("-0.0"), 0.0},
		{documents.Resource, "creativity", text("1."), 1.0},
		{documents.Resource, "creativity", text("25e-2"), nil},
		{documents.Resource, "creativity", number("25e-2"), 0.25},
		{images.Resource, "favorite", text("TRUE"), true},
		{images.Resource, "favorite", text("fAlSe"), false},
		{images.Resource, "favorite", text("on"), true},
		{images.Resource, "favorite", text("Yes"), true},
		{images.Resource, "favorite", text("OFF"), false},
		{images.Resource, "favorite", text("no"), false},
		{images.Resource, "favorite", text(" on "), true},
		{images.Resource, "favorite", text("y"), nil},
		{images.Resource, "favorite", text("onn"), nil},
		{images.Resource, "favorite", text("t"), nil},
		{images.Resource, "favorite", text("01"), nil},
		{images.Resource, "favorite", number("1"), true},
		{images.Resource, "favorite", number("1.0"), true},
		{images.Resource, "favorite", number("-0"), false},
		{images.Resource, "favorite", number("2"), nil},
	}
	for _, tt := range tests {
		in := records.Input{Names: []string{tt.field}, Values: map[string]records.InputValue{tt.field: tt.in}}
		v, err := tt.res.ValidateUpdate(in)
		if tt.field != "favorite" {
			v, err = tt.res.ValidateCreate(withRequired(in))
		}
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("%s %+v: accepted as %v", tt.field, tt.in, v[tt.field])
		case tt.want != nil && (err != nil || v[tt.field] != tt.want):
			t.Errorf("%s %+v: %v %v, want %v", tt.field, tt.in, v[tt.field], err, tt.want)
		}
	}
}

// withRequired adds a document's required fields to in.
func withRequired(in records.Input) records.Input {
	for _, name := range []string{"name", "prompt"} {
		in.Names = append(in.Names, name)
		in.Values[name] = records.InputValue{Text: "x", Type: records.InputString}
	}
	return in
}

func TestPerPageSpellings(t *testing.T) {
	for raw, want := range map[string]int{"per_page=25": 25, "per_page=0025": 25, "per_page=": 10, "per_page=+25": 0, "per_page=25.0": 0, "per_page=-10": 0} {
		q, err := httpapi.ParseQueryString(raw)
		if err != nil {
			t.Fatal(err)
		}
		lq, err := images.Resource.ParseList(q, records.Cursors{})
		switch {
		case want == 0 && err == nil:
			t.Errorf("%s: accepted as %d", raw, lq.PerPage)
		case want != 0 && (err != nil || lq.PerPage != want):
			t.Errorf("%s: %d %v, want %d", raw, lq.PerPage, err, want)
		}
	}
}

// TestListSpellings: a list's search is trimmed as a body's text is, sort
// takes any letter case, and favorite every flag's spelling.
func TestListSpellings(t *testing.T) {
	tests := []struct {
		raw  string
		want func(records.ListQuery) bool // nil: refused
	}{
		{"search=%20sunrise%20", func(q records.ListQuery) bool { return q.Search == "sunrise" }},
		{"search=%20%20", func(q records.ListQuery) bool { return q.Search == "" }},
		{"sort=ASC", func(q records.ListQuery) bool { return !q.Desc }},
		{"sort=Desc", func(q records.ListQuery) bool { return q.Desc }},
		{"sort=%20asc", nil},
		{"sort=up", nil},
		{"favorite=on", func(q records.ListQuery) bool { return len(q.Filters) == 1 && q.Filters[0].Value == true }},
		{"favorite=No", func(q records.ListQuery) bool { return len(q.Filters) == 1 && q.Filters[0].Value == false }},
		{"favorite=maybe", nil},
	}
	for _, tt := range tests {
		q, err := httpapi.ParseQueryString(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		lq, err := images.Resource.ParseList(q, records.Cursors{})
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("%s: accepted as %+v", tt.raw, lq)
		case tt.want != nil && (err != nil || !tt.want(lq)):
			t.Errorf("%s: %+v %v", tt.raw, lq, err)
		}
	}
}
