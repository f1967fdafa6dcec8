package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"gopkg.in/yaml.v3"

	"contentapi/shared/local/sam"
	"contentapi/shared/store"
)

// cfn-lint 1.51 predates VectorIndexes, and template.yaml silences the two
// rules it breaks (E3002, E3039) on the tables that declare one. This holds
// the rest: the template with those tables' vector indexes, the attribute
// definitions only their search schemas use and the silencing taken out
// lints clean with every rule on; the silencing is on exactly those
// tables; and each vector index is what AWS documents a VectorIndex to be.
func TestResourceTablesLintWithoutVectorIndexes(t *testing.T) {
	src, err := os.ReadFile(mustFind(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	stripped := 0
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode && scalar(value(n, "Type")) == sam.TableType {
			props, meta := value(n, "Properties"), value(n, "Metadata")
			vectors := value(props, "VectorIndexes")
			silenced := meta != nil && strings.Contains(yamlText(t, meta), "ignore_checks")
			if (vectors != nil) != silenced {
				t.Errorf("a table at line %d: vector indexes %v, cfn-lint rules silenced %v: want both or neither", n.Line, vectors != nil, silenced)
			}
			if vectors != nil {
				if got := yamlText(t, meta); !strings.Contains(got, "[E3002, E3039]") || strings.Count(got, "E") != 2 {
					t.Errorf("a table at line %d silences %s, want E3002 and E3039 alone", n.Line, got)
				}
				searchOnly := searchSchemaOnly(props, vectors)
				drop(props, "VectorIndexes")
				drop(n, "Metadata")
				defs := value(props, "AttributeDefinitions")
				defs.Content = slices.DeleteFunc(defs.Content, func(d *yaml.Node) bool { return searchOnly[scalar(value(d, "AttributeName"))] })
				stripped++
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	if stripped == 0 {
		t.Fatal("no table of template.yaml declares a vector index")
	}

	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not installed here; make lint runs it")
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(lint, file).CombinedOutput(); err != nil {
		t.Fatalf("cfn-lint of the template without its vector indexes: %v\n%s", err, out)
	}
}

// Every vector index of the template, as the local tables are made from it,
// is what AWS documents for AWS::DynamoDB::Table's VectorIndex and
// DynamoDB's rules for it, and the store's: on an on-demand table, its
// search schema's attributes defined, searched within an account.
func TestVectorIndexesAsAWSDocumentsThem(t *testing.T) {
	tmpl := loadTemplate(t)
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)
	found := 0
	for _, tbl := range tables {
		in := tbl.Input
		for _, x := range in.VectorIndexes {
			found++
			id := tbl.LogicalID + "/" + aws.ToString(x.IndexName)
			if in.BillingMode != types.BillingModePayPerRequest {
				t.Errorf("%s: billing mode %s; vector indexes are on-demand only", id, in.BillingMode)
			}
			if !name.MatchString(aws.ToString(x.IndexName)) {
				t.Errorf("%s: IndexName does not match [a-zA-Z0-9_.-]{3,255}", id)
			}
			if d := aws.ToInt64(x.Dimensions); d < 1 || d > 4096 {
				t.Errorf("%s: Dimensions %d outside 1-4096", id, d)
			}
			if !slices.Contains(x.DistanceFunction.Values(), x.DistanceFunction) {
				t.Errorf("%s: DistanceFunction %q", id, x.DistanceFunction)
			}
			if x.VectorAttribute == nil || aws.ToString(x.VectorAttribute.AttributeName) == "" {
				t.Errorf("%s: no VectorAttribute", id)
			}
			if x.Projection == nil || !slices.Contains(x.Projection.ProjectionType.Values(), x.Projection.ProjectionType) {
				t.Errorf("%s: Projection %+v", id, x.Projection)
			}
			hashes := 0
			for _, e := range x.SearchSchema {
				if !slices.Contains(e.SearchSchemaElementType.Values(), e.SearchSchemaElementType) {
					t.Errorf("%s: search schema element type %q", id, e.SearchSchemaElementType)
				}
				if e.SearchSchemaElementType == types.SearchSchemaElementTypeHash {
					hashes++
					if aws.ToString(e.AttributeName) != store.AttrAccount {
						t.Errorf("%s: searched within %s, want the account", id, aws.ToString(e.AttributeName))
					}
				}
				if !slices.ContainsFunc(in.AttributeDefinitions, func(d types.AttributeDefinition) bool {
					return aws.ToString(d.AttributeName) == aws.ToString(e.AttributeName)
				}) {
					t.Errorf("%s: search schema attribute %s is not among the AttributeDefinitions", id, aws.ToString(e.AttributeName))
				}
			}
			if hashes != 1 {
				t.Errorf("%s: %d HASH elements, want the account alone", id, hashes)
			}
		}
	}
	if found == 0 {
		t.Fatal("no vector index in template.yaml")
	}
	// What the template declares beyond the members AWS documents would be
	// dropped by the reader above, so its members are held by name too.
	raw, err := os.ReadFile(mustFind(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	documented := []string{"IndexName", "VectorAttribute", "Dimensions", "DistanceFunction", "SearchSchema", "Projection"}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			if x := value(n, "VectorIndexes"); x != nil {
				for _, index := range x.Content {
					for i := 0; i+1 < len(index.Content); i += 2 {
						if k := index.Content[i].Value; !slices.Contains(documented, k) {
							t.Errorf("a VectorIndex at line %d has %s, which AWS does not document", index.Line, k)
						}
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
}

func mustFind(t *testing.T) string {
	t.Helper()
	path, err := sam.Find()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// searchSchemaOnly are the attributes a table's vector indexes search on
// that no key of the table or of its global indexes uses.
func searchSchemaOnly(props, vectors *yaml.Node) map[string]bool {
	keyed := map[string]bool{}
	keys := func(ks *yaml.Node) {
		if ks != nil {
			for _, k := range ks.Content {
				keyed[scalar(value(k, "AttributeName"))] = true
			}
		}
	}
	keys(value(props, "KeySchema"))
	if gsis := value(props, "GlobalSecondaryIndexes"); gsis != nil {
		for _, x := range gsis.Content {
			keys(value(x, "KeySchema"))
		}
	}
	only := map[string]bool{}
	for _, x := range vectors.Content {
		if schema := value(x, "SearchSchema"); schema != nil {
			for _, e := range schema.Content {
				if a := scalar(value(e, "AttributeName")); !keyed[a] {
					only[a] = true
				}
			}
		}
	}
	return only
}

// value is a mapping's value for key, nil when it has none.
func value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func drop(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

func scalar(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

func yamlText(t *testing.T, n *yaml.Node) string {
	t.Helper()
	if n == nil {
		return ""
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
