package crud

import (
	"bytes"
	"encoding/json"
	"testing"
)

// quotedLen counts what the Lambda runtime's encoding/json makes of a
// record as a string, for records whose values hold what it escapes.
func TestQuotedLenIsTheRuntimes(t *testing.T) {
	values := []any{
		map[string]any{"name": "plain", "id": 7},
		map[string]any{"name": `say "hi" \ back`, "html": "<a href='x'>&</a>"},
		map[string]any{"text": "line\nbreak\ttab\x01\x7f"},
		map[string]any{"text": "sep\u2028para\u2029 é 😀"},
		map[string]any{"text": string([]byte{'a', 0xff, 'b'})},
		[]any{`\"`, nil, true, 1.5},
	}
	for _, v := range values {
		var record bytes.Buffer
		enc := json.NewEncoder(&record)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		b := bytes.TrimSuffix(record.Bytes(), []byte("\n"))
		var quoted bytes.Buffer
		enc = json.NewEncoder(&quoted)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(string(b)); err != nil {
			t.Fatal(err)
		}
		if got, want := quotedLen(b), quoted.Len()-1; got != want {
			t.Errorf("quotedLen(%s) = %d, want %d", b, got, want)
		}
	}
}
