package integration_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"contentapi/shared/images"
)

// The agreement test: every equivalence class of every parameter, header
// and body field goes both to the service and to the document's request
// validator. What the document allows, the service accepts, so that a
// client generated from the document never sends what the service
// refuses; what the service refuses, the document refuses. The service
// also takes spellings the document does not type (white space around a
// value, "9" for 9, 0 and 1 for a flag, an empty field for none): such a
// case is tolerated, and the document's description of the value says
// so. Each case also says what the service must do, so that the two
// cannot agree on a mistake.

// outcome is what a case expects of the service, and of the document.
type outcome int

const (
	accepted  outcome = iota + 1 // by both
	refused                      // by both
	tolerated                    // by the service; the document types it otherwise
)

// exception marks a case where the service and the document may not
// agree, and says why. Once they do, the test fails, so that the
// exception is removed with what it excused.
type exception string

const (
	// unstatable: a rule of the service no schema can state; the
	// document says it in prose.
	repeated   exception = "a field or parameter sent twice: OpenAPI reads the first"
	notUTF8    exception = "bytes that are not UTF-8: JSON Schema describes Unicode text"
	padded     exception = "text padded past its maximum: maxLength counts the text as sent, the service after trimming"
	fileKind   exception = "a multipart file where text is due: the form's schema sees its content"
	dupKey     exception = "a JSON key sent twice: JSON decoders keep one"
	madeCursor exception = "a cursor the service did not make for this query: its shape is all a schema sees"
	// lenient: the validator's parser reads more than the typed value's
	// serialization (strconv reads "+1" and "01" as 1, "t" as true,
	// "5e-1" as 0.5); no client generated from the document sends those,
	// and the service refuses them as the descriptions say.
	lenient exception = "a spelling no serializer writes, which the validator's parser reads as the typed value"
	// planned: the document is ahead of the service (none today).
)

// agreementCase is one request and what the service does with it today;
// for a planned exception, the document already says what it will do.
type agreementCase struct {
	name   string
	rq     request
	want   outcome
	except exception
}

func (e exception) planned() bool { return strings.HasPrefix(string(e), "planned:") }

// valueClass is one class of values of a body field: its text (as a form
// or multipart sends it; "" with noText for JSON-only classes), its JSON
// form, and what the service does with it when the field is given.
type valueClass struct {
	name   string
	text   string
	noText bool
	json   string // raw JSON; "" = the text as a JSON string
	blank  bool   // "not given": tolerated when the field is optional
	want   outcome
	except exception
	// A form's text where it differs from JSON's: a number's or a flag's
	// text is its typed value in a form, a string in JSON.
	formWant   outcome
	formExcept exception
}

// typedText is a class of a number's or a flag's text: a form sends it as
// its value (when the validator reads it: form), JSON as a string, which
// the service tolerates.
func typedText(s string, form outcome) valueClass {
	return valueClass{name: fmt.Sprintf("%q", s), text: s, want: tolerated, formWant: form}
}

func (c valueClass) jsonValue() string {
	if c.json != "" {
		return c.json
	}
	b, _ := json.Marshal(c.text)
	return string(b)
}

// White space of every kind Go's unicode.IsSpace knows, which trimming
// removes, and characters that look like it but are not.
const (
	allWhiteSpace = "\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
	notWhiteSpace = "\u180e\u200b\ufeff"
)

