package app

import (
	"encoding/base64"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// response is the http.ResponseWriter a function's handler writes to. It
// makes the same events.APIGatewayV2HTTPResponse as the adapter's own
// writer, core.ProxyResponseWriterV2 (TestResponseAsTheAdapter and
// FuzzResponse hold them equal), for less: a body written at once, as
// every answer here is, is copied once into the event's string, where the
// adapter copies it into a buffer and then into the string; and a body
// known to be valid UTF-8 (httpapi.TextWriter) is not scanned again to
// decide whether it must go base64-encoded. A page of records is 55 KB.
type response struct {
	header http.Header
	status int
	// text is the body when written at once; body gathers further writes.
	text       string
	body       []byte
	writes     int
	textIsUTF8 bool
}

// statusUnset is the adapter's status until one is written.
const statusUnset = -1

func newResponse() *response {
	return &response{header: http.Header{}, status: statusUnset}
}

func (w *response) Header() http.Header { return w.header }

// WriteHeader records status; like the adapter's, a later call wins.
func (w *response) WriteHeader(status int) { w.status = status }

func (w *response) Write(b []byte) (int, error) {
	return w.write(b, false)
}

// WriteText writes b, which its writer vouches is valid UTF-8.
func (w *response) WriteText(b []byte) (int, error) {
	return w.write(b, true)
}

func (w *response) write(b []byte, utf8Known bool) (int, error) {
	if w.status == statusUnset {
		w.status = http.StatusOK
	}
	if w.header.Get("Content-Type") == "" {
		w.header.Add("Content-Type", http.DetectContentType(b))
	}
	w.writes++
	switch w.writes {
	case 1:
		w.text, w.textIsUTF8 = string(b), utf8Known
	case 2:
		w.body = append(append(make([]byte, 0, len(w.text)+len(b)), w.text...), b...)
		w.text = ""
	default:
		w.body = append(w.body, b...)
	}
	return len(b), nil
}

// event is the answer for API Gateway, as the adapter's GetProxyResponse
// makes it; ok is false when no status was ever set, which the adapter
// refuses.
func (w *response) event() (events.APIGatewayV2HTTPResponse, bool) {
	if w.status == statusUnset {
		return events.APIGatewayV2HTTPResponse{}, false
	}
	resp := events.APIGatewayV2HTTPResponse{
		StatusCode: w.status,
		Headers:    make(map[string]string, len(w.header)),
		Cookies:    make([]string, 0),
	}
	switch {
	case w.writes > 1:
		resp.Body = string(w.body)
		if !utf8.Valid(w.body) {
			resp.Body, resp.IsBase64Encoded = base64.StdEncoding.EncodeToString(w.body), true
		}
	case w.textIsUTF8 || utf8.ValidString(w.text):
		resp.Body = w.text
	default:
		resp.Body, resp.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte(w.text)), true
	}
	for k, vs := range w.header {
		if strings.EqualFold("set-cookie", k) {
			resp.Cookies = append(resp.Cookies, vs...)
			continue
		}
		resp.Headers[k] = strings.Join(vs, ",")
	}
	return resp, true
}
