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
	if undecodable, _ := r.Context().Value(bodyUndecodableKey{}).(bool); undecodable {
		return records.Input{}, BadRequest("The request body is not valid base64.")
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return records.Input{}, TooLarge()
		}
		return records.Input{}, BadRequest("The request body could not be read.")
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
	// encoding/json turns invalid UTF-8 in a string into U+FFFD, which
	// would be stored as if sent; such a body's values are read raw, and
	// one holding invalid UTF-8 keeps it, for the field's rules to refuse
	// (422). Valid bodies, nearly all, are decoded once.
	rawValues := !utf8.Valid(raw)
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
