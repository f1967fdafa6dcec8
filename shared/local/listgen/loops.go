package listgen

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"gopkg.in/yaml.v3"

	"contentapi/shared/app"
	"contentapi/shared/store"
)

// perResourceMap is the template's mapping of what its Fn::ForEach loops
// take for each resource, and loopID the identifier the loops name the
// resource by: !FindInMap [PerResource, !Ref Resource, Projected].
const (
	perResourceMap = "PerResource"
	loopID         = "Resource"
)

// perResource declares what template.yaml's loops over the resources are
// written from: their collections (each resource by its logical IDs' stem,
// "Images": every resource's, those generating pictures and those
// generating text), the PerResource mapping of each one's values (its name,
// the attributes its list indexes project), and the tables' schema, one
// for every resource, each table's projection from the mapping.
func perResource(v map[string]*yaml.Node, resources []app.Resource) error {
	var all, pictures, text []string
	byName := &yaml.Node{Kind: yaml.MappingNode}
	for _, r := range resources {
		stem := title(r.Def.Name)
		all = append(all, stem)
		switch c := r.Def.Content; {
		case c != nil && c.Picture:
			pictures = append(pictures, stem)
		case c != nil:
			text = append(text, stem)
		}
		byName.Content = append(byName.Content, plain("!!str", stem), blockMap(
			"Name", plain("!!str", r.Def.Name),
			"Projected", list(store.IndexAttributes(r.Def))))
	}
	v["app.Resources"] = list(all)
	v["app.Resources generating pictures"] = list(pictures)
	v["app.Resources generating text"] = list(text)
	v["app.Resources by name"] = byName

	var common *dynamodb.CreateTableInput
	for _, r := range resources {
		in := store.Schema(r.Def)
		if err := projectFromMap(&in, store.IndexAttributes(r.Def)); err != nil {
			return fmt.Errorf("store.Schema(%s): %w", r.Def.Name, err)
		}
		if common == nil {
			common = &in
			continue
		}
		if !reflect.DeepEqual(in, *common) {
			return fmt.Errorf("store.Schema(%s) differs from store.Schema(%s) beyond what its indexes project: "+
				"template.yaml's one table for every resource cannot declare it", r.Def.Name, resources[0].Def.Name)
		}
	}
	if common != nil {
		schema(v, "store.Schema", *common)
	}
	return nil
}

// projectFromMap replaces in in the attributes its INCLUDE indexes project,
// which must be projected, with the mapping's name for them (findInMap
// reads it back), so that every resource's schema reads the same.
func projectFromMap(in *dynamodb.CreateTableInput, projected []string) error {
	for i, x := range in.GlobalSecondaryIndexes {
		if x.Projection.ProjectionType != types.ProjectionTypeInclude {
			continue
		}
		if !slices.Equal(x.Projection.NonKeyAttributes, projected) {
			return fmt.Errorf("index %s projects %v, not the list indexes' %v", *x.IndexName, x.Projection.NonKeyAttributes, projected)
		}
		p := *x.Projection
		p.NonKeyAttributes = []string{findInMap}
		in.GlobalSecondaryIndexes[i].Projection = &p
	}
	return nil
}

// findInMap stands in a schema for the projected attributes the mapping
// gives each table.
const findInMap = "!FindInMap " + perResourceMap + " Projected"

// projectedNode is how the template writes findInMap.
func projectedNode() *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Tag: "!FindInMap", Content: []*yaml.Node{
		plain("!!str", perResourceMap),
		{Kind: yaml.ScalarNode, Tag: "!Ref", Value: loopID},
		plain("!!str", "Projected"),
	}}
}
