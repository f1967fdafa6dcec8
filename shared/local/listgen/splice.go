package listgen

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"contentapi/shared/local/sam"
)

// marker starts the comment line above a key whose value the code declares:
// "# make generate: images.Resource style".
const marker = "# make generate: "

// keysMark marks a mapping whose keys the code declares, each named by
// the comment after it: "API_KEYS_TABLE: !Ref ApiKeysTable # app.EnvKeysTable".
// The values stay as written.
const keysMark = "each name from its comment"

// width is where a generated flow list or paragraph wraps, as the
// documents wrap by hand.
const width = 100

// Rewrite returns src with the value of every marked key replaced by what
// values declares under the marker's name. Only those values' text changes:
// the rest of the document stays byte for byte as written. yaml.v3 finds the
// marked keys and checks the result; it does not write the document, since
// its encoder drops blank lines and escapes and joins wrapped lines.
// used collects the names met.
func Rewrite(src []byte, values map[string]*yaml.Node, used map[string]bool) ([]byte, error) {
	_, marks, err := findMarks(src)
	if err != nil {
		return nil, err
	}
	lines := lineStarts(src)
	var edits []edit
	for _, m := range marks {
		if m.name == keysMark {
			keys, err := keyEdits(src, lines, m, values, used)
			if err != nil {
				return nil, err
			}
			edits = append(edits, keys...)
			continue
		}
		want, ok := values[m.name]
		if !ok {
			return nil, fmt.Errorf("line %d: %q names nothing listgen declares", m.key.Line, marker+m.name)
		}
		used[m.name] = true
		if (m.end > 0) != (want.Tag == runTag) {
			return nil, fmt.Errorf("line %d: %s is a run of keys where it ends with a line %q, and only then", m.key.Line, m.name, marker+endOf+m.name)
		}
		if m.end > 0 {
			edits = append(edits, edit{lines[m.key.Line-1], lines[m.end-1], indentLines(want.Value, m.key.Column-1)})
			continue
		}
		var from, to int
		var text string
		if block(m.value) || block(want) {
			// A block collection: the lines under the key, comments and all.
			if !block(m.value) || !block(want) || m.value.Kind != want.Kind {
				return nil, fmt.Errorf("line %d: %s: a block collection replaces only one of its kind", m.value.Line, m.name)
			}
			if m.value.Column <= m.key.Column {
				return nil, fmt.Errorf("line %d: %s: a block sequence's items must be indented under their key", m.value.Line, m.name)
			}
			from = lines[m.key.Line]
			to = blockEnd(src, from, m.key.Column-1)
			text, err = renderBlock(want, m.key.Column+1)
		} else {
			from = offset(src, lines, m.value.Line, m.value.Column)
			if to, err = valueEnd(src, from, m.value); err == nil {
				text, err = render(want, m.key.Column-1, m.value.Column-1)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", m.value.Line, m.name, err)
		}
		edits = append(edits, edit{from, to, text})
	}
	// From the end, so that the offsets before each edit hold.
	slices.SortFunc(edits, func(a, b edit) int { return b.from - a.from })
	out := slices.Clone(src)
	for i := range edits {
		e := edits[i]
		out = slices.Concat(out[:e.from], []byte(e.text), out[e.to:])
	}
	// What was written reads back as the declared values, and nothing
	// else changed: the document as written, with the marked values put
	// in its tree, reads as the rewritten one.
	before, beforeMarks, err := findMarks(src)
	if err != nil {
		return nil, err
	}
	after, again, err := findMarks(out)
	if err != nil {
		return nil, fmt.Errorf("the rewritten document: %w", err)
	}
	if len(again) != len(marks) {
		return nil, fmt.Errorf("the rewritten document has %d marks, not %d", len(again), len(marks))
	}
	for i, m := range again {
		if m.end > 0 {
			if err := replaceRun(beforeMarks[i], values[m.name]); err != nil {
				return nil, err
			}
			continue
		}
		if m.name == keysMark {
			for _, k := range namedKeys(beforeMarks[i].value) {
				k.key.Value = values[k.label].Value
			}
			continue
		}
		want := values[m.name]
		if want.Style == yaml.LiteralStyle {
			// Prose (CommonMark, as OpenAPI's descriptions are): a line
			// break inside a paragraph is a space.
			if strings.Join(strings.Fields(m.value.Value), " ") != strings.Join(strings.Fields(want.Value), " ") {
				return nil, fmt.Errorf("line %d: %s reads back as %q", m.value.Line, m.name, m.value.Value)
			}
			m.value.Value = want.Value
		}
		*beforeMarks[i].value = *want
	}
	got, err := sam.Decode(after)
	if err != nil {
		return nil, err
	}
	want, err := sam.Decode(before)
	if err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(got, want) {
		return nil, fmt.Errorf("the rewritten document reads otherwise than the declared values in the document as written")
	}
	return out, nil
}

// indentLines is text with every line but the empty ones indented by n.
func indentLines(text string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "")
}