func textClasses(max int) []valueClass {
	return []valueClass{
		{name: "one character", text: "x", want: accepted},
		{name: "the maximum in characters", text: strings.Repeat("é", max), want: accepted},
		{name: "one past the maximum", text: strings.Repeat("a", max+1), want: refused},
		{name: "trimmed", text: "  Sunset  ", want: accepted},
		{name: "every white space around", text: allWhiteSpace + "Sunset" + allWhiteSpace, want: accepted},
		{name: "format characters around", text: notWhiteSpace + "Sunset" + notWhiteSpace, want: accepted},
		{name: "padded past the maximum", text: strings.Repeat("a", max) + "  ", want: accepted, except: padded},
		{name: "tab, CR and LF inside", text: "a\tb\r\nc", want: accepted},
		{name: "separators inside", text: "a\u00a0b\u2028c\u3000d", want: accepted},
		{name: "NUL inside", text: "a\x00b", want: refused},
		{name: "a control inside", text: "a\x01b", want: refused},
		{name: "DEL inside", text: "a\x7fb", want: refused},
		{name: "a C1 control inside", text: "a\u0085b", want: refused},
		{name: "a white-space control at the edge", text: "\vSunset\u0085", want: accepted},
		{name: "another control at the edge", text: "\x1bSunset", want: refused},
		{name: "empty", text: "", blank: true},
		{name: "white space only", text: " \t\u3000", blank: true},
		{name: "null", noText: true, json: "null", blank: true},
		{name: "a number", noText: true, json: "5", want: refused},
		{name: "a boolean", noText: true, json: "true", want: refused},
		{name: "an array", noText: true, json: `["x"]`, want: refused},
		{name: "an object", noText: true, json: `{"a":"x"}`, want: refused},
	}
}

func enumClasses(members []string) []valueClass {
	var out []valueClass
	for _, m := range members {
		out = append(out, valueClass{name: m, text: m, want: accepted})
	}
	return append(out,
		valueClass{name: "padded", text: " " + members[0] + "\t", want: tolerated},
		valueClass{name: "another letter case", text: strings.ToUpper(members[0]), want: refused},
		valueClass{name: "unknown", text: "oil", want: refused},
		valueClass{name: "empty", text: "", blank: true},
		valueClass{name: "white space only", text: "  ", blank: true},
		valueClass{name: "null", noText: true, json: "null", blank: true},
		valueClass{name: "a number", noText: true, json: "1", want: refused},
	)
}

func favoriteClasses() []valueClass {
	var out []valueClass
	for _, s := range []string{"1", "0", "true", "false", "TRUE", "True"} {
		out = append(out, typedText(s, accepted))
	}
	for _, s := range []string{"fAlSe", " true\t", "on", "Yes", "OFF", "no"} {
		out = append(out, typedText(s, tolerated))
	}
	out = append(out, valueClass{name: `"t"`, text: "t", want: refused, formExcept: lenient})
	for _, s := range []string{"y", "2", "01", "1.0", "onn"} {
		out = append(out, valueClass{name: fmt.Sprintf("%q", s), text: s, want: refused})
	}
	for _, j := range []string{"true", "false"} {
		out = append(out, valueClass{name: "JSON " + j, noText: true, json: j, want: accepted})
	}
	for _, j := range []string{"1", "0", "1.0", "-0", "1e0"} {
		out = append(out, valueClass{name: "JSON " + j, noText: true, json: j, want: tolerated})
	}
	for _, j := range []string{"2", "0.5", "-1", `[true]`} {
		out = append(out, valueClass{name: "JSON " + j, noText: true, json: j, want: refused})
	}
	return append(out,
		valueClass{name: "empty", text: "", blank: true},
		valueClass{name: "null", noText: true, json: "null", blank: true})
}

func creativityClasses() []valueClass {
	var out []valueClass
	for _, s := range []string{"0", "0.25", ".25", "0.50", "00.750", "+1", "1.", "1.000", "-0", "+.5", "0."} {
		out = append(out, typedText(s, accepted))
	}
	out = append(out, typedText(" 0.5 ", tolerated))
	for _, s := range []string{"0.3", "1.01", ".", "-0.25", "abc", "NaN", "1,0", "+-1"} {
		out = append(out, valueClass{name: fmt.Sprintf("%q", s), text: s, want: refused})
	}
	for _, s := range []string{"5e-1", "0x1p-1"} {
		out = append(out, valueClass{name: fmt.Sprintf("%q", s), text: s, want: refused, formExcept: lenient})
	}
	for _, j := range []string{"0.5", "5e-1", "0.50", "1", "0", "-0", "7.5E-1"} {
		out = append(out, valueClass{name: "JSON " + j, noText: true, json: j, want: accepted})
	}
	for _, j := range []string{"0.3", "2", "true"} {
		out = append(out, valueClass{name: "JSON " + j, noText: true, json: j, want: refused})
	}
	return append(out,
		valueClass{name: "empty", text: "", blank: true},
		valueClass{name: "null", noText: true, json: "null", blank: true})
}

