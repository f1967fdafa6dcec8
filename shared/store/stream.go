package store

// A DynamoDB stream's records as Lambda delivers them (aws-lambda-go's
// events), read in the store's terms, for the functions the record tables'
// streams feed: the generator and the tally.

import (
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// StreamItem is a stream image as the store reads items: the stream's
// event types are aws-lambda-go's, the store's the SDK's.
func StreamItem(image map[string]events.DynamoDBAttributeValue) Item {
	if image == nil {
		return nil
	}
	item := make(Item, len(image))
	for k, v := range image {
		item[k] = streamValue(v)
	}
	return item
}

func streamValue(v events.DynamoDBAttributeValue) types.AttributeValue {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}
	case events.DataTypeList:
		list := v.List()
		out := make([]types.AttributeValue, len(list))
		for i, e := range list {
			out[i] = streamValue(e)
		}
		return &types.AttributeValueMemberL{Value: out}
	case events.DataTypeMap:
		return &types.AttributeValueMemberM{Value: StreamItem(v.Map())}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}

// StreamTable is the table of a stream's ARN:
// arn:aws:dynamodb:region:account:table/NAME/stream/LABEL.
func StreamTable(arn string) string {
	_, rest, ok := strings.Cut(arn, ":table/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}
