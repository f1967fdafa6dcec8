package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/auth"
)

// The handler benchmarks time the whole Lambda entry point, event in,
// response out: auth (cached key), routing, parsing, the AWS SDK (request
// serialization, SigV4 signing, retry bookkeeping, response
// deserialization, CRC32 check), the store, rendering and the JSON answer.
// DynamoDB itself is cannedDynamoDB: an http.RoundTripper that answers
// from memory with bodies of realistic size, so no socket is involved and
// only our code and the SDK's are timed. cmd/bench runs them and reports
// ns_handler_get, allocs_handler_get, ns_handler_list, allocs_handler_list.
//
//	go test -run '^$' -bench 'BenchmarkDocuments' -benchmem ./shared/app

const (
	benchDocsTable = "DocumentsTable"
	benchKeysTable = "ApiKeysTable"
	benchAccount   = "bench"
	// benchFirstID is the newest document's id: the list shows it and the
	// nine before it.
	benchFirstID = 9_990
)

// cannedDynamoDB answers GetItem (the key item for auth, else a document),
// Query (one page of ids from the by_id index) and BatchGetItem (the page's
// documents and the counter item) with fixed bodies, as DynamoDB sends
// them: JSON 1.0 with an X-Amz-Crc32 header.
type cannedDynamoDB struct {
	keyItem, document, query, batch, lease cannedBody
	keysTable                              []byte
}

type cannedBody struct {
	body []byte
	crc  string
}

func newCannedBody(v any) cannedBody {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return cannedBody{body: b, crc: strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10)}
}

func (c *cannedDynamoDB) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	var out cannedBody
	switch op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810."); op {
	case "GetItem":
		out = c.document
		if bytes.Contains(body, c.keysTable) {
			out = c.keyItem
		}
	case "Query":
		out = c.query
	case "BatchGetItem":
		out = c.batch
	case "UpdateItem":
		// The rate limiter's lease of a block of the key's minute.
		out = c.lease
	default:
		return nil, fmt.Errorf("cannedDynamoDB: no answer for %s", op)
	}
	return &http.Response{
		Status:     "200 OK",
		StatusCode: http.StatusOK,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{
			"Content-Type":     {"application/x-amz-json-1.0"},
			"Content-Length":   {strconv.Itoa(len(out.body))},
			"X-Amz-Crc32":      {out.crc},
			"X-Amzn-Requestid": {"KQ4UFJ1V1FV7FCHBGA7T9VTQ3FVV4KQNSO5AEMVJF66Q9ASUAAJG"},
		},
		ContentLength: int64(len(out.body)),
		Body:          io.NopCloser(bytes.NewReader(out.body)),
		Request:       r,
	}, nil
}

type av = map[string]any

func avS(v string) av { return av{"S": v} }
func avN(v int64) av  { return av{"N": strconv.FormatInt(v, 10)} }

// benchText is ~size bytes of varied prose, like a generated document.
func benchText(size int) string {
	words := strings.Fields(`our team built a fresh café menu for the summer season with crème brûlée
		croissants and local coffee every customer can enjoy while the city wakes up we share simple
		ideas that help small business owners grow their brand through honest stories clear goals and
		useful tools today tomorrow and every weekend the community discovers new places to explore`)
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[(i*7+i/len(words))%len(words)])
		if i%17 == 16 {
			b.WriteString(".")
		}
	}
	return b.String()
}