func templateIDClasses() []valueClass {
	var out []valueClass
	for _, s := range []string{"1", "9", "09", "052", "0000000000000000000001"} {
		out = append(out, typedText(s, accepted))
	}
	out = append(out, typedText(" 9 ", tolerated))
	for _, s := range []string{"0", "53", "-1", "abc", "000", "9.0", "1e1"} {
		out = append(out, valueClass{name: fmt.Sprintf("%q", s), text: s, want: refused})
	}
	for _, s := range []string{"+9"} {
		out = append(out, valueClass{name: fmt.Sprintf("%q", s), text: s, want: refused, formExcept: lenient})
	}
	for _, j := range []string{"9", "9.0", "5.2e1", "52"} {
		out = append(out, valueClass{name: "JSON " + j, noText: true, json: j, want: accepted})
	}
	for _, j := range []string{"53", "0", "9.5", "-9", "true", "1e300"} {
		out = append(out, valueClass{name: "JSON " + j, noText: true, json: j, want: refused})
	}
	return append(out,
		valueClass{name: "empty", text: "", blank: true},
		valueClass{name: "null", noText: true, json: "null", blank: true})
}

// bodyField is one field of one operation, with the other fields a body
// needs beside it.
type bodyField struct {
	method, path string
	field        string
	required     bool
	others       [][2]string // given beside the field; all text
	classes      []valueClass
}

// encode builds the request of one class in one body type.
func (f bodyField) requests(c valueClass, key string) map[string]request {
	out := map[string]request{}
	fields := append([][2]string{{f.field, c.text}}, f.others...)
	if !c.noText {
		form := url.Values{}
		for _, kv := range fields {
			form.Add(kv[0], kv[1])
		}
		body := form.Encode()
		if c.except == notUTF8 {
			body = strings.Replace(body, url.QueryEscape(c.text), "%FF", 1)
		}
		out["form"] = request{method: f.method, path: f.path, key: key, contentType: formType, body: body}
		out["multipart"] = multipartRequest(f.method, f.path, key, fields, "")
	}
	var b strings.Builder
	b.WriteString("{")
	b.WriteString(fmt.Sprintf("%q:%s", f.field, c.jsonValue()))
	for _, kv := range f.others {
		v, _ := json.Marshal(kv[1])
		if kv[1] == "true" || kv[1] == "false" {
			v = []byte(kv[1]) // a flag, as JSON types it
		}
		b.WriteString(fmt.Sprintf(",%q:%s", kv[0], v))
	}
	b.WriteString("}")
	out["JSON"] = request{method: f.method, path: f.path, key: key, contentType: "application/json", body: b.String()}
	return out
}

// multipartRequest sends fields as multipart/form-data; file names one of
// them as a file upload.
func multipartRequest(method, path, key string, fields [][2]string, file string) request {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.SetBoundary("agreement-boundary")
	for _, kv := range fields {
		if kv[0] == file {
			part, _ := w.CreateFormFile(kv[0], "value.txt")
			_, _ = part.Write([]byte(kv[1]))
			continue
		}
		_ = w.WriteField(kv[0], kv[1])
	}
	_ = w.Close()
	return request{method: method, path: path, key: key, contentType: w.FormDataContentType(), body: buf.String()}
}

