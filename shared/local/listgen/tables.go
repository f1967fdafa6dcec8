package listgen

import (
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"gopkg.in/yaml.v3"
)

// schema declares under label's name the parts of a table that its Go
// declares: "<label> AttributeDefinitions", "<label> KeySchema" and, if it
// has any, "<label> GlobalSecondaryIndexes" and "<label> VectorIndexes",
// as the template writes them.
func schema(v map[string]*yaml.Node, label string, in dynamodb.CreateTableInput) {
	attrs := &yaml.Node{Kind: yaml.SequenceNode}
	for _, a := range in.AttributeDefinitions {
		attrs.Content = append(attrs.Content, flowMap("AttributeName", *a.AttributeName, "AttributeType", string(a.AttributeType)))
	}
	v[label+" AttributeDefinitions"] = attrs
	v[label+" KeySchema"] = keySchema(in.KeySchema)
	if len(in.VectorIndexes) > 0 {
		v[label+" VectorIndexes"] = vectorIndexes(in.VectorIndexes)
	}
	if len(in.GlobalSecondaryIndexes) == 0 {
		return
	}
	indexes := &yaml.Node{Kind: yaml.SequenceNode}
	for _, x := range in.GlobalSecondaryIndexes {
		projection := blockMap("ProjectionType", plain("!!str", string(x.Projection.ProjectionType)))
		switch attrs := x.Projection.NonKeyAttributes; {
		case slices.Equal(attrs, []string{findInMap}):
			projection.Content = append(projection.Content, plain("!!str", "NonKeyAttributes"), projectedNode())
		case len(attrs) > 0:
			projection.Content = append(projection.Content, plain("!!str", "NonKeyAttributes"), list(attrs))
		}
		indexes.Content = append(indexes.Content, blockMap(
			"IndexName", plain("!!str", *x.IndexName),
			"KeySchema", keySchema(x.KeySchema),
			"Projection", projection))
	}
	v[label+" GlobalSecondaryIndexes"] = indexes
}

func vectorIndexes(xs []types.VectorIndex) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode}
	for _, x := range xs {
		search := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range x.SearchSchema {
			search.Content = append(search.Content, flowMap("AttributeName", *e.AttributeName, "SearchSchemaElementType", string(e.SearchSchemaElementType)))
		}
		projection := blockMap("ProjectionType", plain("!!str", string(x.Projection.ProjectionType)))
		if len(x.Projection.NonKeyAttributes) > 0 {
			projection.Content = append(projection.Content, plain("!!str", "NonKeyAttributes"), list(x.Projection.NonKeyAttributes))
		}
		n.Content = append(n.Content, blockMap(
			"IndexName", plain("!!str", *x.IndexName),
			"VectorAttribute", flowMap("AttributeName", *x.VectorAttribute.AttributeName),
			"Dimensions", plain("!!int", strconv.FormatInt(*x.Dimensions, 10)),
			"DistanceFunction", plain("!!str", string(x.DistanceFunction)),
			"SearchSchema", search,
			"Projection", projection))
	}
	return n
}

func keySchema(keys []types.KeySchemaElement) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode}
	for _, k := range keys {
		n.Content = append(n.Content, flowMap("AttributeName", *k.AttributeName, "KeyType", string(k.KeyType)))
	}
	return n
}

// flowMap is {k1: v1, k2: v2} of strings.
func flowMap(kv ...string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for _, s := range kv {
		n.Content = append(n.Content, plain("!!str", s))
	}
	return n
}

// blockMap is a block mapping of keys, each followed by its value.
func blockMap(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Content = append(n.Content, plain("!!str", kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return n
}
