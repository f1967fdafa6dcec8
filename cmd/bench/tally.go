package main

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
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/store"
)

// tallier measures what a delete costs after its request: the tally
// function taking the delete's stream record (the record as it was, and
// its tombstone) on the metered client, as its mapping delivers it.
type tallier struct {
	fn      app.TallyHandler
	db      *dynamodb.Client // unmetered: reads the images
	table   string
	account string
	seq     int
	// last is the event of the last delete measured.
	last events.DynamoDBTimeWindowEvent
}

// image is the item at id, read as the stream would show it.
func (t *tallier) image(id int64) (store.Item, error) {
	out, err := t.db.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(t.table), ConsistentRead: aws.Bool(true),
		Key: store.Item{"account": &types.AttributeValueMemberS{Value: t.account}, "id": &types.AttributeValueMemberN{Value: strconv.FormatInt(id, 10)}},
	})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// measure runs the delete of id (its request, in del) and then the tally
// of it, and returns what the tally cost.
func (t *tallier) measure(m *ddblocal.Meter, id int64, del func()) (ddblocal.MeteredTotals, error) {
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
			EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + t.table + "/stream/bench",
			Change: events.DynamoDBStreamRecord{
				OldImage: lambdalocal.StreamImage(old), NewImage: lambdalocal.StreamImage(tomb),
				SequenceNumber:              fmt.Sprintf("%021d", t.seq),
				ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()},
			},
		}}},
		TimeWindowProperties: events.TimeWindowProperties{ShardID: "shardId-bench", State: map[string]string{}},
	}
	t.last = ev
	var resp events.DynamoDBTimeWindowEventResponse
	calls := m.Measure(func() { resp, err = t.fn(context.Background(), ev) })
	if err == nil && len(resp.BatchItemFailures) > 0 {
		err = fmt.Errorf("the tally reported %d failed", len(resp.BatchItemFailures))
	}
	return ddblocal.SumMetered(calls), err
}

// measureTallyBuilt adds the tally function's bootstrap size and its cold
// start, taking the last delete measured again: the watermark has it, so
// each run is the tally's one conditional write finding it counted.
func measureTallyBuilt(ctx context.Context, b *bench.Board, builds *artifacts, tmpl *sam.Template, endpoint string,
	tables map[string]string, t *tallier) error {
	if err := addSize(ctx, b, builds, "bytes_bootstrap_tally", "tally-arm64"); err != nil {
		return err
	}
	if len(t.last.Records) == 0 {
		b.Missing("no delete was tallied", "ms_cold_start_tally")
		return nil
	}
	return coldStartStream(ctx, b, builds, tmpl, endpoint, tables, app.TallyFunction, "tally-amd64", "ms_cold_start_tally", t.last,
		func(r events.DynamoDBTimeWindowEventResponse) int { return len(r.BatchItemFailures) })
}
