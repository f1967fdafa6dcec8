package prompts

import (
	"strings"
	"testing"
)

// The checks that keep a broken edit of templates.yaml from shipping.
func TestLoadRefusesBrokenBriefs(t *testing.T) {
	testCases := []struct{ name, from, to, want string }{
		{"unknown field", "    shape: prose\n    instruction: >-\n      Do what", "    shape: prose\n    tone: warm\n    instruction: >-\n      Do what", "tone"},
		{"unknown shape", "  - id: 2 # About us\n    shape: prose", "  - id: 2 # About us\n    shape: poem", "shape"},
		{"ids out of order", "  - id: 2 # About us", "  - id: 7 # About us", "id 7"},
		{"words backwards", "words: [150, 250]", "words: [250, 150]", "words"},
		{"sections without their shape", "  - id: 47 # Pros and cons\n    shape: sections", "  - id: 47 # Pros and cons\n    shape: list", "sections"},
		{"a number left out of the wording", `words: "Length: %d to %d words."`, `words: "Length: %d words."`, "system.words"},
		{"wording missing", "  head: >-", "  header: >-", "header"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			raw := string(readYAML(t))
			if !strings.Contains(raw, tc.from) {
				t.Fatalf("templates.yaml no longer holds %q", tc.from)
			}
			d, err := parse([]byte(strings.Replace(raw, tc.from, tc.to, 1)))
			if err == nil {
				_, err = prepare(d)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("load = %v, want an error about %q", err, tc.want)
			}
		})
	}
}
