package records_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"contentapi/shared/images"
	"contentapi/shared/records"
)

// A hostile body is refused with a report of bounded size: a bounded
// number of fields, each once with each message once, names cut short.
func TestInvalidReportIsBounded(t *testing.T) {
	many := records.Input{}
	for i := range 100_000 {
		many.Add("f"+strings.Repeat("x", i%50)+string(rune('a'+i%26)), records.InputValue{Text: "v"})
	}
	repeated := records.Input{}
	for range (1 << 20) / 3 { // a=&a=&... up to 1 MiB
		repeated.Add("a", records.InputValue{})
	}
	long := records.Input{}
	long.Add(strings.Repeat("n", 1<<20), records.InputValue{Text: "v"})
	hostile := records.Input{}
	hostile.Add("\x00\x01\"\\"+strings.Repeat("\xff", 100), records.InputValue{Text: "v"})

	testCases := []struct {
		name  string
		in    records.Input
		check func(t *testing.T, fields map[string][]string)
	}{
		{"100,000 unknown fields", many, func(t *testing.T, fields map[string][]string) {
			if len(fields) != records.MaxInvalidFields {
				t.Errorf("%d fields reported, want %d", len(fields), records.MaxInvalidFields)
			}
		}},
		{"one field repeated over 1 MiB", repeated, func(t *testing.T, fields map[string][]string) {
			if got := fields["a"]; len(got) != 2 || got[0] == got[1] {
				t.Errorf("a: %q, want once repeated and once prohibited", got)
			}
		}},
		{"a field named with 1 MiB", long, func(t *testing.T, fields map[string][]string) {
			want := strings.Repeat("n", records.MaxFieldNameRunes) + "…"
			if msgs := fields[want]; len(msgs) != 1 || msgs[0] != "The "+want+" field is prohibited." {
				t.Errorf("fields %v, want %q cut short in its key and message", fields, want)
			}
		}},
		{"control characters and invalid UTF-8 in a name", hostile, func(t *testing.T, fields map[string][]string) {
			for name := range fields {
				if strings.ContainsAny(name, "\x00\x01") || !utf8.ValidString(name) {
					t.Errorf("reported name %q", name)
				}
			}
		}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := images.Resource.ValidateCreate(tc.in)
			e, ok := err.(*records.InvalidError)
			if !ok {
				t.Fatalf("error %v, want an InvalidError", err)
			}
			size := 0
			for name, msgs := range e.Fields {
				if utf8.RuneCountInString(name) > records.MaxFieldNameRunes+1 {
					t.Errorf("name %q is not cut short", name)
				}
				size += len(name)
				for _, m := range msgs {
					size += len(m)
				}
			}
			if size > 4<<10 {
				t.Errorf("the report holds %d bytes", size)
			}
			tc.check(t, e.Fields)
		})
	}
}

// A body of rows is refused with each bad row's fields under its number,
// the first rows' first and no more than an records.InvalidError's bound; a
// failure that is not the rows' fault is passed on as it is.
func TestInvalidRowsNamesRowAndField(t *testing.T) {
	bad := func(fields ...string) error {
		e := &records.InvalidError{Fields: map[string][]string{}}
		for _, f := range fields {
			e.Fields[f] = []string{"The " + f + " field is invalid."}
		}
		return e
	}
	if err := records.InvalidRows([]error{nil, nil}); err != nil {
		t.Errorf("valid rows: %v", err)
	}
	err := records.InvalidRows([]error{nil, bad("title"), nil, bad("tone", "length")})
	var invalid *records.InvalidError
	if !errors.As(err, &invalid) || len(invalid.Fields) != 3 ||
		invalid.Fields["rows.2.title"][0] != "The title field is invalid." || invalid.Fields["rows.4.tone"] == nil || invalid.Fields["rows.4.length"] == nil {
		t.Fatalf("%v: %+v", err, invalid)
	}
	many := make([]error, 40)
	for i := range many {
		many[i] = bad("title")
	}
	if !errors.As(records.InvalidRows(many), &invalid) || len(invalid.Fields) != records.MaxInvalidFields || invalid.Fields["rows.1.title"] == nil || invalid.Fields["rows.10.title"] == nil {
		t.Errorf("40 bad rows reported as %v", invalid.Fields)
	}
	if err := records.InvalidRows([]error{bad("title"), records.ErrUnavailable}); !errors.Is(err, records.ErrUnavailable) {
		t.Errorf("storage unavailable while judging: %v", err)
	}
}