func bodyCases(key string) []agreementCase {
	imageBase := [][2]string{{"name", "N"}, {"description", "D"}, {"resolution", "256x256"}}
	documentBase := [][2]string{{"name", "N"}, {"prompt", "P"}}
	without := func(base [][2]string, field string) [][2]string {
		return slices.DeleteFunc(slices.Clone(base), func(kv [2]string) bool { return kv[0] == field })
	}
	var fields []bodyField
	for _, f := range []struct {
		name string
		max  int
	}{{"name", 128}, {"description", 2048}} {
		fields = append(fields, bodyField{"POST", "/api/v1/images", f.name, true, without(imageBase, f.name), textClasses(f.max)})
	}
	fields = append(fields,
		bodyField{"POST", "/api/v1/images", "resolution", true, without(imageBase, "resolution"), enumClasses(images.Resolutions)},
		bodyField{"POST", "/api/v1/images", "style", false, imageBase, enumClasses(images.Styles)},
		bodyField{"POST", "/api/v1/images", "medium", false, imageBase, enumClasses(images.Media)},
		bodyField{"POST", "/api/v1/images", "filter", false, imageBase, enumClasses(images.Filters)},
		bodyField{"PATCH", "/api/v1/images/1", "name", false, [][2]string{{"favorite", "false"}}, textClasses(128)},
		bodyField{"PUT", "/api/v1/images/1", "favorite", false, [][2]string{{"name", "N"}}, favoriteClasses()},
		bodyField{"POST", "/api/v1/documents", "name", true, without(documentBase, "name"), textClasses(128)},
		bodyField{"POST", "/api/v1/documents", "prompt", true, without(documentBase, "prompt"), textClasses(2048)},
		bodyField{"POST", "/api/v1/documents", "creativity", false, documentBase, creativityClasses()},
		bodyField{"POST", "/api/v1/documents", "template_id", false, documentBase, templateIDClasses()},
		bodyField{"PUT", "/api/v1/documents/1", "result", false, [][2]string{{"name", "N"}}, textClasses(20480)},
		bodyField{"PATCH", "/api/v1/documents/1", "favorite", false, [][2]string{{"name", "N"}}, favoriteClasses()},
	)
	var cases []agreementCase
	for _, f := range fields {
		for _, c := range f.classes {
			for kind, rq := range f.requests(c, key) {
				if kind == "multipart" && c.except == notUTF8 {
					continue
				}
				want, except := c.want, c.except
				if kind != "JSON" {
					if c.formWant != 0 {
						want = c.formWant
					}
					if c.formExcept != "" {
						except = c.formExcept
					}
				}
				if c.blank {
					want = tolerated
					if f.required {
						want = refused
					}
				}
				cases = append(cases, agreementCase{
					name: fmt.Sprintf("%s %s %s: %s, %s", f.method, f.path, f.field, c.name, kind),
					rq:   rq, want: want, except: except,
				})
			}
		}
	}
	// A form field that is not UTF-8.
	cases = append(cases, agreementCase{name: "POST /api/v1/images name: not UTF-8, form", want: refused, except: notUTF8,
		rq: request{method: "POST", path: "/api/v1/images", key: key, contentType: formType, body: "name=%FFx&description=D&resolution=256x256"}})

	form := func(method, path, body string) request {
		return request{method: method, path: path, key: key, contentType: formType, body: body}
	}
	jsonRq := func(method, path, body string) request {
		return request{method: method, path: path, key: key, contentType: "application/json", body: body}
	}
	more := []agreementCase{
		// Fields the operation does not take.
		{"unknown field on create", form("POST", "/api/v1/images", "name=N&description=D&resolution=256x256&colour=red"), refused, ""},
		{"id on create", jsonRq("POST", "/api/v1/documents", `{"name":"N","prompt":"P","id":7}`), refused, ""},
		{"a field of create on update", form("PUT", "/api/v1/images/1", "name=N&description=D"), refused, ""},
		{"prompt on a document update", jsonRq("PATCH", "/api/v1/documents/1", `{"prompt":"P"}`), refused, ""},
		{"words on a document update", jsonRq("PATCH", "/api/v1/documents/1", `{"words":3}`), refused, ""},
		{"a field name in another letter case", jsonRq("POST", "/api/v1/images", `{"Name":"N","description":"D","resolution":"256x256"}`), refused, ""},
		{"an empty field name", form("POST", "/api/v1/images", "name=N&description=D&resolution=256x256&=x"), refused, ""},
		// An update gives at least one field.
		{"an empty update", jsonRq("PATCH", "/api/v1/images/1", `{}`), refused, ""},
		{"an update of blanks only", form("PATCH", "/api/v1/documents/1", "name=&result=+&favorite="), refused, ""},
		{"an update of nulls only", jsonRq("PUT", "/api/v1/documents/1", `{"name":null,"favorite":null}`), refused, ""},
		{"an update without a body", request{method: "PATCH", path: "/api/v1/images/1", key: key}, refused, ""},
		// Repeated fields.
		{"a form field twice", form("POST", "/api/v1/images", "name=N&name=M&description=D&resolution=256x256"), refused, repeated},
		{"a JSON key twice", jsonRq("POST", "/api/v1/images", `{"name":"N","name":"M","description":"D","resolution":"256x256"}`), refused, dupKey},
		{"a multipart file as a field", multipartRequest("POST", "/api/v1/images", key, imageBase, "description"), refused, fileKind},
		// Body types.
		{"JSON with a charset", request{method: "POST", path: "/api/v1/images", key: key, contentType: "application/json; charset=utf-8",
			body: `{"name":"N","description":"D","resolution":"256x256"}`}, accepted, ""},
		{"a media type in capitals", request{method: "POST", path: "/api/v1/images", key: key, contentType: "Application/JSON",
			body: `{"name":"N","description":"D","resolution":"256x256"}`}, accepted, ""},
		{"a form with a charset", request{method: "POST", path: "/api/v1/images", key: key, contentType: formType + "; charset=utf-8",
			body: "name=N&description=D&resolution=256x256"}, accepted, ""},
		{"a JSON array", jsonRq("POST", "/api/v1/images", `[{"name":"N","description":"D","resolution":"256x256"}]`), refused, ""},
		{"a JSON string", jsonRq("PUT", "/api/v1/images/1", `"favorite"`), refused, ""},
		{"broken JSON", jsonRq("POST", "/api/v1/documents", `{"name":"N",`), refused, ""},
		{"a JSON suffix type", request{method: "POST", path: "/api/v1/images", key: key, contentType: "application/vnd.api+json",
			body: `{"name":"N","description":"D","resolution":"256x256"}`}, refused, ""},
		{"text/plain", request{method: "POST", path: "/api/v1/images", key: key, contentType: "text/plain", body: "name=N"}, refused, ""},
		{"a body without a type", request{method: "POST", path: "/api/v1/images", key: key, body: "name=N&description=D&resolution=256x256"}, refused, ""},
		{"a create without a body", request{method: "POST", path: "/api/v1/documents", key: key}, refused, ""},
		{"multipart without a boundary", request{method: "POST", path: "/api/v1/images", key: key, contentType: "multipart/form-data", body: "x"}, refused, ""},
	}
	return append(cases, more...)
}