// replaceRun puts in the document as written the keys of the run m marks
// as want declares them, for the rewritten document to be compared with.
func replaceRun(m mark, want *yaml.Node) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(want.Value), &doc); err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("%s is no mapping of keys", m.name)
	}
	from, to := m.runPairs()
	m.parent.Content = slices.Concat(m.parent.Content[:from], doc.Content[0].Content, m.parent.Content[to:])
	return nil
}

// edit is the text to write at from, in place of what is up to to.
type edit struct {
	from, to int
	text     string
}

// namedKey is a key of a keysMark mapping and the comment after it.
type namedKey struct {
	key   *yaml.Node
	label string
}

// namedKeys are the keys of a keysMark mapping that name their source in
// the comment after them; a key without one is not the code's (GOGC).
func namedKeys(n *yaml.Node) []namedKey {
	var out []namedKey
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		comment := cmp.Or(k.LineComment, v.LineComment)
		if label, ok := strings.CutPrefix(comment, "# "); ok {
			out = append(out, namedKey{k, strings.TrimSpace(label)})
		}
	}
	return out
}

// keyEdits writes each key of the keysMark mapping m as what its comment
// names.
func keyEdits(src []byte, lines []int, m mark, values map[string]*yaml.Node, used map[string]bool) ([]edit, error) {
	if m.value.Kind != yaml.MappingNode || !block(m.value) {
		return nil, fmt.Errorf("line %d: %q marks a block mapping", m.key.Line, marker+keysMark)
	}
	var edits []edit
	for _, k := range namedKeys(m.value) {
		want, ok := values[k.label]
		if !ok {
			return nil, fmt.Errorf("line %d: %s: %q names nothing listgen declares", k.key.Line, k.key.Value, k.label)
		}
		if want.Kind != yaml.ScalarNode || want.Tag != "!!str" {
			return nil, fmt.Errorf("line %d: %s is no name", k.key.Line, k.label)
		}
		used[k.label] = true
		from := offset(src, lines, k.key.Line, k.key.Column)
		if k.key.Style != 0 || !bytes.HasPrefix(src[from:], []byte(k.key.Value+":")) {
			return nil, fmt.Errorf("line %d: the key %s is not written plain", k.key.Line, k.key.Value)
		}
		text, err := flowScalar(want)
		if err != nil {
			return nil, err
		}
		edits = append(edits, edit{from, from + len(k.key.Value), text})
	}
	return edits, nil
}

