package images

import (
	"strings"
	"testing"

	"contentapi/shared/httpapi"
	"contentapi/shared/records"
)

// form builds a body input as a form would send it.
func form(kv ...string) records.Input {
	var in records.Input
	for i := 0; i < len(kv); i += 2 {
		in.Names = append(in.Names, kv[i])
		if in.Values == nil {
			in.Values = map[string]records.InputValue{}
		}
		in.Values[kv[i]] = records.InputValue{Text: kv[i+1]}
	}
	return in
}

func valid(extra ...string) records.Input {
	return form(append([]string{"name", "Sunset", "description", "A red sky", "resolution", "512x512"}, extra...)...)
}

// fieldError returns the 422 messages of field, or fails when err is not a
// 422 naming exactly that field.
func fieldError(t *testing.T, err error, field string) string {
	t.Helper()
	e, ok := err.(*records.InvalidError)
	if !ok {
		t.Fatalf("want 422 on %s, got %v", field, err)
	}
	if len(e.Fields[field]) == 0 || len(e.Fields) != 1 {
		t.Fatalf("want errors on %s only, got %v", field, e.Fields)
	}
	return e.Fields[field][0]
}

func TestCreateAcceptsEveryAllowedValue(t *testing.T) {
	for field, allowed := range map[string]records.Enum{
		"resolution": Resolutions, "style": Styles, "medium": Media, "filter": Filters,
	} {
		for _, value := range allowed {
			in := valid()
			in.Values[field] = records.InputValue{Text: value}
			if field != "resolution" {
				in.Names = append(in.Names, field)
			}
			v, err := Resource.ValidateCreate(in)
			if err != nil {
				t.Fatalf("%s=%s: %v", field, value, err)
			}
			if v[field] != value {
				t.Errorf("%s=%s stored as %v", field, value, v[field])
			}
		}
	}
	if len(Styles) != 14 || len(Media) != 11 || len(Filters) != 3 || len(Resolutions) != 3 {
		t.Fatalf("enum sizes %d/%d/%d/%d, want 14/11/3/3", len(Styles), len(Media), len(Filters), len(Resolutions))
	}
}

func TestCreateRejects(t *testing.T) {
	tests := []struct {
		name  string
		in    records.Input
		field string
		msg   string
	}{
		{"style not allowed", valid("style", "oil"), "style", "The selected style is invalid."},
		{"medium not allowed", valid("medium", "oil_paint"), "medium", "The selected medium is invalid."},
		{"filter not allowed", valid("filter", "blur"), "filter", "The selected filter is invalid."},
		{"resolution not allowed", form("name", "a", "description", "d", "resolution", "100x100"), "resolution", "The selected resolution is invalid."},
		{"enum is case sensitive", valid("style", "Anime"), "style", "The selected style is invalid."},
		{"name missing", form("description", "d", "resolution", "256x256"), "name", "The name field is required."},
		{"name blank after trim", form("name", "   ", "description", "d", "resolution", "256x256"), "name", "The name field is required."},
		{"description missing", form("name", "n", "resolution", "256x256"), "description", "The description field is required."},
		{"resolution missing", form("name", "n", "description", "d"), "resolution", "The resolution field is required."},
		{"name 129 ascii", form("name", strings.Repeat("a", 129), "description", "d", "resolution", "256x256"), "name", "The name field must not be greater than 128 characters."},
		{"description 2049", form("name", "n", "description", strings.Repeat("é", 2049), "resolution", "256x256"), "description", "The description field must not be greater than 2048 characters."},
		{"unknown field", valid("color", "red"), "color", "The color field is prohibited."},
		{"favorite is not a create field", valid("favorite", "1"), "favorite", "The favorite field is prohibited."},
		{"NUL byte", form("name", "a\x00b", "description", "d", "resolution", "256x256"), "name", "The name field must not contain control characters."},
		{"escape char", form("name", "a\x1bb", "description", "d", "resolution", "256x256"), "name", "The name field must not contain control characters."},
		{"invalid utf-8", form("name", "a\xffb", "description", "d", "resolution", "256x256"), "name", "The name field must be valid UTF-8 text."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resource.ValidateCreate(tt.in)
			if got := fieldError(t, err, tt.field); got != tt.msg {
				t.Errorf("message %q, want %q", got, tt.msg)
			}
		})
	}
}

func TestCreateNormalizes(t *testing.T) {
	in := form("name", "  "+strings.Repeat("日", 128)+"\t", "description", " line one\nline two ", "resolution", "1024x1024", "style", "", "medium", "  ")
	v, err := Resource.ValidateCreate(in)
	if err != nil {
		t.Fatal(err)
	}
	if v["name"] != strings.Repeat("日", 128) {
		t.Errorf("name not trimmed: %q", v["name"])
	}
	if v["description"] != "line one\nline two" {
		t.Errorf("description %q", v["description"])
	}
	// An empty optional field means "not given": stored as null.
	if v["style"] != nil || v["medium"] != nil || v["filter"] != nil {
		t.Errorf("empty optionals should be null: %v", v)
	}
}

