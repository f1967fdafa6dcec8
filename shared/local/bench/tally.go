package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/store"
)

// Tallier measures what a delete costs after its request: the tally
// function taking the delete's stream record (the record as it was, and
// its tombstone) on the metered client, as its mapping delivers it.
type Tallier struct {
	Fn      app.TallyHandler
	DB      *dynamodb.Client // unmetered: reads the images
	Table   string
	Account string
	seq     int
	// Last is the event of the last delete measured.
	Last events.DynamoDBTimeWindowEvent
}

// image is the item at id, read as the stream would show it.
func (t *Tallier) image(id int64) (store.Item, error) {
	out, err := t.DB.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(t.Table), ConsistentRead: aws.Bool(true),
		Key: store.Item{"account": &types.AttributeValueMemberS{Value: t.Account}, "id": &types.AttributeValueMemberN{Value: strconv.FormatInt(id, 10)}},
	})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// Measure runs the delete of id (its request, in del) and then the tally
// of it, and returns what the tally cost.
func (t *Tallier) Measure(m *ddblocal.Meter, id int64, del func()) (ddblocal.MeteredTotals, error) {
	old, err := t.image(id)
	if err != nil {
		return ddblocal.MeteredTotals{}, err
	}
	del()
	tomb, err := t.image(id)
	if err != nil {
		return ddblocal.MeteredTotals{}, err
	}
	t.seq++
	ev := events.DynamoDBTimeWindowEvent{
		DynamoDBEvent: events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
			EventID: strconv.Itoa(t.seq), EventName: "MODIFY", EventSource: "aws:dynamodb",
			EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + t.Table + "/stream/bench",
			Change: events.DynamoDBStreamRecord{
				OldImage: lambdalocal.StreamImage(old), NewImage: lambdalocal.StreamImage(tomb),
				SequenceNumber:              fmt.Sprintf("%021d", t.seq),
				ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()},
			},
		}}},
		TimeWindowProperties: events.TimeWindowProperties{ShardID: "shardId-bench", State: map[string]string{}},
	}
	t.Last = ev
	var resp events.DynamoDBTimeWindowEventResponse
	calls := m.Measure(func() { resp, err = t.Fn(context.Background(), ev) })
	if err == nil && len(resp.BatchItemFailures) > 0 {
		err = fmt.Errorf("the tally reported %d failed", len(resp.BatchItemFailures))
	}
	return ddblocal.SumMetered(calls), err
}
