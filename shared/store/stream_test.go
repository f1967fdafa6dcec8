package store_test

import (
	"testing"

	"contentapi/shared/store"
)

func TestStreamTable(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:dynamodb:us-east-1:123456789012:table/contentapi-ImagesTable-1X2Y/stream/2026-11-21T16:48:30.000": "contentapi-ImagesTable-1X2Y",
		"arn:aws:dynamodb:ddblocal:000000000000:table/DocumentsTable/stream/2026-11-21T16:48:30.000":               "DocumentsTable",
		"arn:aws:sqs:us-east-1:123456789012:queue":                                                                 "",
	} {
		if got := store.StreamTable(arn); got != want {
			t.Errorf("StreamTable(%s) = %q, want %q", arn, got, want)
		}
	}
}
