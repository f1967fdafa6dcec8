package generator_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/documents"
	"contentapi/shared/generator"
)

func genImage(status string) map[string]events.DynamoDBAttributeValue {
	return map[string]events.DynamoDBAttributeValue{
		"account": events.NewStringAttribute("acct"),
		"id":      events.NewNumberAttribute("7"),
		"generation": events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{
			"status":       events.NewStringAttribute(status),
			"attempt":      events.NewStringAttribute("attempt-1"),
			"requested_at": events.NewStringAttribute("2026-11-25T21:00:00Z"),
		}),
	}
}

func modify(table string, before, after map[string]events.DynamoDBAttributeValue) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{
		EventName:      "MODIFY",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + table + "/stream/2026-11-25T00:00:00.000",
		Change:         events.DynamoDBStreamRecord{OldImage: before, NewImage: after, SequenceNumber: "1"},
	}
}

// The stream's writes that end a generation are told, with their record
// and type; a claim or a finished record's edit is not; and a failure to
// tell reports the record, so the mapping delivers it again.
func TestStreamTellsOfGenerationsThatEnded(t *testing.T) {
	var mu sync.Mutex // the stream handles a batch's records at once
	var ends []generator.End
	fail := false
	s := &generator.Stream{
		Generator: &generator.Generator{Logger: slog.New(slog.DiscardHandler)},
		Targets:   map[string]generator.Target{"DocumentsTable": {Resource: "documents", Object: "document", Content: documents.Resource.Content}},
		Ended: func(_ context.Context, e generator.End) error {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return errors.New("queue unavailable")
			}
			ends = append(ends, e)
			return nil
		},
	}
	resp, err := s.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		modify("DocumentsTable", genImage("running"), genImage("done")),
		modify("DocumentsTable", genImage("pending"), genImage("failed")),
		modify("DocumentsTable", genImage("done"), genImage("done")),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%v %+v", err, resp)
	}
	slices.SortFunc(ends, func(a, b generator.End) int { return strings.Compare(a.Type, b.Type) })
	if len(ends) != 2 || ends[0].Type != "document.failed" || ends[1].Type != "document.generated" ||
		ends[1].Account != "acct" || ends[1].ID != 7 || ends[1].Table != "DocumentsTable" || ends[1].State.Attempt != "attempt-1" {
		t.Fatalf("ends %+v", ends)
	}
	fail = true
	resp, _ = s.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		modify("DocumentsTable", genImage("running"), genImage("done")),
	}})
	if len(resp.BatchItemFailures) != 1 {
		t.Errorf("an end not told was not reported: %+v", resp)
	}
}
