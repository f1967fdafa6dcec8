package integration_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/doccheck"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// The runbook's Logs Insights queries (docs/operations.md, Finding what
// happened) find what they are for in the lines the deployed stack writes
// at its default levels: the functions' (a 503, a 500, a 404, a failed
// generation, a quota refusal, stream records neither the generator nor
// the tally could handle, their metrics, and Lambda's report at
// SystemLogLevel INFO) and the HTTP API's access lines, as the local
// gateway writes the template's format. Each query's filter keeps some of
// the lines of the groups it is run over, and those have every field it
// shows or counts.
func TestRunbookQueriesFindTheirLines(t *testing.T) {
	tmpl := loadTemplate(t)
	var level slog.Level
	if err := level.UnmarshalText([]byte(fmt.Sprint(tmpl.Parameters["LogLevel"].Default))); err != nil {
		t.Fatal(err)
	}
	functions, access := &lambdalocal.LogBuffer{}, &lambdalocal.LogBuffer{}
	logTo := func(c *app.Config) { c.LogOutput, c.LogLevel = functions, level }

	// The API behind the gateway, on a DynamoDB that fails and refuses.
	s, proxy := faultyStack(t, func(c *app.Config) { logTo(c); c.RequestTimeout = 2 * time.Second })
	fns, err := s.app.APIEntries()
	if err != nil {
		t.Fatal(err)
	}
	gw, err := lambdalocal.NewGateway(tmpl, fns, slog.New(slog.NewTextHandler(io.Discard, nil)), access)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	id := num(createDocument(t, s, "Runbook")["id"])
	path := fmt.Sprintf("/api/v1/documents/%d", id)
	expect(t, s.get("/api/v1/documents/999999"), 404)
	for fault, status := range map[ddblocal.Fault]int{ddblocal.FailCall: 503, ddblocal.RefuseCall: 500} {
		proxy.Down(fault)
		expect(t, s.get(path), status)
		proxy.Up()
	}
	// A delete the tally cannot take off the count.
	read := func() store.Item {
		out, err := s.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(s.env.Tables["DocumentsTable"]),
			ConsistentRead: aws.Bool(true), Key: store.Item{"account": stringAV("acme"), "id": numberAV(id)}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	old := read()
	expect(t, s.do(request{method: "DELETE", path: path, key: s.writeKey}), 200)
	tally, err := s.app.Tally()
	if err != nil {
		t.Fatal(err)
	}
	proxy.Down(ddblocal.FailCall)
	_, _ = tally(context.Background(), events.DynamoDBTimeWindowEvent{
		DynamoDBEvent: events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{EventID: "1", EventName: "MODIFY", EventSource: "aws:dynamodb",
			EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + s.env.Tables["DocumentsTable"] + "/stream/2026-11-21T00:00:00.000",
			Change: events.DynamoDBStreamRecord{OldImage: streamImage(t, old), NewImage: streamImage(t, read()), SequenceNumber: "100",
				ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()}}}}},
		TimeWindowProperties: events.TimeWindowProperties{ShardID: "shardId-runbook", State: map[string]string{}},
	})
	proxy.Up()

	// Generation: a model that keeps failing, a month's images spent, and
	// a deleted image's picture that S3 cannot take back.
	g := newGenStack(t, genOptions{configure: func(c *app.Config) {
		logTo(c)
		c.QuotaDefaults = quota.Limits{quota.Images: quota.Max(1)}
	}})
	r := g.form("POST", "/api/v1/documents", "name", "broken", "prompt", "Broken [standin:error]")
	expect(t, r, 201)
	g.settled(t, fmt.Sprintf("/api/v1/documents/%v", r.data()["id"]))
	r = g.form("POST", "/api/v1/images", "name", "x", "description", "A lighthouse", "resolution", "256x256")
	expect(t, r, 201)
	expect(t, g.form("POST", "/api/v1/images", "name", "y", "description", "A lighthouse", "resolution", "256x256"), 429)
	image := g.settled(t, fmt.Sprintf("/api/v1/images/%v", r.data()["id"]))
	item, err := g.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(g.env.Tables["ImagesTable"]),
		ConsistentRead: aws.Bool(true), Key: store.Item{"account": stringAV("acme"), "id": numberAV(num(image["id"]))}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.parts.S3.Close(); err != nil {
		t.Fatal(err)
	}
	_, _ = g.stream(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{EventID: "2", EventName: "REMOVE",
		EventSource: "aws:dynamodb", EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + g.env.Tables["ImagesTable"] + "/stream/2026-11-21T00:00:00.000",
		Change: events.DynamoDBStreamRecord{OldImage: streamImage(t, item.Item), SequenceNumber: "200"}}}})

	// Lambda's own report, which SystemLogLevel INFO keeps.
	platform, err := lambdalocal.PlatformLines(lambdalocal.LogFormatJSON, "INFO")
	if err != nil {
		t.Fatal(err)
	}
	fnLines := append(lines(functions.String()), platform...)
	accessLines := lines(access.String())

	section := section(t, docPage(t, "docs/operations.md"), "## Finding what happened: logs", "\n## ")
	queries := doccheck.InsightsQueries(section)
	if len(queries) < 6 {
		t.Fatalf("%d queries in the runbook's section: %+v", len(queries), queries)
	}
	failedID := ""
	for _, l := range accessLines {
		if strings.Contains(l, `"status":"503"`) {
			failedID = strings.Split(strings.SplitAfter(l, `"requestId":"`)[1], `"`)[0]
		}
	}
	for _, in := range queries {
		// A client's request id: the 503's.
		text := strings.ReplaceAll(in.Text, `"ID"`, `"`+failedID+`"`)
		q, err := doccheck.ParseQuery(text)
		if err != nil {
			t.Errorf("%s: %v", in.Text, err)
			continue
		}
		// The functions' groups share the lines here; the access log has
		// its own. A query that names no group may be run over any.
		byGroup := map[bool][]string{false: fnLines, true: accessLines}
		over := map[bool]bool{}
		for _, group := range in.Groups {
			if _, ok := tmpl.Resources[group]; !ok {
				t.Errorf("%s: over %s, which the template does not have", in.Text, group)
			}
			over[group == "HttpApiAccessLogs"] = true
		}
		if in.Groups == nil {
			over[false], over[true] = true, true
		}
		var searched []string
		for isAccess := range over {
			searched = append(searched, byGroup[isAccess]...)
		}
		var matched []string
		for _, l := range searched {
			if q.Matches([]byte(l)) {
				matched = append(matched, l)
			}
		}
		if len(matched) == 0 {
			t.Errorf("%s finds no line over %v", in.Text, in.Groups)
			continue
		}
		for _, field := range q.Reads {
			found := false
			for _, l := range matched {
				found = found || doccheck.Has([]byte(l), field)
			}
			if !found {
				t.Errorf("%s reads %s, which none of the %d lines it finds has", in.Text, field, len(matched))
			}
		}
	}
}

// lines are the non-empty lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = string(bytes.TrimSpace([]byte(l))); l != "" {
			out = append(out, l)
		}
	}
	return out
}
