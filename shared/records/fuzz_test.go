package records_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"contentapi/shared/app"
	"contentapi/shared/httpapi"
	"contentapi/shared/records"
)

func resources() []*records.Resource {
	var defs []*records.Resource
	for _, r := range app.Resources {
		defs = append(defs, r.Def)
	}
	return defs
}

// Any parsed body validates into values of the stored types, or is
// invalid within the report's bounds: never a panic, never a value the
// store cannot write.
func FuzzValidate(f *testing.F) {
	f.Add("application/x-www-form-urlencoded", []byte("name=%E6%97%A5&description=d&resolution=512x512&style=anime&favorite=1"))
	f.Add("application/json", []byte(`{"name":"x","prompt":"p","creativity":".5","template_id":52,"result":null}`))
	f.Add("application/json", []byte(`{"name":123,"creativity":1e308,"template_id":-1,"favorite":"maybe"}`))
	f.Add("application/x-www-form-urlencoded", []byte("name=%00&description=%1b&resolution="))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		in, err := httpapi.ParseBody(r)
		if err != nil {
			return
		}
		for _, res := range resources() {
			for _, validate := range []func(records.Input) (records.Values, error){res.ValidateCreate, res.ValidateUpdate} {
				v, err := validate(in)
				if err != nil {
					e, ok := err.(*records.InvalidError)
					if !ok || len(e.Fields) == 0 || len(e.Fields) > records.MaxInvalidFields {
						t.Fatalf("%s: error %v", res.Name, err)
					}
					for name := range e.Fields {
						if utf8.RuneCountInString(name) > records.MaxFieldNameRunes+1 {
							t.Fatalf("%s: reported name %q is not cut short", res.Name, name)
						}
					}
					continue
				}
				for name, val := range v {
					switch val.(type) {
					case nil, string, bool, int64, float64:
					default:
						t.Fatalf("%s: %s has type %T", res.Name, name, val)
					}
				}
			}
		}
	})
}

// Any list query is a valid ListQuery or invalid.
func FuzzParseList(f *testing.F) {
	f.Add("per_page=7&sort=up&favorite=maybe&style=oil&page=99999999999999999999")
	f.Add("template_id=52&search_by=result&search=%C3%A9&sort_by=name")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := httpapi.ParseQueryString(raw)
		if err != nil {
			return
		}
		for _, res := range resources() {
			lq, err := res.ParseList(q, records.Cursors{})
			if err != nil {
				if _, ok := err.(*records.InvalidError); !ok {
					t.Fatalf("error %v", err)
				}
				continue
			}
			if lq.Page < 1 || lq.Page > records.MaxPage || lq.Offset() < 0 {
				t.Fatalf("page %d offset %d", lq.Page, lq.Offset())
			}
		}
	})
}
