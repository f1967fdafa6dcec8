package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"contentapi/shared/records"
)

// MaxBodyBytes is the largest request body accepted (413 above it).
const MaxBodyBytes = 1 << 20

type bodyUndecodableKey struct{}

// WithUndecodableBody marks a request whose body could not be decoded
// before it reached the handler (bad base64 in the proxy event), so that
// ParseBody answers 400 instead of the adapter failing the invocation.
func WithUndecodableBody(ctx context.Context) context.Context {
	return context.WithValue(ctx, bodyUndecodableKey{}, true)
}

// ParseBody reads a form, multipart or JSON body. An empty body with no
// Content-Type is an empty input; a body of any other type is 415.
func ParseBody(r *http.Request) (records.Input, error) {
	raw, err := readBody(r)
	if err != nil {
		return records.Input{}, err
	}
	header := r.Header.Get("Content-Type")
	if header == "" {
		if len(bytes.TrimSpace(raw)) == 0 {
			return records.Input{}, nil
		}
		return records.Input{}, UnsupportedMediaType()
	}
	mediaType, params, err := mime.ParseMediaType(header)
	if err != nil {
		return records.Input{}, UnsupportedMediaType()
	}
	switch {
	case mediaType == "application/x-www-form-urlencoded":
		return parseForm(raw)
	case mediaType == "application/json":
		return parseJSON(raw)
	case mediaType == "multipart/form-data":
		return parseMultipart(raw, params["boundary"])
	}
	return records.Input{}, UnsupportedMediaType()
}

// readBody is the request's body, at most MaxBodyBytes (413 beyond), or
// the 400 of one that could not be read or decoded.
func readBody(r *http.Request) ([]byte, error) {
	if undecodable, _ := r.Context().Value(bodyUndecodableKey{}).(bool); undecodable {
		return nil, BadRequest("The request body is not valid base64.")
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, TooLarge()
		}
		return nil, BadRequest("The request body could not be read.")
	}
	return raw, nil
}

func parseForm(raw []byte) (records.Input, error) {
	var in records.Input
	pairs, err := splitQuery(string(raw))
	if err != nil {
		return records.Input{}, BadRequest("The request body is not a valid form.")
	}
	for _, p := range pairs {
		in.Add(p.Name, records.InputValue{Text: p.Value, Type: records.InputString})
	}
	return in, nil
}

func parseJSON(raw []byte) (records.Input, error) {
	bad := BadRequest("The request body must be a JSON object.")
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return records.Input{}, bad
	}
	// encoding/json turns invalid UTF-8 in a string into U+FFFD, and so a
	// lone surrogate escape ("\ud800", which no UTF-8 can hold), either
	// of which would be stored as if sent; such a body's values are read
	// raw, and one holding either keeps it as invalid UTF-8, for the
	// field's rules to refuse (422 naming the field). Valid bodies, nearly
	// all, are decoded once.
	rawValues := !utf8.Valid(raw) || len(loneSurrogates(raw)) > 0
	var in records.Input
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return records.Input{}, bad
		}
		name, _ := tok.(string)
		var v any
		if rawValues {
			var rv json.RawMessage
			if err := dec.Decode(&rv); err != nil {
				return records.Input{}, bad
			}
			if !utf8.Valid(rv) {
				in.Add(name, records.InputValue{Text: string(rv), Type: records.InputString})
				continue
			}
			if lone := loneSurrogates(rv); len(lone) > 0 && rv[0] == '"' {
				in.Add(name, records.InputValue{Text: string(surrogatesAsBytes(rv, lone)), Type: records.InputString})
				continue
			}
			d := json.NewDecoder(bytes.NewReader(rv))
			d.UseNumber()
			err = d.Decode(&v)
		} else {
			err = dec.Decode(&v)
		}
		if err != nil {
			return records.Input{}, bad
		}
		in.Add(name, jsonValue(v))
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return records.Input{}, bad
	}
	if _, err := dec.Token(); err != io.EOF {
		return records.Input{}, bad
	}
	return in, nil
}

