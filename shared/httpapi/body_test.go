package httpapi

import (
	"bytes"
	"encoding/base64"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"contentapi/shared/records"
)

func request(contentType, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/images", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

func status(err error) int {
	if e, ok := err.(*Error); ok {
		return e.Status
	}
	return 0
}

func TestParseBodyTypes(t *testing.T) {
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	_ = mw.WriteField("name", "Caf\u00e9")
	_ = mw.WriteField("favorite", "1")
	_ = mw.Close()

	tests := []struct {
		name, contentType, body string
		want                    map[string]records.InputValue
	}{
		{"form", "application/x-www-form-urlencoded", "name=Caf%C3%A9+au+lait&favorite=1",
			map[string]records.InputValue{"name": {Text: "Café au lait"}, "favorite": {Text: "1"}}},
		{"form with charset", "application/x-www-form-urlencoded; charset=UTF-8", "name=a",
			map[string]records.InputValue{"name": {Text: "a"}}},
		{"json", "application/json", `{"name":"x","creativity":0.5,"favorite":true,"style":null,"tags":[1],"events":["a","b"]}`,
			map[string]records.InputValue{"name": {Text: "x"}, "creativity": {Text: "0.5", Type: records.InputNumber},
				"favorite": {Text: "true", Type: records.InputBool}, "style": {Type: records.InputNull}, "tags": {Type: records.InputOther},
				"events": {Type: records.InputList, Items: []string{"a", "b"}}}},
		{"multipart", mw.FormDataContentType(), mp.String(),
			map[string]records.InputValue{"name": {Text: "Café"}, "favorite": {Text: "1"}}},
		{"empty without type", "", "", map[string]records.InputValue{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := ParseBody(request(tt.contentType, tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(in.Values) != len(tt.want) {
				t.Fatalf("got %v, want %v", in.Values, tt.want)
			}
			for k, v := range tt.want {
				if !reflect.DeepEqual(in.Values[k], v) {
					t.Errorf("%s = %+v, want %+v", k, in.Values[k], v)
				}
			}
		})
	}
}

func TestParseBodyRefuses(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		status                  int
	}{
		{"broken json", "application/json", `{"name":`, 400},
		{"json array", "application/json", `[{"name":"x"}]`, 400},
		{"json string", "application/json", `"x"`, 400},
		{"json trailing data", "application/json", `{"name":"x"} {}`, 400},
		{"text/plain", "text/plain", "name=x", 415},
		{"xml", "application/xml", "<a/>", 415},
		{"garbage type", "???", "name=x", 415},
		{"body without type", "", "name=x", 415},
		{"bad form escape", "application/x-www-form-urlencoded", "name=%zz", 400},
		{"multipart without boundary", "multipart/form-data", "x", 400},
		{"too large", "application/x-www-form-urlencoded", "name=" + strings.Repeat("a", MaxBodyBytes), 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseBody(request(tt.contentType, tt.body))
			if status(err) != tt.status {
				t.Fatalf("got %v, want %d", err, tt.status)
			}
		})
	}
}

func TestParseBodyRepeated(t *testing.T) {
	for _, tt := range []struct{ contentType, body string }{
		{"application/x-www-form-urlencoded", "name=a&name=b"},
		{"application/json", `{"name":"a","name":"b"}`},
	} {
		in, err := ParseBody(request(tt.contentType, tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if len(in.Repeated) != 1 || in.Repeated[0] != "name" || in.Values["name"].Text != "a" {
			t.Errorf("%s: repeated %v values %v", tt.contentType, in.Repeated, in.Values)
		}
	}
}

func TestParseBodyUndecodable(t *testing.T) {
	r := request("application/x-www-form-urlencoded", base64.StdEncoding.EncodeToString([]byte("name=x")))
	r = r.WithContext(WithUndecodableBody(r.Context()))
	if _, err := ParseBody(r); status(err) != 400 {
		t.Fatalf("want 400, got %v", err)
	}
}

func TestQueryWithPage(t *testing.T) {
	tests := []struct {
		raw  string
		page int64
		want string
	}{
		{"", 2, "page=2"},
		{"search=caf%C3%A9&per_page=25", 3, "search=caf%C3%A9&per_page=25&page=3"},
		{"page=9&sort=asc", 1, "page=1&sort=asc"},
		{"a=1&page=2&page=3", 4, "a=1&page=4"},
		{"q=a+b%26c", 1, "q=a+b%26c&page=1"},
	}
	for _, tt := range tests {
		q, err := ParseQueryString(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := QueryWithPage(q, tt.page); got != tt.want {
			t.Errorf("%q QueryWithPage(%d) = %q, want %q", tt.raw, tt.page, got, tt.want)
		}
	}
	q, _ := ParseQueryString("a=1&a=2&b=")
	if v, given, repeated := q.Get("a"); !given || !repeated || v != "1" {
		t.Errorf("Get(a) = %q %v %v", v, given, repeated)
	}
	if v, given, repeated := q.Get("b"); !given || repeated || v != "" {
		t.Errorf("Get(b) = %q %v %v", v, given, repeated)
	}
	if _, err := ParseQueryString("a=%"); status(err) != 400 {
		t.Errorf("bad escape: %v", err)
	}
}

// A JSON string with invalid UTF-8 keeps its bytes for the field's rules to
// refuse, where encoding/json would make it U+FFFD; the valid fields of
// the same body decode as usual.
func TestParseBodyJSONKeepsInvalidUTF8(t *testing.T) {
	in, err := ParseBody(request("application/json", "{\"name\":\"caf\xe9\",\"n\":1.5,\"ok\":\"s\\u00e9\"}"))
	if err != nil {
		t.Fatal(err)
	}
	if v := in.Values["name"].Text; utf8.ValidString(v) || strings.Contains(v, "\uFFFD") {
		t.Errorf("name = %q: the invalid byte must stay invalid", v)
	}
	if n, ok := in.Values["n"], in.Values["ok"]; n.Type != records.InputNumber || n.Text != "1.5" || ok.Text != "sé" {
		t.Errorf("the other fields: %+v %+v", n, ok)
	}
}

// A lone surrogate escape is a string no Unicode text can be: the value
// keeps it as invalid UTF-8, for the field's rules to refuse, where
// encoding/json would make it U+FFFD. A pair, an escaped backslash before
// "u" and the other fields decode as usual.
func TestParseBodyJSONKeepsLoneSurrogates(t *testing.T) {
	testCases := []struct {
		value string // a JSON string, as sent
		valid bool
	}{
		{`"\ud800"`, false},
		{`"a\uDBFFb"`, false},
		{`"\udc00"`, false},
		{`"\ude00\ud83d"`, false},   // a pair the wrong way round
		{`"\ud83d\u0041"`, false},   // a high one, then no low one
		{`"\ud83d\\ude00"`, false},  // the low one's backslash escaped: not an escape
		{`"x\ud83d"`, false},        // a high one at the end
		{`"\ud83d\ude00"`, true},    // 😀
		{`"\\ud800"`, true},         // a backslash, then the text ud800
		{`"caf\u00e9 \" \\"`, true}, // other escapes
	}
	for _, tc := range testCases {
		t.Run(tc.value, func(t *testing.T) {
			in, err := ParseBody(request("application/json", `{"name":`+tc.value+`,"n":1.5}`))
			if err != nil {
				t.Fatal(err)
			}
			v := in.Values["name"]
			if v.Type != records.InputString || utf8.ValidString(v.Text) != tc.valid || strings.Contains(v.Text, "\uFFFD") {
				t.Errorf("name = %q (%v): want valid UTF-8 %v, never U+FFFD", v.Text, v.Type, tc.valid)
			}
			if n := in.Values["n"]; n.Type != records.InputNumber || n.Text != "1.5" {
				t.Errorf("the other field: %+v", n)
			}
		})
	}
}