// benchDocument is a stored document as store.Create and a later update of
// its result leave it: ~5.5 KB, a ~5 KB result.
func benchDocument(id int64) av {
	result := benchText(5000)
	name := fmt.Sprintf("Blog post: café opening %d", id)
	return av{
		"account":     avS(benchAccount),
		"id":          avN(id),
		"id_key":      avN(1_000_000_000_000 + id),
		"name_key":    avS(fmt.Sprintf("blog post: cafe opening %d\x01%012d", id, id)),
		"name_fold":   avS(fmt.Sprintf("blog post: cafe opening %d", id)),
		"name":        avS(name),
		"prompt":      avS("Write a blog post about the opening of our café in Zürich for local residents, in a warm tone. " + benchText(200)),
		"creativity":  av{"N": "0.75"},
		"template_id": avN(1),
		"result":      avS(result),
		"words":       avN(int64(len(strings.Fields(result)))),
		"favorite":    av{"BOOL": id%5 == 0},
		"version":     avN(3),
		"created_at":  avS("2026-03-14T09:26:53.589793Z"),
		"updated_at":  avS("2026-03-14T09:31:07.000000Z"),
	}
}

func newCannedDynamoDB() *cannedDynamoDB {
	doc := benchDocument
	keyItem := av{
		"key_hash":   avS(strings.Repeat("ab", 32)),
		"key_id":     avS("key_0a1b2c3d4e5f"),
		"account":    avS(benchAccount),
		"scopes":     av{"SS": []string{"read", "write"}},
		"created_at": avS("2026-01-02T03:04:05.000000Z"),
	}
	var ids, page []any
	for id := int64(benchFirstID); id > benchFirstID-10; id-- {
		ids = append(ids, av{"id": avN(id)})
		page = append(page, doc(id))
	}
	page = append(page, av{"account": avS(benchAccount), "id": avN(0), "next_id": avN(benchFirstID),
		"count_1": avN(6_012), "count_4": avN(212), "count_9": avN(187)})
	return &cannedDynamoDB{
		keysTable: []byte(`"TableName":"` + benchKeysTable + `"`),
		keyItem:   newCannedBody(av{"Item": keyItem}),
		document:  newCannedBody(av{"Item": doc(benchFirstID)}),
		query: newCannedBody(av{"Count": 10, "ScannedCount": 10, "Items": ids,
			"LastEvaluatedKey": av{"account": avS(benchAccount), "id": avN(benchFirstID - 9), "id_key": avN(1_000_000_000_000 + benchFirstID - 9)}}),
		batch: newCannedBody(av{"Responses": av{benchDocsTable: page}, "UnprocessedKeys": av{}}),
		lease: newCannedBody(av{"Attributes": av{"used": avN(12)}}),
	}
}

// benchDynamoDB is the functions' own client (app.NewDynamoDB, as in
// Lambda: credentials from the environment, the region's endpoint) with
// its HTTP going to cannedDynamoDB.
func benchDynamoDB(b *testing.B) *dynamodb.Client {
	b.Helper()
	b.Setenv("AWS_ACCESS_KEY_ID", "ASIABENCHBENCHBENCH0")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "bench/secret/key/not/real/0000000000000")
	b.Setenv("AWS_SESSION_TOKEN", "IQoJb3JpZ2luX2VjEBenchBenchBench")
	db, err := app.NewDynamoDB(context.Background(), app.Config{Region: "us-east-1"})
	if err != nil {
		b.Fatal(err)
	}
	return dynamodb.New(db.Options(), func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: newCannedDynamoDB()}
	})
}

// benchFunction is the documents function's entry point as
// functions/documents builds it, configured as template.yaml deploys it
// (rate limit 600/min, 60 s key cache, idempotency table), on
// benchDynamoDB. The app logs one JSON access
// line per request, as in Lambda; here to /dev/null, so the logging is
// timed but not shown.
func benchFunction(b *testing.B) app.Function {
	b.Helper()
	db := benchDynamoDB(b)
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { devNull.Close() })
	a := app.New(app.Config{
		Region:             "us-east-1",
		Tables:             map[string]string{"DocumentsTable": benchDocsTable},
		KeysTable:          benchKeysTable,
		RateLimitTable:     "RateLimitTable",
		IdempotencyTable:   "IdempotencyTable",
		AuthCacheTTL:       auth.DefaultCacheTTL,
		RateLimitPerMinute: 600,
		RequestTimeout:     8 * time.Second,
		AllowOrigin:        "*",
		LogLevel:           slog.LevelInfo,
		LogOutput:          devNull,
	}, db)
	fn, err := a.Function("documents")
	if err != nil {
		b.Fatal(err)
	}
	return fn
}