// queryCases: each value class of each list parameter, alone on the list.
func queryCases(key string) []agreementCase {
	type param struct {
		list, name               string
		accept, tolerate, refuse []string
		lenient                  []string // refused; see lenient
	}
	wrong := []string{"oil", "%20anime", "Anime"}
	empty := []string{""}
	params := []param{
		{"images", "search", []string{"caf%C3%A9", "", "a%09b", "%20x%20", "%E2%80%A8", "100%25"}, nil, []string{"%00", "%01", "%7F", "%C2%85"}, nil},
		{"images", "search_by", []string{"name"}, empty, []string{"result", "Name", "prompt"}, nil},
		{"documents", "search_by", []string{"name", "result"}, empty, []string{"prompt", "RESULT"}, nil},
		{"images", "resolution", images.Resolutions, empty, []string{"2048x2048", "%20256x256"}, nil},
		{"images", "style", images.Styles, empty, wrong, nil},
		{"images", "medium", images.Media, empty, wrong, nil},
		{"images", "filter", images.Filters, empty, wrong, nil},
		{"images", "favorite", []string{"true", "false", "1", "0", "TRUE", "False"}, []string{"on", "Yes", "off", "NO", ""}, []string{"y", "2", "%201", "01"}, []string{"t"}},
		{"documents", "favorite", []string{"1"}, []string{"fALSE", ""}, []string{"maybe"}, nil},
		{"images", "sort_by", []string{"id", "name"}, empty, []string{"created", "ID"}, nil},
		{"images", "sort", []string{"asc", "desc"}, []string{"ASC", "Desc", ""}, []string{"up", "%20asc"}, nil},
		{"images", "per_page", []string{"10", "25", "50", "100", "010", "0100", ""}, nil, []string{"7", "0", "+10", "-10", "%2010", "1000", "10.0", "1e1"}, []string{"%2B10"}},
		{"images", "page", []string{"1", "2", "01", "1000000000000", "0001000000000000", ""}, nil, []string{"0", "1000000000001", "-1", "abc", "99999999999999999999", "1.0"}, []string{"%2B1"}},
		{"documents", "template_id", []string{"1", "9", "09", "52", "000052", "all"}, empty, []string{"0", "53", "%209", "000", "9.0", "ALL", "%20all", "alll"}, []string{"%2B1"}},
		{"documents", "page", []string{"3"}, nil, []string{"x"}, nil},
		{"images", "unknown", []string{"anything", ""}, nil, nil, nil},
	}
	var cases []agreementCase
	for _, p := range params {
		for i, values := range [][]string{p.accept, p.tolerate, p.refuse, p.lenient} {
			want := []outcome{accepted, tolerated, refused, refused}[i]
			var except exception
			if i == 3 {
				except = lenient
			}
			for _, v := range values {
				cases = append(cases, agreementCase{
					name: fmt.Sprintf("GET /api/v1/%s?%s=%s", p.list, p.name, v),
					rq:   request{method: "GET", path: "/api/v1/" + p.list + "?" + p.name + "=" + v, key: key},
					want: want, except: except,
				})
			}
		}
	}
	get := func(path string) request { return request{method: "GET", path: path, key: key} }
	return append(cases,
		agreementCase{"every parameter at once", get("/api/v1/images?search=a&search_by=name&resolution=512x512&style=anime&medium=ink&filter=sepia&favorite=1&sort_by=name&sort=asc&per_page=25&page=2"), accepted, ""},
		agreementCase{"a parameter twice", get("/api/v1/images?per_page=10&per_page=10"), refused, repeated},
		agreementCase{"a good parameter, then a bad one", get("/api/v1/images?style=anime&style=oil"), refused, repeated},
		agreementCase{"search not UTF-8", get("/api/v1/documents?search=%FF"), refused, notUTF8},
		agreementCase{"a cursor", get("/api/v1/images?cursor=eyJrIjoiOTk5In0"), refused, madeCursor},
		agreementCase{"a cursor of other characters", get("/api/v1/images?cursor=a.b"), refused, ""},
	)
}

