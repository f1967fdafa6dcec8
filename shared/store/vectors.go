package store

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Where a record's vector lives.
//
// A record's embedding is not on its own item: 256 numbers are about 1 KB
// that every get, update and delete of the record would read or write
// again. It is on a sibling item in the record's partition, under the
// record's id negated (-id: ids are positive, the counter is 0), which
// carries the vector, the account and the values the lists filter on, and
// nothing the lists read: no list index has its keys (it has no id_key or
// name_key), and no stream filter of the generator or the tally matches it
// (it has no generation, result, id_key or gone_by). Only items with the
// vector attribute are in the vector index, so the records themselves are
// not.
//
// Every resource table has the same vector index, as template.yaml's one
// table declaration for every resource requires: what a list filters on
// is written into generic slots (AttrMatch(0) ... ), a resource's scope
// first, then its filters in their declared order, each as a string. A
// resource without embeddings (voices) leaves its index empty, which
// costs nothing.
const (
	// IndexByMeaning is the vector index of every resource table.
	IndexByMeaning = "by_meaning"
	// AttrEmbedding holds a sibling's vector: a list of numbers.
	AttrEmbedding = "embedding"
	// EmbeddingDimensions is the vectors' size. Amazon Titan Text
	// Embeddings V2 offers 256, 512 and 1,024; its makers give 256 about
	// 97% of 1,024's retrieval accuracy and 512 about 99%. 256 keeps the
	// sibling near 1 KB (a write of it is 2 WRU, at 512 it would be 3-4),
	// and vector search bytes, metered per byte examined and returned, at
	// a quarter of 1,024's: for finding one's own notes and pictures
	// again, the two points of accuracy are not worth twice the price of
	// every write and search. A change is a new index and every record
	// embedded again (docs/generation.md).
	EmbeddingDimensions = 256
	// MatchSlots is how many filter values a sibling can carry: the
	// largest scope-and-filters of a resource (images: five filters).
	MatchSlots = 6
)

// AttrMatch is the name of the i-th filter slot of a sibling item.
func AttrMatch(i int) string { return "match_" + strconv.Itoa(i) }

// vectorIndex is the vector index of every resource table: cosine
// distance over AttrEmbedding, searched within one account (its HASH: a
// search names the account, or DynamoDB refuses it), filtered in place by
// the match slots. It projects the keys alone: a search answers ids and
// scores, and the page's records are read as every list reads them.
func vectorIndex() types.VectorIndex {
	schema := []types.SearchSchemaElement{{AttributeName: aws.String(AttrAccount), SearchSchemaElementType: types.SearchSchemaElementTypeHash}}
	for i := range MatchSlots {
		schema = append(schema, types.SearchSchemaElement{AttributeName: aws.String(AttrMatch(i)), SearchSchemaElementType: types.SearchSchemaElementTypeInlineFilter})
	}
	return types.VectorIndex{
		IndexName:        aws.String(IndexByMeaning),
		VectorAttribute:  &types.VectorAttributeDefinition{AttributeName: aws.String(AttrEmbedding)},
		Dimensions:       aws.Int64(EmbeddingDimensions),
		DistanceFunction: types.VectorDistanceFunctionCosine,
		SearchSchema:     schema,
		Projection:       &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
	}
}
