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
)

// MaxBodyBytes is the largest request body accepted (413 above it).
const MaxBodyBytes = 1 << 20

// Kind tells what JSON type a body value had; form values are all strings.
type Kind int

const (
	KindString Kind = iota
	KindNumber
	KindBool
	KindNull
	// KindOther is an array or object: never a valid field value.
	KindOther
)

// Value is one field of a request body. Text is the string, the number as
// written, or "true"/"false".
type Value struct {
	Text string
	Kind Kind
}

// Input is a parsed request body: fields in the order they came.
type Input struct {
	Names  []string
	Values map[string]Value
	// Repeated lists fields sent more than once; such input is refused
	// rather than silently picking one.
	Repeated []string
}

func (in *Input) add(name string, v Value) {
	if in.Values == nil {
		in.Values = map[string]Value{}
	}
	if _, dup := in.Values[name]; dup {
		in.Repeated = append(in.Repeated, name)
		return
	}
	in.Names = append(in.Names, name)
	in.Values[name] = v
}

type bodyUndecodableKey struct{}

// WithUndecodableBody marks a request whose body could not be decoded
// before it reached the handler (bad base64 in the proxy event), so that
// ParseBody answers 400 instead of the adapter failing the invocation.
func WithUndecodableBody(ctx context.Context) context.Context {
	return context.WithValue(ctx, bodyUndecodableKey{}, true)
}

// ParseBody reads a form, multipart or JSON body. An empty body with no
// Content-Type is an empty input; a body of any other type is 415.
func ParseBody(r *http.Request) (Input, error) {
	if undecodable, _ := r.Context().Value(bodyUndecodableKey{}).(bool); undecodable {
		return Input{}, BadRequest("The request body is not valid base64.")
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return Input{}, TooLarge()
		}
		return Input{}, BadRequest("The request body could not be read.")
	}
	header := r.Header.Get("Content-Type")
	if header == "" {
		if len(bytes.TrimSpace(raw)) == 0 {
			return Input{}, nil
		}
		return Input{}, UnsupportedMediaType()
	}
	mediaType, params, err := mime.ParseMediaType(header)
	if err != nil {
		return Input{}, UnsupportedMediaType()
	}
	switch {
	case mediaType == "application/x-www-form-urlencoded":
		return parseForm(raw)
	case mediaType == "application/json":
		return parseJSON(raw)
	case mediaType == "multipart/form-data":
		return parseMultipart(raw, params["boundary"])
	}
	return Input{}, UnsupportedMediaType()
}

func parseForm(raw []byte) (Input, error) {
	var in Input
	pairs, err := splitQuery(string(raw))
	if err != nil {
		return Input{}, BadRequest("The request body is not a valid form.")
	}
	for _, p := range pairs {
		in.add(p.name, Value{Text: p.value, Kind: KindString})
	}
	return in, nil
}

func parseJSON(raw []byte) (Input, error) {
	bad := BadRequest("The request body must be a JSON object.")
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Input{}, bad
	}
	var in Input
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Input{}, bad
		}
		name, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return Input{}, bad
		}
		in.add(name, jsonValue(v))
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return Input{}, bad
	}
	if _, err := dec.Token(); err != io.EOF {
		return Input{}, bad
	}
	return in, nil
}

func jsonValue(v any) Value {
	switch t := v.(type) {
	case string:
		return Value{Text: t, Kind: KindString}
	case json.Number:
		return Value{Text: t.String(), Kind: KindNumber}
	case bool:
		if t {
			return Value{Text: "true", Kind: KindBool}
		}
		return Value{Text: "false", Kind: KindBool}
	case nil:
		return Value{Kind: KindNull}
	}
	return Value{Kind: KindOther}
}

func parseMultipart(raw []byte, boundary string) (Input, error) {
	if boundary == "" {
		return Input{}, BadRequest("The multipart body has no boundary.")
	}
	var in Input
	mr := multipart.NewReader(bytes.NewReader(raw), boundary)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return in, nil
		}
		if err != nil {
			return Input{}, BadRequest("The request body is not valid multipart/form-data.")
		}
		value, err := io.ReadAll(part)
		if err != nil {
			return Input{}, BadRequest("The request body is not valid multipart/form-data.")
		}
		kind := KindString
		if part.FileName() != "" {
			// Files are not a value any field takes.
			kind = KindOther
		}
		in.add(part.FormName(), Value{Text: string(value), Kind: kind})
	}
}

type queryPair struct{ name, value string }

// splitQuery decodes a query string or form body keeping order and repeats,
// which url.ParseQuery's map would lose.
func splitQuery(s string) ([]queryPair, error) {
	var pairs []queryPair
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
		pairs = append(pairs, queryPair{name, value})
	}
	return pairs, nil
}
