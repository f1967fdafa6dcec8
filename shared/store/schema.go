package store

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/records"
)

// Schema is res's table as DynamoDB makes it, but for its name and its
// settings: the key, the key attributes' types and the global indexes.
// template.yaml's resource tables say the same: make generate writes them
// from here (cmd/listgen), and the local tables are made from the template.
//
// A record is found by its account and id. The list indexes order an
// account's records by id_key and by name_key and carry IndexAttributes.
// IndexUnsettled is sparse, only the counters that may have an intent open,
// and keys only: a write that leaves unsettled as it is writes no entry.
// Global indexes, not local ones: a local index caps each account at 10 GB
// in one partition. The vector index (vectors.go) holds the records'
// siblings, which carry their embeddings.
func Schema(res *records.Resource) dynamodb.CreateTableInput {
	list := &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: IndexAttributes(res)}
	index := func(name, sortKey string, p *types.Projection) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{IndexName: &name, KeySchema: keySchema(AttrAccount, sortKey), Projection: p}
	}
	attrs := []types.AttributeDefinition{
		attribute(AttrAccount, types.ScalarAttributeTypeS),
		attribute(AttrID, types.ScalarAttributeTypeN),
		attribute(AttrIDKey, types.ScalarAttributeTypeN),
		attribute(AttrNameKey, types.ScalarAttributeTypeS),
		attribute(AttrUnsettled, types.ScalarAttributeTypeN),
	}
	for i := range MatchSlots {
		attrs = append(attrs, attribute(AttrMatch(i), types.ScalarAttributeTypeS))
	}
	return dynamodb.CreateTableInput{
		AttributeDefinitions: attrs,
		KeySchema:            keySchema(AttrAccount, AttrID),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			index(IndexByID, AttrIDKey, list),
			index(IndexByName, AttrNameKey, list),
			index(IndexUnsettled, AttrUnsettled, &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}),
		},
		VectorIndexes: []types.VectorIndex{vectorIndex()},
	}
}

func attribute(name string, t types.ScalarAttributeType) types.AttributeDefinition {
	return types.AttributeDefinition{AttributeName: &name, AttributeType: t}
}

// keySchema is a key schema: the partition key, then the sort key.
func keySchema(partition, sort string) []types.KeySchemaElement {
	return []types.KeySchemaElement{
		{AttributeName: &partition, KeyType: types.KeyTypeHash},
		{AttributeName: &sort, KeyType: types.KeyTypeRange},
	}
}
