package listgen

import (
	"bytes"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"contentapi/shared/documents"
)

// Briefs is the prompts' data file, whose briefs are listed by template id.
const Briefs = "shared/prompts/templates.yaml"

// NameTemplates writes after each brief's id, as its line comment, the
// template's name from documents.Templates ("- id: 2 # About us"), so that
// the file reads with names without keeping a copy of them.
func NameTemplates(src []byte) ([]byte, error) {
	ids, err := briefIDs(src)
	if err != nil {
		return nil, err
	}
	lines := lineStarts(src)
	out := slices.Clone(src)
	for _, n := range slices.Backward(ids) {
		var id int
		if err := n.Decode(&id); err != nil || id < 1 || id >= len(documents.Templates) {
			return nil, fmt.Errorf("line %d: id %s is no template", n.Line, n.Value)
		}
		from := offset(src, lines, n.Line, n.Column)
		end, err := valueEnd(src, from, n)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		lineEnd := len(src)
		if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
			lineEnd = end + i
		}
		out = slices.Concat(out[:end], []byte(" # "+documents.Templates[id]), out[lineEnd:])
	}
	again, err := briefIDs(out)
	if err != nil || len(again) != len(ids) {
		return nil, fmt.Errorf("the rewritten briefs: %d ids, %v", len(again), err)
	}
	for i, n := range again {
		if n.Value != ids[i].Value || n.LineComment != "# "+templateName(n) {
			return nil, fmt.Errorf("line %d: the rewritten id reads %s %s", n.Line, n.Value, n.LineComment)
		}
	}
	return out, nil
}

// templateName is the name of the template whose id n holds.
func templateName(n *yaml.Node) string {
	var id int
	if n.Decode(&id) != nil || id < 1 || id >= len(documents.Templates) {
		return ""
	}
	return documents.Templates[id]
}

// briefIDs are the id values of the briefs under documents, in order.
func briefIDs(src []byte) ([]*yaml.Node, error) {
	var doc struct {
		Documents []map[string]yaml.Node `yaml:"documents"`
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, err
	}
	if err := root.Decode(&doc); err != nil {
		return nil, err
	}
	var ids []*yaml.Node
	for i, brief := range doc.Documents {
		id, ok := brief["id"]
		if !ok {
			return nil, fmt.Errorf("brief %d has no id", i+1)
		}
		ids = append(ids, &id)
	}
	return ids, nil
}
