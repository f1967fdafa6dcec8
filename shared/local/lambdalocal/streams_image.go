package lambdalocal

import (
	"github.com/aws/aws-lambda-go/events"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// StreamImage is an item as a stream record shows it, for events built by hand
// (tests, the bench): the inverse of store.StreamItem.
func StreamImage(item map[string]ddbtypes.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if item == nil {
		return nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(item))
	for k, v := range item {
		out[k] = itemValue(v)
	}
	return out
}

func itemValue(v ddbtypes.AttributeValue) events.DynamoDBAttributeValue {
	switch x := v.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return events.NewStringAttribute(x.Value)
	case *ddbtypes.AttributeValueMemberN:
		return events.NewNumberAttribute(x.Value)
	case *ddbtypes.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(x.Value)
	case *ddbtypes.AttributeValueMemberB:
		return events.NewBinaryAttribute(x.Value)
	case *ddbtypes.AttributeValueMemberSS:
		return events.NewStringSetAttribute(x.Value)
	case *ddbtypes.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(x.Value)
	case *ddbtypes.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(x.Value)
	case *ddbtypes.AttributeValueMemberL:
		list := make([]events.DynamoDBAttributeValue, len(x.Value))
		for i, e := range x.Value {
			list[i] = itemValue(e)
		}
		return events.NewListAttribute(list)
	case *ddbtypes.AttributeValueMemberM:
		return events.NewMapAttribute(StreamImage(x.Value))
	}
	return events.NewNullAttribute()
}

// StreamInsert is the event a table's stream delivers for one new item.
func StreamInsert(table string, item map[string]ddbtypes.AttributeValue) events.DynamoDBEvent {
	return events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
		EventID: "1", EventName: "INSERT", EventSource: "aws:dynamodb", EventVersion: "1.1", AWSRegion: "us-east-1",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + table + "/stream/2026-01-01T00:00:00.000",
		Change:         events.DynamoDBStreamRecord{NewImage: StreamImage(item), SequenceNumber: "1", StreamViewType: "NEW_AND_OLD_IMAGES"},
	}}}
}
