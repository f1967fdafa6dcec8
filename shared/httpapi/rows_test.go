package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"contentapi/shared/records"
)

// rowFields is each row's fields as name=value, in the order they came.
func rowFields(rows []records.Input) []string {
	var out []string
	for _, r := range rows {
		var fields []string
		for _, name := range r.Names {
			fields = append(fields, name+"="+r.Values[name].Text)
		}
		out = append(out, strings.Join(fields, "&"))
	}
	return out
}

// The same rows come as a JSON array, JSON Lines (under each of its media
// types) or CSV with a header, each row a create's fields; a CSV's empty
// cell is a field not given, and its values are strings, as a form's.
func TestParseRowsReadsEachFormat(t *testing.T) {
	want := []string{"title=Espresso machine&template_id=3", "title=Grinder, \"burr\"&template_id=3"}
	for _, c := range []struct{ contentType, body string }{
		{"application/json", `[{"title":"Espresso machine","template_id":3},{"title":"Grinder, \"burr\"","template_id":3}]`},
		{"application/json; charset=utf-8", " [ {\"title\":\"Espresso machine\",\"template_id\":3} ,\n{\"title\":\"Grinder, \\\"burr\\\"\",\"template_id\":3} ]\n"},
		{"application/jsonl", "{\"title\":\"Espresso machine\",\"template_id\":3}\n{\"title\":\"Grinder, \\\"burr\\\"\",\"template_id\":3}\n"},
		{"application/x-ndjson", "{\"title\":\"Espresso machine\",\"template_id\":3}\r\n{\"title\":\"Grinder, \\\"burr\\\"\",\"template_id\":3}"},
		{"text/csv", "title,template_id,tone\r\nEspresso machine,3,\n\"Grinder, \"\"burr\"\"\",3,\n"},
		{"text/csv; header=present", "\uFEFFtitle, template_id\nEspresso machine,3\n\"Grinder, \"\"burr\"\"\",3"},
	} {
		rows, err := ParseRows(request(c.contentType, c.body))
		if err != nil {
			t.Errorf("%s %q: %v", c.contentType, c.body, err)
			continue
		}
		if got := rowFields(rows); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s %q: rows %q, want %q", c.contentType, c.body, got, want)
		}
		if c.contentType == "application/json" && rows[0].Values["template_id"].Type != records.InputNumber {
			t.Errorf("a JSON number reads as %v", rows[0].Values["template_id"].Type)
		}
	}
}

// A body is taken whole or refused: a row that does not parse is 400
// naming its number, counted from 1 (a CSV's header and a JSON Lines
// body's lines as they are numbered); another type is 415, a body over
// 1 MiB 413.
func TestParseRowsRefusesNamingTheRow(t *testing.T) {
	for _, c := range []struct {
		contentType, body string
		status            int
		says              string
	}{
		{"application/json", `[{"title":"a"},"b"]`, 400, "Row 2 must be a JSON object"},
		{"application/json", `[{"title":"a"},{"title":"b"},[1]]`, 400, "Row 3 must be a JSON object"},
		{"application/json", `{"title":"a"}`, 400, "JSON array"},
		{"application/json", `[{"title":"a"}] [{}]`, 400, "JSON array"},
		{"application/json", `[{"title":"a"},{"title":}]`, 400, "Row 2 is not valid JSON"},
		{"application/jsonl", "{\"title\":\"a\"}\n\n{\"title\":\"c\"}\n", 400, "Row 2 is blank"},
		{"application/jsonl", "{\"title\":\"a\"}\n{\"title\":\"b\",\n\"x\":1}\n", 400, "Row 2 must be a JSON object on one line"},
		{"text/csv", "title,title\na,b\n", 400, "name each field once"},
		{"text/csv", "title,tone\na,formal\nb\n", 400, "Row 2 must have 2 cells"},
		{"text/csv", "title\n\"a\n", 400, "Row 1 is not valid CSV"},
		{"text/csv", "", 400, "header row"},
		{"text/plain", "title\na\n", 415, "text/csv"},
		{"", "[]", 415, "application/json"},
		{"application/jsonl", strings.Repeat("{\"title\":\"a\"}\n", MaxBodyBytes/14+1), 413, "1 MiB"},
	} {
		_, err := ParseRows(request(c.contentType, c.body))
		e, ok := err.(*Error)
		if !ok || e.Status != c.status || !strings.Contains(e.Message, c.says) {
			t.Errorf("%s %.40q: %v, want %d saying %q", c.contentType, c.body, err, c.status, c.says)
		}
	}
	r := request("application/json", "[]").WithContext(WithUndecodableBody(context.Background()))
	if _, err := ParseRows(r); status(err) != http.StatusBadRequest {
		t.Errorf("an undecodable body: %v", err)
	}
	if rows, err := ParseRows(request("application/jsonl", "")); err != nil || len(rows) != 0 {
		t.Errorf("an empty JSON Lines body: %v, %v; want no rows", rows, err)
	}
}