// Unmarked finds the lists in src, of three items or more, that copy a
// declared list without its mark: a copy nobody would regenerate.
func Unmarked(src []byte, values map[string]*yaml.Node) error {
	doc, marked, err := markedNodes(src)
	if err != nil {
		return err
	}
	// The declared names (of variables), by what they say. The metrics'
	// names are values, never keys: the dashboard's variables are named
	// after their Go declarations (ServerErrors: ServerErrors).
	names := map[string]string{}
	for label, v := range values {
		if v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Style == 0 && !strings.HasPrefix(label, metricsLabel) {
			names[v.Value] = label
		}
	}
	var found []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if marked[n] && n.Kind == yaml.MappingNode && n.Tag == runTag {
			return // a run's value, written whole, copies nothing
		}
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; names[k.Value] != "" && !marked[k] {
				found = append(found, fmt.Sprintf("line %d: the key %s is %s: write %q after it, in a mapping marked %q",
					k.Line, k.Value, names[k.Value], "# "+names[k.Value], marker+keysMark))
				return
			}
		}
		if n.Kind == yaml.SequenceNode && len(n.Content) >= 3 && !marked[n] {
			got, err := sam.Decode(n)
			for _, name := range slices.Sorted(maps.Keys(values)) {
				v := values[name]
				if err != nil || v.Kind != yaml.SequenceNode {
					continue // a list that does not decode copies nothing
				}
				if declared, err := sam.Decode(v); err == nil && reflect.DeepEqual(got, declared) {
					found = append(found, fmt.Sprintf("line %d copies %s: mark it %q", n.Line, name, marker+name))
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(doc)
	return joined(found)
}

// joined is the error listing what a check found, nil if nothing.
func joined(found []string) error {
	if len(found) == 0 {
		return nil
	}
	return errors.New(strings.Join(found, "; "))
}

// markedNodes parses src and finds the nodes listgen writes: the marked
// values, and the keys of a keysMark mapping.
func markedNodes(src []byte) (*yaml.Node, map[*yaml.Node]bool, error) {
	doc, marks, err := findMarks(src)
	if err != nil {
		return nil, nil, err
	}
	marked := map[*yaml.Node]bool{}
	for _, m := range marks {
		if m.end > 0 {
			from, to := m.runPairs()
			for _, n := range m.parent.Content[from:to] {
				marked[n] = true
				if n.Kind == yaml.MappingNode {
					n.Tag = runTag // for Unmarked: written whole
				}
			}
			continue
		}
		marked[m.value] = true
		if m.name == keysMark {
			for _, k := range namedKeys(m.value) {
				marked[k.key] = true
			}
		}
	}
	return doc, marked, nil
}

// mark is a marked key and its value. A run's mark (end > 0) marks the
// keys of its mapping, parent, from its key to the line end, which says
// "# make generate: end of <name>": listgen writes them all.
type mark struct {
	name       string
	key, value *yaml.Node
	parent     *yaml.Node
	end        int
}

// endOf starts the line that ends a run of keys: "# make generate: end of
// paths of the resources".
const endOf = "end of "

// runPairs are the key and value nodes of a run's keys in its parent.
func (m mark) runPairs() (from, to int) {
	from = slices.Index(m.parent.Content, m.key)
	to = from
	for to+1 < len(m.parent.Content) && m.parent.Content[to].Line < m.end {
		to += 2
	}
	return from, to
}

// forEach starts the key of a CloudFormation loop, whose mark names the
// collection it loops over.
const forEach = "Fn::ForEach::"

// findMarks parses src and lists its marked keys, in document order: for a
// loop ("Fn::ForEach::Name": [identifier, collection, fragment]), the
// marked value is its collection.
func findMarks(src []byte) (*yaml.Node, []mark, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, nil, err
	}
	var marks []mark
	var loopErrs []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				key, value := n.Content[i], n.Content[i+1]
				comment := key.HeadComment
				if i == 0 && comment == "" {
					// "# ...\n- key: value": yaml.v3 gives the comment
					// to the sequence item, the mapping.
					comment = n.HeadComment
				}
				lines := strings.Split(comment, "\n")
				if name, ok := strings.CutPrefix(lines[len(lines)-1], marker); ok && !strings.HasPrefix(name, endOf) {
					if strings.HasPrefix(key.Value, forEach) {
						// A loop's mark names its collection:
						// [identifier, collection, fragment].
						if value.Kind != yaml.SequenceNode || len(value.Content) != 3 {
							loopErrs = append(loopErrs, fmt.Sprintf("line %d: %s is not [identifier, collection, fragment]", key.Line, key.Value))
							continue
						}
						value = value.Content[1]
					}
					marks = append(marks, mark{name: strings.TrimSpace(name), key: key, value: value, parent: n})
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	if err := joined(loopErrs); err != nil {
		return nil, nil, err
	}
	srcLines := strings.Split(string(src), "\n")
	for i, m := range marks {
		end := strings.Repeat(" ", m.key.Column-1) + marker + endOf + m.name
		for l := m.key.Line; l < len(srcLines); l++ {
			if srcLines[l] == end {
				marks[i].end = l + 1
				break
			}
		}
	}
	slices.SortFunc(marks, func(a, b mark) int {
		return cmp.Or(a.value.Line-b.value.Line, a.value.Column-b.value.Column)
	})
	if err := strayMarkers(src, marks); err != nil {
		return nil, nil, err
	}
	return &doc, marks, nil
}

// strayMarkers refuses a marker line that marks no key: yaml.v3 gives a
// key only the comment lines right above it, so a marker with a blank or
// another comment line before its key, or one after a value, would
// otherwise leave its value unwritten without a word.
func strayMarkers(src []byte, marks []mark) error {
	marking := map[int]bool{} // the lines, from 1, right above a marked key, and the runs' ends
	for _, m := range marks {
		marking[m.key.Line-1] = true
		if m.end > 0 {
			marking[m.end] = true
		}
	}
	var stray []string
	for i, line := range strings.Split(string(src), "\n") {
		if strings.Contains(line, strings.TrimSpace(marker)) && !marking[i+1] {
			stray = append(stray, fmt.Sprintf("line %d", i+1))
		}
	}
	if len(stray) > 0 {
		return fmt.Errorf("%s: %q marks no key; it must be the comment line right above the key it marks", strings.Join(stray, ", "), strings.TrimSpace(marker))
	}
	return nil
}

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, b := range src {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// offset is the byte offset of yaml.v3's line and column (both from 1,
// the column counted in characters).
func offset(src []byte, lines []int, line, column int) int {
	at := lines[line-1]
	for range column - 1 {
		_, size := utf8.DecodeRune(src[at:])
		at += size
	}
	return at
}

// block reports whether n is a block mapping or a block sequence, which a
// rewrite replaces line for line under its key.
func block(n *yaml.Node) bool {
	return (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle == 0
}

// blockEnd is the offset past the last line from from on that is indented
// more than indent, blank lines between them included, blank lines after
// them not.
func blockEnd(src []byte, from, indent int) int {
	end := from
	for at := from; at < len(src); {
		next := bytes.IndexByte(src[at:], '\n')
		if next < 0 {
			next = len(src) - at
		}
		line := src[at : at+next]
		if len(bytes.TrimSpace(line)) > 0 {
			if len(line)-len(bytes.TrimLeft(line, " ")) <= indent {
				break
			}
			end = at + next
		}
		at += next + 1
	}
	return end
}

// renderBlock writes a block mapping, its keys at indent, each after its
// head comment, or a block sequence, its items at indent: scalars, flow
// mappings of scalars or block mappings.
func renderBlock(n *yaml.Node, indent int) (string, error) {
	pad := strings.Repeat(" ", indent)
	var lines []string
	if n.Kind == yaml.SequenceNode {
		for _, item := range n.Content {
			var text string
			var err error
			switch {
			case block(item):
				// Its first key after the dash, the others under it.
				text, err = renderBlock(item, indent+2)
				text = strings.TrimPrefix(text, pad+"  ")
			case item.Kind == yaml.MappingNode:
				text, err = render(item, indent, indent+2)
			default:
				text, err = flowScalar(item)
			}
			if err != nil {
				return "", err
			}
			lines = append(lines, pad+"- "+text)
		}
		return strings.Join(lines, "\n"), nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.HeadComment != "" {
			lines = append(lines, pad+strings.ReplaceAll(k.HeadComment, "\n", "\n"+pad))
		}
		key, err := flowScalar(k)
		if err != nil {
			return "", err
		}
		var text string
		if block(v) {
			text, err = renderBlock(v, indent+2)
			text = pad + key + ":\n" + text
		} else {
			text, err = render(v, indent, indent+len(key)+2)
			text = pad + key + ": " + text
		}
		if err != nil {
			return "", err
		}
		lines = append(lines, text)
	}
	return strings.Join(lines, "\n"), nil
}

// valueEnd is the offset just past the text of n, which starts at from.
func valueEnd(src []byte, from int, n *yaml.Node) (int, error) {
	switch {
	case n.Style&yaml.FlowStyle != 0 && (n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode):
		depth := 0
		for i := from; i < len(src); i++ {
			switch src[i] {
			case '[', '{':
				depth++
			case ']', '}':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			case '\'', '"':
				end, err := quotedEnd(src, i)
				if err != nil {
					return 0, err
				}
				i = end - 1
			}
		}
		return 0, fmt.Errorf("unclosed flow collection")
	case n.Kind != yaml.ScalarNode:
		return 0, fmt.Errorf("a generated value is a flow list or a scalar, not a block collection")
	case n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0:
		return quotedEnd(src, from)
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		// The indicator's line, then every line that is blank or indented
		// more than the key; trailing blank lines stay outside.
		indent := -1
		end := bytes.IndexByte(src[from:], '\n') + from
		for at := end + 1; at < len(src); {
			next := bytes.IndexByte(src[at:], '\n')
			if next < 0 {
				next = len(src) - at
			}
			line := src[at : at+next]
			if len(bytes.TrimSpace(line)) > 0 {
				lead := len(line) - len(bytes.TrimLeft(line, " "))
				if indent < 0 {
					indent = lead
				}
				if lead < indent {
					break
				}
				end = at + next
			}
			at += next + 1
		}
		return end, nil
	default:
		lineEnd := bytes.IndexByte(src[from:], '\n')
		if lineEnd < 0 {
			lineEnd = len(src) - from
		}
		text := src[from : from+lineEnd]
		if c := bytes.Index(text, []byte(" #")); c >= 0 {
			text = text[:c]
		}
		if string(bytes.TrimSpace(text)) != n.Value {
			return 0, fmt.Errorf("a plain value that spans lines")
		}
		return from + len(bytes.TrimRight(text, " ")), nil
	}
}

// quotedEnd is the offset past the quoted scalar that starts at from.
func quotedEnd(src []byte, from int) (int, error) {
	q := src[from]
	for i := from + 1; i < len(src); i++ {
		switch {
		case q == '"' && src[i] == '\\':
			i++
		case src[i] == q && q == '\'' && i+1 < len(src) && src[i+1] == '\'':
			i++
		case src[i] == q:
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("unclosed quoted scalar")
}

// render writes n as the value of a key indented by indent spaces, the
// value starting at column at (from 0).
func render(n *yaml.Node, indent, at int) (string, error) {
	switch {
	case n.Kind == yaml.SequenceNode:
		tag := ""
		if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
			// An intrinsic's short form: !FindInMap [a, b, c].
			tag = n.Tag + " "
		}
		var items []string
		for _, item := range n.Content {
			text, err := flowScalar(item)
			if err != nil {
				return "", err
			}
			items = append(items, text)
		}
		return tag + flowList(items, indent, at+len(tag)), nil
	case n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle != 0:
		var pairs []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := flowScalar(n.Content[i])
			if err != nil {
				return "", err
			}
			v, err := flowScalar(n.Content[i+1])
			if err != nil {
				return "", err
			}
			pairs = append(pairs, k+": "+v)
		}
		return "{" + strings.Join(pairs, ", ") + "}", nil
	case n.Kind != yaml.ScalarNode:
		return "", fmt.Errorf("cannot render a %v", n.Kind)
	case n.Style == yaml.DoubleQuotedStyle:
		return doubleQuoted(n.Value), nil
	case n.Style == yaml.SingleQuotedStyle:
		return "'" + strings.ReplaceAll(n.Value, "'", "''") + "'", nil
	case n.Style == yaml.LiteralStyle:
		var b strings.Builder
		b.WriteString("|")
		for _, paragraph := range strings.Split(strings.TrimSuffix(n.Value, "\n"), "\n") {
			b.WriteString(paragraphLines(paragraph, indent+2))
		}
		return b.String(), nil
	default:
		return flowScalar(n)
	}
}

// yaml11Scalar are the plain words YAML 1.1, which CloudFormation reads,
// takes for booleans or null where yaml.v3 (YAML 1.2) writes them unquoted
// as text.
var yaml11Scalar = map[string]bool{"y": true, "yes": true, "n": true, "no": true, "on": true, "off": true,
	"true": true, "false": true, "null": true, "~": true}

// flowScalar writes a scalar as an item of a flow list: plain where YAML
// reads it back the same, single-quoted otherwise.
func flowScalar(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("a generated list holds scalars, not a %v", n.Kind)
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		// An application's tag, as CloudFormation's !Ref, before the value.
		untagged := *n
		untagged.Tag = "!!str"
		text, err := flowScalar(&untagged)
		return n.Tag + " " + text, err
	}
	bare := *n
	bare.HeadComment, bare.LineComment, bare.FootComment = "", "", ""
	out, err := yaml.Marshal(&bare)
	if err != nil {
		return "", err
	}
	text := strings.TrimSuffix(string(out), "\n")
	if text != n.Value || strings.ContainsAny(text, ",[]{}#") || n.Tag == "!!str" && yaml11Scalar[strings.ToLower(text)] {
		// Quoted as the documents quote: 'true', '0.75'.
		text = "'" + strings.ReplaceAll(n.Value, "'", "''") + "'"
	}
	return text, nil
}

// flowList writes items as "[a, b, c]" from column at, going on to a line
// indented two more than the key where the next item would pass width.
func flowList(items []string, indent, at int) string {
	var b strings.Builder
	col := at + len("[")
	b.WriteString("[")
	for i, item := range items {
		if i > 0 {
			b.WriteString(",")
			col++
			// The item and the comma or bracket after it.
			if col+1+len(item)+1 > width {
				b.WriteString("\n" + strings.Repeat(" ", indent+2))
				col = indent + 2
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(item)
		col += len(item)
	}
	b.WriteString("]")
	return b.String()
}

// paragraphLines writes a paragraph of a block scalar in lines at indent
// within width, breaking after commas only, so that a generated list in
// prose keeps each item on one line ("3 Advertisement").
func paragraphLines(text string, indent int) string {
	var b strings.Builder
	col := width
	for _, unit := range strings.SplitAfter(text, ", ") {
		unit = strings.TrimSuffix(unit, " ")
		if col+1+len(unit) > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		} else {
			b.WriteString(" ")
			col++
		}
		b.WriteString(unit)
		col += len(unit)
	}
	return b.String()
}

// doubleQuoted writes s as a double-quoted scalar: backslashes and quotes
// escaped, and every space but the ASCII one and every invisible character
// as \u, so a pattern's white space class can be read.
func doubleQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == ' ' || (r < utf8.RuneSelf && unicode.IsPrint(r)):
			b.WriteRune(r)
		case r <= 0xFF:
			b.WriteString(`\x` + strings.ToUpper(strconv.FormatInt(int64(r)|0x100, 16)[1:]))
		default:
			fmt.Fprintf(&b, `\u%04X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
