package awsenv

import (
	"net/http"
	"strings"
	"testing"
)

// S3's XML errors give their code and message; what is not an element of
// plain text, or a code too long to be one, gives nothing.
func TestResponseErrorReadsS3XML(t *testing.T) {
	long := strings.Repeat("m", maxMessageBytes+10)
	testCases := []struct{ body, code, message string }{
		{`<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>The key does not exist.</Message></Error>`, "NoSuchKey", "The key does not exist."},
		{`<Error><Code>SlowDown</Code></Error>`, "SlowDown", ""},
		{`<Error><Message>` + long + `</Message></Error>`, "", long[:maxMessageBytes]},
		{`<Error><Code>` + strings.Repeat("C", maxCodeBytes+1) + `</Code></Error>`, "", ""},
		{`<Error><Code><b>x</b></Code></Error>`, "", ""},
		{`<Error><Code>Unclosed`, "", ""},
		{``, "", ""},
	}
	for _, tc := range testCases {
		e := responseError(&http.Response{StatusCode: 400, Header: http.Header{}}, []byte(tc.body))
		if e.Code != tc.code || e.Message != tc.message {
			t.Errorf("%.60q: code %q message %.20q, want %q %.20q", tc.body, e.Code, e.Message, tc.code, tc.message)
		}
	}
	e := responseError(&http.Response{StatusCode: 404, Header: http.Header{"X-Amzn-Errortype": {"NotFound:http://x"}}},
		[]byte(`<Error><Code>NoSuchKey</Code></Error>`))
	if e.Code != "NotFound" {
		t.Errorf("the header's code gives way to the body's: %q", e.Code)
	}
}
