package sam

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TableType is the CloudFormation type of a DynamoDB table.
const TableType = "AWS::DynamoDB::Table"

// Table is a DynamoDB table of the template, as the API calls that create
// it. Settings DynamoDB Local has no use for (encryption, point-in-time
// recovery, deletion protection, tags) are left out.
type Table struct {
	LogicalID string
	// Input creates the table. Its TableName is the logical ID; callers
	// that need other names set their own on a copy.
	Input *dynamodb.CreateTableInput
	// TTLAttribute is the time-to-live attribute, "" when TTL is off.
	// CreateTable cannot set it: it takes a separate UpdateTimeToLive.
	TTLAttribute string
}

// cfnTable mirrors the AWS::DynamoDB::Table properties Tables reads. Their
// names are the DynamoDB API's, so encoding/json matches them without tags.
type cfnTable struct {
	BillingMode             string
	AttributeDefinitions    []struct{ AttributeName, AttributeType string }
	KeySchema               []cfnKey
	LocalSecondaryIndexes   []cfnIndex
	GlobalSecondaryIndexes  []cfnIndex
	ProvisionedThroughput   *cfnThroughput
	StreamSpecification     *struct{ StreamViewType string }
	TimeToLiveSpecification *struct {
		AttributeName string
		Enabled       flexBool
	}
	VectorIndexes []cfnVectorIndex
}

// cfnVectorIndex is AWS::DynamoDB::Table's VectorIndex, which names its
// members as the API's VectorIndex does.
type cfnVectorIndex struct {
	IndexName        string
	VectorAttribute  struct{ AttributeName string }
	Dimensions       flexInt
	DistanceFunction string
	SearchSchema     []struct{ AttributeName, SearchSchemaElementType string }
	Projection       struct {
		ProjectionType   string
		NonKeyAttributes []string
	}
}

type cfnKey struct{ AttributeName, KeyType string }

type cfnIndex struct {
	IndexName  string
	KeySchema  []cfnKey
	Projection struct {
		ProjectionType   string
		NonKeyAttributes []string
	}
	ProvisionedThroughput *cfnThroughput
}

type cfnThroughput struct{ ReadCapacityUnits, WriteCapacityUnits flexInt }

// flexBool and flexInt accept CloudFormation's habit of writing booleans
// and numbers as strings ("true", "5"), which a parameter default also is.
type flexBool bool

func (b *flexBool) UnmarshalJSON(d []byte) error {
	var s string
	if json.Unmarshal(d, &s) == nil {
		v, err := strconv.ParseBool(s)
		*b = flexBool(v)
		return err
	}
	return json.Unmarshal(d, (*bool)(b))
}

type flexInt int64

func (n *flexInt) UnmarshalJSON(d []byte) error {
	var s string
	if json.Unmarshal(d, &s) == nil {
		v, err := strconv.ParseInt(s, 10, 64)
		*n = flexInt(v)
		return err
	}
	return json.Unmarshal(d, (*int64)(n))
}

// Tables returns the template's DynamoDB tables, sorted by logical ID. A
// parameter reference resolves to the parameter's default; any other
// intrinsic in a property Tables reads is an error.
func (t *Template) Tables() ([]Table, error) {
	var tables []Table
	for _, id := range t.ResourcesOfType(TableType) {
		tbl, err := t.table(id)
		if err != nil {
			return nil, fmt.Errorf("sam: table %s: %w", id, err)
		}
		tables = append(tables, tbl)
	}
	return tables, nil
}

func (t *Template) table(id string) (Table, error) {
	// A JSON round trip moves the generic YAML values into the typed
	// mirror; an intrinsic left where a string belongs fails to decode and
	// is reported instead of becoming a table with a wrong schema.
	b, err := json.Marshal(t.ResolveParameters(t.Resources[id].Properties))
	if err != nil {
		return Table{}, err
	}
	var c cfnTable
	if err := json.Unmarshal(b, &c); err != nil {
		return Table{}, err
	}
	if len(c.KeySchema) == 0 {
		return Table{}, fmt.Errorf("no KeySchema")
	}
	in := &dynamodb.CreateTableInput{
		TableName: aws.String(id),
		KeySchema: keySchema(c.KeySchema),
	}
	for _, a := range c.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(a.AttributeName),
			AttributeType: types.ScalarAttributeType(a.AttributeType),
		})
	}
	if c.BillingMode == "" {
		c.BillingMode = string(types.BillingModeProvisioned) // CloudFormation's default
	}
	in.BillingMode = types.BillingMode(c.BillingMode)
	in.ProvisionedThroughput = c.ProvisionedThroughput.sdk()
	for _, x := range c.LocalSecondaryIndexes {
		in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, types.LocalSecondaryIndex{
			IndexName:  aws.String(x.IndexName),
			KeySchema:  keySchema(x.KeySchema),
			Projection: x.projection(),
		})
	}
	for _, x := range c.GlobalSecondaryIndexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:             aws.String(x.IndexName),
			KeySchema:             keySchema(x.KeySchema),
			Projection:            x.projection(),
			ProvisionedThroughput: x.ProvisionedThroughput.sdk(),
		})
	}
	for _, x := range c.VectorIndexes {
		v := types.VectorIndex{
			IndexName:        aws.String(x.IndexName),
			VectorAttribute:  &types.VectorAttributeDefinition{AttributeName: aws.String(x.VectorAttribute.AttributeName)},
			Dimensions:       aws.Int64(int64(x.Dimensions)),
			DistanceFunction: types.VectorDistanceFunction(x.DistanceFunction),
			Projection:       &types.Projection{ProjectionType: types.ProjectionType(x.Projection.ProjectionType), NonKeyAttributes: x.Projection.NonKeyAttributes},
		}
		for _, e := range x.SearchSchema {
			v.SearchSchema = append(v.SearchSchema, types.SearchSchemaElement{
				AttributeName: aws.String(e.AttributeName), SearchSchemaElementType: types.SearchSchemaElementType(e.SearchSchemaElementType),
			})
		}
		in.VectorIndexes = append(in.VectorIndexes, v)
	}
	if c.StreamSpecification != nil {
		in.StreamSpecification = &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewType(c.StreamSpecification.StreamViewType),
		}
	}
	tbl := Table{LogicalID: id, Input: in}
	if ttl := c.TimeToLiveSpecification; ttl != nil && bool(ttl.Enabled) {
		tbl.TTLAttribute = ttl.AttributeName
	}
	return tbl, nil
}

func keySchema(ks []cfnKey) []types.KeySchemaElement {
	out := make([]types.KeySchemaElement, 0, len(ks))
	for _, k := range ks {
		out = append(out, types.KeySchemaElement{
			AttributeName: aws.String(k.AttributeName),
			KeyType:       types.KeyType(k.KeyType),
		})
	}
	return out
}

func (x cfnIndex) projection() *types.Projection {
	return &types.Projection{
		ProjectionType:   types.ProjectionType(x.Projection.ProjectionType),
		NonKeyAttributes: x.Projection.NonKeyAttributes,
	}
}

func (p *cfnThroughput) sdk() *types.ProvisionedThroughput {
	if p == nil {
		return nil
	}
	return &types.ProvisionedThroughput{
		ReadCapacityUnits:  aws.Int64(int64(p.ReadCapacityUnits)),
		WriteCapacityUnits: aws.Int64(int64(p.WriteCapacityUnits)),
	}
}
