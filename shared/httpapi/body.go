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

	"contentapi/shared/input"
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
func ParseBody(r *http.Request) (input.Fields, error) {
	if undecodable, _ := r.Context().Value(bodyUndecodableKey{}).(bool); undecodable {
		return input.Fields{}, BadRequest("The request body is not valid base64.")
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return input.Fields{}, TooLarge()
		}
		return input.Fields{}, BadRequest("The request body could not be read.")
	}
	header := r.Header.Get("Content-Type")
	if header == "" {
		if len(bytes.TrimSpace(raw)) == 0 {
			return input.Fields{}, nil
		}
		return input.Fields{}, UnsupportedMediaType()
	}
	mediaType, params, err := mime.ParseMediaType(header)
	if err != nil {
		return input.Fields{}, UnsupportedMediaType()
	}
	switch {
	case mediaType == "application/x-www-form-urlencoded":
		return parseForm(raw)
	case mediaType == "application/json":
		return parseJSON(raw)
	case mediaType == "multipart/form-data":
		return parseMultipart(raw, params["boundary"])
	}
	return input.Fields{}, UnsupportedMediaType()
}

func parseForm(raw []byte) (input.Fields, error) {
	var in input.Fields
	pairs, err := splitQuery(string(raw))
	if err != nil {
		return input.Fields{}, BadRequest("The request body is not a valid form.")
	}
	for _, p := range pairs {
		in.Add(p.Name, input.Value{Text: p.Value, Kind: input.KindString})
	}
	return in, nil
}

func parseJSON(raw []byte) (input.Fields, error) {
	bad := BadRequest("The request body must be a JSON object.")
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return input.Fields{}, bad
	}
	// encoding/json turns invalid UTF-8 in a string into U+FFFD, which
	// would be stored as if sent; such a body's values are read raw, and
	// one holding invalid UTF-8 keeps it, for the field's rules to refuse
	// (422). Valid bodies, nearly all, are decoded once.
	rawValues := !utf8.Valid(raw)
	var in input.Fields
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return input.Fields{}, bad
		}
		name, _ := tok.(string)
		var v any
		if rawValues {
			var rv json.RawMessage
			if err := dec.Decode(&rv); err != nil {
				return input.Fields{}, bad
			}
			if !utf8.Valid(rv) {
				in.Add(name, input.Value{Text: string(rv), Kind: input.KindString})
				continue
			}
			d := json.NewDecoder(bytes.NewReader(rv))
			d.UseNumber()
			err = d.Decode(&v)
		} else {
			err = dec.Decode(&v)
		}
		if err != nil {
			return input.Fields{}, bad
		}
		in.Add(name, jsonValue(v))
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return input.Fields{}, bad
	}
	if _, err := dec.Token(); err != io.EOF {
		return input.Fields{}, bad
	}
	return in, nil
}

func jsonValue(v any) input.Value {
	switch t := v.(type) {
	case string:
		return input.Value{Text: t, Kind: input.KindString}
	case json.Number:
		return input.Value{Text: t.String(), Kind: input.KindNumber}
	case bool:
		if t {
			return input.Value{Text: "true", Kind: input.KindBool}
		}
		return input.Value{Text: "false", Kind: input.KindBool}
	case nil:
		return input.Value{Kind: input.KindNull}
	}
	return input.Value{Kind: input.KindOther}
}

func parseMultipart(raw []byte, boundary string) (input.Fields, error) {
	if boundary == "" {
		return input.Fields{}, BadRequest("The multipart body has no boundary.")
	}
	var in input.Fields
	mr := multipart.NewReader(bytes.NewReader(raw), boundary)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return in, nil
		}
		if err != nil {
			return input.Fields{}, BadRequest("The request body is not valid multipart/form-data.")
		}
		value, err := io.ReadAll(part)
		if err != nil {
			return input.Fields{}, BadRequest("The request body is not valid multipart/form-data.")
		}
		kind := input.KindString
		if part.FileName() != "" {
			// Files are not a value any field takes.
			kind = input.KindOther
		}
		in.Add(part.FormName(), input.Value{Text: string(value), Kind: kind})
	}
}

// splitQuery decodes a query string or form body keeping order and repeats,
// which url.ParseQuery's map would lose.
func splitQuery(s string) (input.Params, error) {
	var pairs input.Params
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
		pairs = append(pairs, input.Param{Name: name, Value: value})
	}
	return pairs, nil
}
