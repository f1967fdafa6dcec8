package sam

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func key(name string, kt types.KeyType) types.KeySchemaElement {
	return types.KeySchemaElement{AttributeName: aws.String(name), KeyType: kt}
}

func attr(name string, at types.ScalarAttributeType) types.AttributeDefinition {
	return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: at}
}

func TestTables(t *testing.T) {
	tmpl := mustParse(t, `
Parameters:
  Mode: {Type: String, Default: PAY_PER_REQUEST}
Resources:
  Provisioned:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: ignored-here
      AttributeDefinitions:
        - {AttributeName: pk, AttributeType: S}
        - {AttributeName: g, AttributeType: N}
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
      ProvisionedThroughput: {ReadCapacityUnits: '5', WriteCapacityUnits: 2}
      StreamSpecification: {StreamViewType: NEW_IMAGE}
      SSESpecification: {SSEEnabled: true}
      GlobalSecondaryIndexes:
        - IndexName: by_g
          KeySchema: [{AttributeName: g, KeyType: HASH}]
          Projection: {ProjectionType: KEYS_ONLY}
          ProvisionedThroughput: {ReadCapacityUnits: 1, WriteCapacityUnits: 1}
  OnDemand:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: !Ref Mode
      DeletionProtectionEnabled: true
      AttributeDefinitions:
        - {AttributeName: a, AttributeType: S}
        - {AttributeName: n, AttributeType: N}
        - {AttributeName: s, AttributeType: S}
      KeySchema:
        - {AttributeName: a, KeyType: HASH}
        - {AttributeName: n, KeyType: RANGE}
      LocalSecondaryIndexes:
        - IndexName: by_s
          KeySchema:
            - {AttributeName: a, KeyType: HASH}
            - {AttributeName: s, KeyType: RANGE}
          Projection: {ProjectionType: INCLUDE, NonKeyAttributes: [x, y]}
      TimeToLiveSpecification: {AttributeName: ttl, Enabled: 'true'}
  Disabled:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: k, AttributeType: B}]
      KeySchema: [{AttributeName: k, KeyType: HASH}]
      TimeToLiveSpecification: {AttributeName: ttl, Enabled: false}
`)
	got, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	want := []Table{
		{LogicalID: "Disabled", Input: &dynamodb.CreateTableInput{
			TableName:            aws.String("Disabled"),
			BillingMode:          types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{attr("k", types.ScalarAttributeTypeB)},
			KeySchema:            []types.KeySchemaElement{key("k", types.KeyTypeHash)},
		}},
		{LogicalID: "OnDemand", TTLAttribute: "ttl", Input: &dynamodb.CreateTableInput{
			TableName:   aws.String("OnDemand"),
			BillingMode: types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{
				attr("a", types.ScalarAttributeTypeS), attr("n", types.ScalarAttributeTypeN), attr("s", types.ScalarAttributeTypeS),
			},
			KeySchema: []types.KeySchemaElement{key("a", types.KeyTypeHash), key("n", types.KeyTypeRange)},
			LocalSecondaryIndexes: []types.LocalSecondaryIndex{{
				IndexName: aws.String("by_s"),
				KeySchema: []types.KeySchemaElement{key("a", types.KeyTypeHash), key("s", types.KeyTypeRange)},
				Projection: &types.Projection{
					ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"x", "y"},
				},
			}},
		}},
		{LogicalID: "Provisioned", Input: &dynamodb.CreateTableInput{
			TableName:            aws.String("Provisioned"),
			BillingMode:          types.BillingModeProvisioned,
			AttributeDefinitions: []types.AttributeDefinition{attr("pk", types.ScalarAttributeTypeS), attr("g", types.ScalarAttributeTypeN)},
			KeySchema:            []types.KeySchemaElement{key("pk", types.KeyTypeHash)},
			ProvisionedThroughput: &types.ProvisionedThroughput{
				ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(2),
			},
			StreamSpecification: &types.StreamSpecification{
				StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage,
			},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
				IndexName:  aws.String("by_g"),
				KeySchema:  []types.KeySchemaElement{key("g", types.KeyTypeHash)},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
				ProvisionedThroughput: &types.ProvisionedThroughput{
					ReadCapacityUnits: aws.Int64(1), WriteCapacityUnits: aws.Int64(1),
				},
			}},
		}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d tables, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("table %s:\n got %s\nwant %s", want[i].LogicalID, dump(got[i]), dump(want[i]))
		}
	}
}

func TestTablesRefusesUnresolvedIntrinsics(t *testing.T) {
	tmpl := mustParse(t, `
Resources:
  T:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: !If [Cond, PAY_PER_REQUEST, PROVISIONED]
      AttributeDefinitions: [{AttributeName: k, AttributeType: S}]
      KeySchema: [{AttributeName: k, KeyType: HASH}]
`)
	if _, err := tmpl.Tables(); err == nil || !strings.Contains(err.Error(), "table T") {
		t.Fatalf("Tables error = %v, want one naming table T", err)
	}
}

// dump shows a table with its pointers followed, which %+v does not.
func dump(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}