// benchEvent is what API Gateway HTTP API sends for a GET.
func benchEvent(path, query, routeKey string) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{
		"accept":            "application/json",
		"accept-encoding":   "gzip, deflate, br",
		"authorization":     "Bearer " + auth.DemoKey,
		"content-length":    "0",
		"host":              "r3pmxmplak.execute-api.us-east-1.amazonaws.com",
		"user-agent":        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
		"x-amzn-trace-id":   "Root=1-6920a8ce-4b1c0e3b7d2a9f6e1c8b5a40",
		"x-forwarded-for":   "203.0.113.7",
		"x-forwarded-port":  "443",
		"x-forwarded-proto": "https",
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       routeKey,
		RawPath:        path,
		RawQueryString: query,
		Headers:        headers,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			AccountID:    "123456789012",
			APIID:        "r3pmxmplak",
			DomainName:   "r3pmxmplak.execute-api.us-east-1.amazonaws.com",
			DomainPrefix: "r3pmxmplak",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: "GET", Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7", UserAgent: headers["user-agent"],
			},
			RequestID: "S5fUv8gcNFRJa0l=",
			RouteKey:  routeKey,
			Stage:     "$default",
			Time:      "21/Nov/2025:15:48:30 +0000",
			TimeEpoch: 1763740110000,
		},
	}
	if query != "" {
		ev.QueryStringParameters = map[string]string{}
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			ev.QueryStringParameters[k] = v
		}
	}
	if i := strings.LastIndex(routeKey, "{id}"); i >= 0 {
		ev.PathParameters = map[string]string{"id": path[strings.LastIndex(path, "/")+1:]}
	}
	return ev
}

func benchHandler(b *testing.B, ev events.APIGatewayV2HTTPRequest, want string) {
	fn := benchFunction(b)
	ctx := context.Background()
	// The first call reads the key (then cached for a minute, as in a
	// warm function) and shows the answer is the real one.
	resp, err := fn(ctx, ev)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(resp.Body, want) {
		b.Fatalf("first call: %v, status %d: %.300s", err, resp.StatusCode, resp.Body)
	}
	b.SetBytes(int64(len(resp.Body)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := fn(ctx, ev)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%v, status %d: %.300s", err, resp.StatusCode, resp.Body)
		}
	}
}

// BenchmarkDocumentsGet: GET /api/v1/documents/{id}, one GetItem of a
// ~5.5 KB document.
func BenchmarkDocumentsGet(b *testing.B) {
	id := strconv.Itoa(benchFirstID)
	benchHandler(b, benchEvent("/api/v1/documents/"+id, "", "GET /api/v1/documents/{id}"), `"id":`+id)
}

// BenchmarkDocumentsList: GET /api/v1/documents (page 1, per_page 10, id
// desc): one Query of ten index entries, one BatchGetItem of ten ~5.5 KB
// documents and the counter item.
func BenchmarkDocumentsList(b *testing.B) {
	benchHandler(b, benchEvent("/api/v1/documents", "", "GET /api/v1/documents"), `"total":6012`)
}

// BenchmarkSDKGetItem is the floor under BenchmarkDocumentsGet: the AWS
// SDK's GetItem alone, on the same canned answer.
func BenchmarkSDKGetItem(b *testing.B) {
	db := benchDynamoDB(b)
	ctx := context.Background()
	in := &dynamodb.GetItemInput{
		TableName:      aws.String(benchDocsTable),
		Key:            map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: benchAccount}, "id": &types.AttributeValueMemberN{Value: "9990"}},
		ConsistentRead: aws.Bool(true),
	}
	b.ReportAllocs()
	for b.Loop() {
		out, err := db.GetItem(ctx, in)
		if err != nil || len(out.Item) == 0 {
			b.Fatal(err)
		}
	}
}