// loneSurrogates are the offsets in a JSON text of its \u escapes of a
// UTF-16 surrogate that is not half of a pair (a high one followed at
// once by the escape of a low one): a string no Unicode text can be.
// The check reads the bytes as the client sent them, before any decoder
// does, so it holds whichever decoder reads them after it.
func loneSurrogates(raw []byte) []int {
	var lone []int
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		cp, ok := escapedUnit(raw, i)
		if !ok {
			i++ // an escape of one character, such as \\ or \"
			continue
		}
		switch {
		case cp >= 0xD800 && cp < 0xDC00:
			if low, ok := escapedUnit(raw, i+6); ok && low >= 0xDC00 && low < 0xE000 {
				i += 11 // the pair
				continue
			}
			lone = append(lone, i)
		case cp >= 0xDC00 && cp < 0xE000:
			lone = append(lone, i)
		}
		i += 5
	}
	return lone
}

// escapedUnit reads the \uXXXX escape at raw[i:], if there is one.
func escapedUnit(raw []byte, i int) (rune, bool) {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return 0, false
	}
	var cp rune
	for _, c := range raw[i+2 : i+6] {
		switch {
		case c >= '0' && c <= '9':
			cp = cp<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			cp = cp<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			cp = cp<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return cp, true
}

// surrogatesAsBytes is a raw JSON value with each lone surrogate escape
// (at the offsets loneSurrogates found) written as the three bytes UTF-8
// would give the code point, which no valid UTF-8 holds: what the client
// sent, kept for the field's rules to refuse.
func surrogatesAsBytes(rv []byte, lone []int) []byte {
	out := make([]byte, 0, len(rv))
	last := 0
	for _, i := range lone {
		cp, _ := escapedUnit(rv, i)
		out = append(out, rv[last:i]...)
		out = append(out, 0xE0|byte(cp>>12), 0x80|byte(cp>>6)&0x3F, 0x80|byte(cp)&0x3F)
		last = i + 6
	}
	return append(out, rv[last:]...)
}

func jsonValue(v any) records.InputValue {
	switch t := v.(type) {
	case string:
		return records.InputValue{Text: t, Type: records.InputString}
	case json.Number:
		return records.InputValue{Text: t.String(), Type: records.InputNumber}
	case bool:
		if t {
			return records.InputValue{Text: "true", Type: records.InputBool}
		}
		return records.InputValue{Text: "false", Type: records.InputBool}
	case nil:
		return records.InputValue{Type: records.InputNull}
	case []any:
		items := make([]string, len(t))
		for i, e := range t {
			s, ok := e.(string)
			if !ok {
				return records.InputValue{Type: records.InputOther}
			}
			items[i] = s
		}
		return records.InputValue{Type: records.InputList, Items: items}
	}
	return records.InputValue{Type: records.InputOther}
}

func parseMultipart(raw []byte, boundary string) (records.Input, error) {
	if boundary == "" {
		return records.Input{}, BadRequest("The multipart body has no boundary.")
	}
	var in records.Input
	mr := multipart.NewReader(bytes.NewReader(raw), boundary)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return in, nil
		}
		if err != nil {
			return records.Input{}, BadRequest("The request body is not valid multipart/form-data.")
		}
		value, err := io.ReadAll(part)
		if err != nil {
			return records.Input{}, BadRequest("The request body is not valid multipart/form-data.")
		}
		typ := records.InputString
		if part.FileName() != "" {
			// Files are not a value any field takes.
			typ = records.InputOther
		}
		in.Add(part.FormName(), records.InputValue{Text: string(value), Type: typ})
	}
}

// splitQuery decodes a query string or form body keeping order and repeats,
// which url.ParseQuery's map would lose.
func splitQuery(s string) (records.Query, error) {
	var pairs records.Query
	for s != "" {
		var part string
		part, s, _ = strings.Cut(s, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return nil, err
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, records.QueryParam{Name: name, Value: value})
	}
	return pairs, nil
}
