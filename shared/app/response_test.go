package app

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"contentapi/shared/httpapi"
)

// asAdapter runs write on the adapter's writer and on response, and fails
// t unless both make the same event (or both refuse to).
func asAdapter(t *testing.T, write func(w http.ResponseWriter)) {
	t.Helper()
	theirs := core.NewProxyResponseWriterV2()
	write(theirs)
	want, err := theirs.GetProxyResponse()
	ours := newResponse()
	write(ours)
	got, ok := ours.event()
	if ok != (err == nil) {
		t.Fatalf("made an event: %v; the adapter's error: %v", ok, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("response\n%#v\nthe adapter's\n%#v", got, want)
	}
}

func TestResponseAsTheAdapter(t *testing.T) {
	testCases := []struct {
		name  string
		write func(w http.ResponseWriter)
	}{
		{"JSON answer", func(w http.ResponseWriter) {
			w.Header().Set("ETag", `"7.1"`)
			httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"data": "Café \u2028 <b>", "status": 201})
		}},
		{"text without a type", func(w http.ResponseWriter) { _, _ = w.Write([]byte("plain words")) }},
		{"binary", func(w http.ResponseWriter) { _, _ = w.Write([]byte{0x89, 'P', 'N', 'G', 0xff, 0}) }},
		{"several writes", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/yaml")
			for _, part := range []string{"openapi: 3.1.0\n", "info:\n", "  title: é\n"} {
				_, _ = w.Write([]byte(part))
			}
		}},
		{"several writes, one cut mid-character", func(w http.ResponseWriter) {
			_, _ = w.Write([]byte("caf\xc3"))
			_, _ = w.Write([]byte("\xa9"))
		}},
		{"cookies and repeated headers", func(w http.ResponseWriter) {
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Set-Cookie", "b=2")
			w.Header().Add("Vary", "Origin")
			w.Header().Add("Vary", "Accept")
			w.WriteHeader(http.StatusNoContent)
		}},
		{"status only", func(w http.ResponseWriter) { w.WriteHeader(http.StatusNotModified) }},
		{"status written twice", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusAccepted)
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("{}"))
		}},
		{"nothing written", func(w http.ResponseWriter) {}},
		{"empty write", func(w http.ResponseWriter) { _, _ = w.Write(nil) }},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { asAdapter(t, tc.write) })
	}
}

// FuzzResponse writes a body in pieces, with or without a status, a type
// and cookies, to both writers.
func FuzzResponse(f *testing.F) {
	f.Add([]byte(`{"data":"café"}`), uint8(1), uint16(200), "application/json", "", true)
	f.Add([]byte("\x00\xff binary \xc3"), uint8(3), uint16(0), "", "id=1", false)
	f.Add([]byte(""), uint8(0), uint16(304), "", "", false)
	f.Fuzz(func(t *testing.T, body []byte, pieces uint8, status uint16, contentType, cookie string, asText bool) {
		asAdapter(t, func(w http.ResponseWriter) {
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			if cookie != "" {
				w.Header().Add("Set-Cookie", cookie)
			}
			if status >= 100 && status < 600 {
				w.WriteHeader(int(status))
			}
			n := int(pieces%4) + 1
			if pieces == 0 {
				return
			}
			for i := range n {
				part := body[i*len(body)/n : (i+1)*len(body)/n]
				if tw, ok := w.(httpapi.TextWriter); ok && asText && utf8.Valid(part) {
					_, _ = tw.WriteText(part)
				} else {
					_, _ = w.Write(part)
				}
			}
		})
	})
}

// What plainURL passes without parsing, url.Parse takes.
func FuzzPlainURL(f *testing.F) {
	f.Add("r3pmxmplak.execute-api.us-east-1.amazonaws.com", "/api/v1/documents/9990", "search=caf%C3%A9&page=2")
	f.Add("api.example.com", "/api/v1/images/%zz", "a=%")
	f.Add("bad host", "/x", "")
	f.Add("h", "/a b", "q=\x7f")
	f.Fuzz(func(t *testing.T, host, path, query string) {
		if !plainURL(host, path, query) {
			return
		}
		if _, err := url.Parse("https://" + host + "/" + strings.TrimPrefix(path, "/") + "?" + query); err != nil {
			t.Fatalf("plain, yet url.Parse fails: %v", err)
		}
	})
}
