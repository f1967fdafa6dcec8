package doccheck

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

const formType = "application/x-www-form-urlencoded"

var registerFormDecoder sync.Once

// formDecoder is the library's decoder of form bodies, which reads only
// the fields the schema declares, plus every other field as text: the
// service refuses a field it does not take, and additionalProperties must
// see it to say so too.
func formDecoder(body io.Reader, header http.Header, schema *openapi3.SchemaRef, enc openapi3filter.EncodingFn) (any, error) {
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	decoded, err := openapi3filter.UrlencodedBodyDecoder(bytes.NewReader(raw), header, schema, enc)
	if err != nil {
		return nil, err
	}
	obj, ok := decoded.(map[string]any)
	if !ok {
		return decoded, nil
	}
	values, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, err
	}
	for name, vs := range values {
		if _, declared := obj[name]; !declared && len(vs) > 0 {
			obj[name] = vs[0]
		}
	}
	return obj, nil
}