// pathAndHeaderCases: record ids, Idempotency-Key, Prefer and the key.
func pathAndHeaderCases(key string) []agreementCase {
	var cases []agreementCase
	for id, want := range map[string]outcome{"1": accepted, "0": refused, "-1": refused, "1.0": refused, "1e0": refused,
		"abc": refused, "1000000000000": refused, "%201": refused} {
		for _, path := range []string{"/api/v1/images/", "/api/v1/documents/"} {
			cases = append(cases, agreementCase{name: "GET " + path + id, rq: request{method: "GET", path: path + id, key: key}, want: want})
		}
	}
	// An id written otherwise is 404, as the parameter's description says.
	for _, id := range []string{"01", "+1"} {
		for _, path := range []string{"/api/v1/images/", "/api/v1/documents/"} {
			cases = append(cases, agreementCase{name: "GET " + path + id, rq: request{method: "GET", path: path + id, key: key}, want: refused, except: lenient})
		}
	}
	create := func(name string, header map[string]string) request {
		return request{method: "POST", path: "/api/v1/images", key: key, contentType: formType,
			body: "name=" + url.QueryEscape(name) + "&description=D&resolution=256x256", header: header}
	}
	keys := map[string]outcome{"k": accepted, "": accepted, "   ": accepted, "order-4711_!~": accepted, strings.Repeat("k", 255): accepted,
		strings.Repeat("k", 256): refused, "with space": refused, "tab\there": refused, "caf\u00e9": refused}
	i := 0
	for k, want := range keys {
		i++
		// A name of its own per key, so that no case replays another.
		rq := create(fmt.Sprintf("idempotent %d", i), map[string]string{"Idempotency-Key": k})
		cases = append(cases, agreementCase{name: fmt.Sprintf("POST with Idempotency-Key %.20q", k), rq: rq, want: want})
	}
	update := func(header map[string]string) request {
		return request{method: "PATCH", path: "/api/v1/documents/1", key: key, contentType: formType, body: "favorite=1", header: header}
	}
	for _, p := range []string{"respond-async", "wait=5", "wait=99", "respond-async, wait=10", "handling=lenient", ""} {
		cases = append(cases, agreementCase{name: "POST with Prefer " + p, rq: create("prefer "+p, map[string]string{"Prefer": p}), want: accepted})
	}
	return append(cases,
		agreementCase{"PATCH with an Idempotency-Key", update(map[string]string{"Idempotency-Key": "u-1"}), accepted, ""},
		agreementCase{"PATCH with an invalid Idempotency-Key", update(map[string]string{"Idempotency-Key": "u 2"}), refused, ""},
		agreementCase{"DELETE with an invalid Idempotency-Key", request{method: "DELETE", path: "/api/v1/images/3", key: key,
			header: map[string]string{"Idempotency-Key": "d 1"}}, refused, ""},
		agreementCase{"PATCH with If-Match *", update(map[string]string{"If-Match": "*"}), accepted, ""},
		agreementCase{"GET with If-None-Match of another tag", request{method: "GET", path: "/api/v1/images/1", key: key,
			header: map[string]string{"If-None-Match": `"0.0"`}}, accepted, ""},
		agreementCase{"no key", request{method: "GET", path: "/api/v1/images"}, refused, ""},
		agreementCase{"a Basic key", request{method: "GET", path: "/api/v1/images", header: map[string]string{"Authorization": "Basic " + key}}, refused, ""},
		agreementCase{"the document without a key", request{method: "GET", path: "/api/v1/openapi.json"}, accepted, ""},
	)
}

