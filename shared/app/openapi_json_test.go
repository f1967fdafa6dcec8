package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"

	"gopkg.in/yaml.v3"

	"contentapi"
)

var update = flag.Bool("update", false, "rewrite openapi.json from openapi.yaml")

// The embedded JSON is openapi.yaml as it stands: an edit of the YAML
// fails here until the JSON is made again (make generate).
func TestOpenAPIJSONIsTheYAML(t *testing.T) {
	want, err := yamlToJSON(contentapi.OpenAPIYAML)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if *update {
		if err := os.WriteFile("openapi.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(openAPIJSON, want) {
		t.Fatal("openapi.json is not openapi.yaml: run make generate (go test ./shared/app -run TestOpenAPIJSONIsTheYAML -update)")
	}
}

// yamlToJSON converts a YAML document to compact JSON, keeping the order of
// mapping keys (encoding/json would sort a map's) so the JSON reads like the
// YAML: openapi and info first, paths in the order they were written.
// Aliases are expanded; keys must be strings, as JSON's are.
func yamlToJSON(src []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, err
	}
	if root.Kind == 0 {
		return nil, errors.New("empty document")
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &root, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// maxDepth bounds alias expansion: an alias cycle would never end.
const maxDepth = 100

func writeJSON(buf *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("line %d: nested deeper than %d levels", n.Line, maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		return writeJSON(buf, n.Content[0], depth+1)
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias, depth+1)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return fmt.Errorf("line %d: a mapping key must be a string (merge keys are not supported)", k.Line)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k.Value)
			buf.WriteByte(':')
			if err := writeJSON(buf, v, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, v := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, v, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	default:
		return fmt.Errorf("line %d: unexpected YAML node kind %d", n.Line, n.Kind)
	}
	return nil
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!binary":
		// A timestamp stays the text it was written as.
		writeString(buf, n.Value)
		return nil
	case "!!null":
		buf.WriteString("null")
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	buf.Write(b)
	return nil
}

// writeString writes s as a JSON string, leaving <, > and & as they are
// (encoding/json's default escapes them for HTML, which JSON does not need).
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}