func TestCreateRefusesRepeatedAndWrongTypes(t *testing.T) {
	in := valid()
	in.Repeated = []string{"name"}
	if msg := fieldError(t, errOf(Resource.ValidateCreate(in)), "name"); msg != "The name field must not be repeated." {
		t.Errorf("repeated: %q", msg)
	}
	in = valid()
	in.Values["name"] = records.InputValue{Text: "12", Type: records.InputNumber}
	if msg := fieldError(t, errOf(Resource.ValidateCreate(in)), "name"); msg != "The name field must be a string." {
		t.Errorf("number as name: %q", msg)
	}
	in = valid()
	in.Values["description"] = records.InputValue{Type: records.InputOther}
	fieldError(t, errOf(Resource.ValidateCreate(in)), "description")
}

func errOf(_ records.Values, err error) error { return err }

func TestUpdate(t *testing.T) {
	for _, spelling := range []struct {
		in   records.InputValue
		want bool
	}{
		{records.InputValue{Text: "1"}, true}, {records.InputValue{Text: "0"}, false},
		{records.InputValue{Text: "true"}, true}, {records.InputValue{Text: "false"}, false},
		{records.InputValue{Text: "TRUE"}, true},
		{records.InputValue{Text: "yes"}, true}, {records.InputValue{Text: "Off"}, false},
		{records.InputValue{Text: "true", Type: records.InputBool}, true},
		{records.InputValue{Text: "0", Type: records.InputNumber}, false},
	} {
		in := form("favorite", "")
		in.Values["favorite"] = spelling.in
		v, err := Resource.ValidateUpdate(in)
		if err != nil || v["favorite"] != spelling.want {
			t.Errorf("favorite %+v: got %v, %v", spelling.in, v, err)
		}
	}
	for _, bad := range []string{"maybe", "2", "y", "-1"} {
		msg := fieldError(t, errOf(Resource.ValidateUpdate(form("favorite", bad))), "favorite")
		if msg != "The favorite field must be true or false." {
			t.Errorf("favorite=%s: %q", bad, msg)
		}
	}
	v, err := Resource.ValidateUpdate(form("name", " New "))
	if err != nil || v["name"] != "New" || len(v) != 1 {
		t.Errorf("partial update: %v %v", v, err)
	}
	fieldError(t, errOf(Resource.ValidateUpdate(form("description", "x"))), "description")
	fieldError(t, errOf(Resource.ValidateUpdate(form("style", "anime"))), "style")
	msg := fieldError(t, errOf(Resource.ValidateUpdate(form())), "name")
	if msg != "The name field is required when none of favorite are present." {
		t.Errorf("empty update: %q", msg)
	}
	fieldError(t, errOf(Resource.ValidateUpdate(form("name", "  "))), "name")
}

func TestParseList(t *testing.T) {
	q := func(raw string) (records.ListQuery, error) {
		query, err := httpapi.ParseQueryString(raw)
		if err != nil {
			t.Fatal(err)
		}
		return Resource.ParseList(query, records.Cursors{})
	}
	lq, err := q("")
	if err != nil || lq.SortBy != "id" || !lq.Desc || lq.PerPage != 10 || lq.Page != 1 || len(lq.Filters) != 0 {
		t.Fatalf("defaults: %+v %v", lq, err)
	}
	lq, err = q("search=CAF%C3%89&style=anime&favorite=true&resolution=512x512&medium=ink&filter=sepia&sort_by=name&sort=asc&per_page=100&page=3&unknown=x")
	if err != nil {
		t.Fatal(err)
	}
	if lq.Search != "cafe" || lq.SortBy != "name" || lq.Desc || lq.PerPage != 100 || lq.Page != 3 || len(lq.Filters) != 5 {
		t.Fatalf("parsed: %+v", lq)
	}
	for raw, field := range map[string]string{
		"per_page=7": "per_page", "sort=up": "sort", "sort_by=created": "sort_by",
		"favorite=maybe": "favorite", "style=oil": "style", "medium=oil": "medium",
		"filter=blur": "filter", "resolution=1x1": "resolution", "page=0": "page",
		"page=-1": "page", "page=abc": "page", "page=1000000000001": "page", "search_by=result": "search_by",
		"per_page=10&per_page=25": "per_page", "search=%00": "search",
	} {
		_, err := q(raw)
		fieldError(t, err, field)
	}
}