// TestOpenAPIRequestsAgree runs every case against a fresh stack.
func TestOpenAPIRequestsAgree(t *testing.T) {
	s := newStack(t)
	v := contractValidator(t)
	createImage(t, s, "one")
	createImage(t, s, "two")
	createImage(t, s, "three")
	createDocument(t, s, "one")

	var cases []agreementCase
	cases = append(cases, bodyCases(s.writeKey)...)
	cases = append(cases, queryCases(s.writeKey)...)
	cases = append(cases, pathAndHeaderCases(s.writeKey)...)
	slices.SortStableFunc(cases, func(a, b agreementCase) int { return strings.Compare(a.name, b.name) })
	excepted := 0
	for _, c := range cases {
		r := s.do(c.rq)
		var service outcome
		switch {
		case r.Status < 300 || r.Status == http.StatusNotModified:
			service = accepted
			if c.want == tolerated {
				service = tolerated
			}
		case slices.Contains([]int{400, 401, 404, 415, 422}, r.Status):
			service = refused
		default:
			t.Errorf("%s: the service answered %d: %.200s", c.name, r.Status, r.Raw)
			continue
		}
		docErr := v.ValidateRequest(c.rq.method, c.rq.path, requestHeader(c.rq), []byte(c.rq.body))
		document := accepted
		if docErr != nil {
			document = refused
			if service == tolerated {
				document = tolerated
			}
		}
		if service != c.want {
			if c.except.planned() && document == service {
				t.Errorf("%s: the service does what the document plans now; drop the exception %q", c.name, c.except)
			} else {
				t.Errorf("%s: the service %s it (%d: %.200s)", c.name, verb(service), r.Status, r.Raw)
			}
			continue
		}
		switch {
		case c.except == "" && document != service:
			t.Errorf("%s: the service %s it, the document %s it: %v", c.name, verb(service), verb(document), docErr)
		case c.except != "" && document == service:
			t.Errorf("%s: the service and the document agree now; drop the exception %q", c.name, c.except)
		case c.except != "":
			excepted++
		}
	}
	t.Logf("%d cases; %d where the two part, as excepted", len(cases), excepted)
}

func verb(o outcome) string {
	switch o {
	case accepted:
		return "accepts"
	case tolerated:
		return "tolerates (takes it, typed otherwise)"
	}
	return "refuses"
}
