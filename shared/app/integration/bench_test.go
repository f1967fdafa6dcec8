package integration_test

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
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/documents"
	localstack "contentapi/shared/local/stack"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// The handler benchmarks time the whole Lambda entry point, event in,
// response out: auth (cached key), routing, parsing, the AWS SDK (request
// serialization, SigV4 signing, retry bookkeeping, response
// deserialization, CRC32 check), the store, rendering and the JSON answer.
// DynamoDB itself is cannedDynamoDB: an http.RoundTripper that answers
// from memory with bodies of realistic size, so no socket is involved and
// only our code and the SDK's are timed. cmd/bench counts their
// allocations (allocs_handler_get, allocs_handler_list) and takes their
// time from BenchmarkInterleaved, which runs the same calls against their
// SDK floor (ns_handler_get, ns_handler_list and the ratios).
//
//	go test -run '^$' -bench 'BenchmarkDocuments' -benchmem ./shared/app/integration

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
	keyItem, document, query, batch, lease, empty cannedBody
	keysTable                                     []byte
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
	case "PutItem":
		// benchKey stores its key.
		out = c.empty
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
		empty: newCannedBody(av{}),
	}
}

// benchDynamoDB is the functions' own client (app.NewDynamoDB, as in
// Lambda: credentials from the environment, the region's endpoint) with
// its HTTP going to cannedDynamoDB.
func benchDynamoDB(b *testing.B) *dynamodb.Client {
	b.Helper()
	setBenchCredentials(b)
	db, err := app.NewDynamoDB(context.Background(), app.Config{Region: "us-east-1"})
	if err != nil {
		b.Fatal(err)
	}
	return dynamodb.New(db.Options(), func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: newCannedDynamoDB()}
	})
}

// setBenchCredentials puts credentials in the environment, as Lambda does.
func setBenchCredentials(b *testing.B) {
	b.Setenv("AWS_ACCESS_KEY_ID", "ASIABENCHBENCHBENCH0")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "bench/secret/key/not/real/0000000000000")
	b.Setenv("AWS_SESSION_TOKEN", "IQoJb3JpZ2luX2VjEBenchBenchBench")
}

// benchFunction is the documents function's entry point as
// functions/documents builds it, configured as template.yaml deploys it
// (keyed key checksum, rate limit 600/min, 60 s key cache, idempotency
// table), on
// benchDynamoDB. The app logs one JSON access
// line per request, as in Lambda; here to /dev/null, so the logging is
// timed but not shown.
func benchFunction(b *testing.B) app.APIEntry {
	b.Helper()
	db := benchDynamoDB(b)
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { devNull.Close() })
	a := app.New(app.Config{
		KeyChecksum: benchChecksum(b),
		Region:      "us-east-1",
		// The voices' and the images' tables are named, as the documents'
		// function needs (a create may name a voice; the account's spend
		// ledger is in the images' table); a get or a list reads neither.
		Tables:             map[string]string{"DocumentsTable": benchDocsTable, "VoicesTable": "VoicesTable", "ImagesTable": "ImagesTable"},
		KeysTable:          benchKeysTable,
		RateLimitTable:     "RateLimitTable",
		IdempotencyTable:   "IdempotencyTable",
		AuthCacheTTL:       auth.DefaultCacheTTL,
		RateLimitPerMinute: 600,
		RequestTimeout:     8 * time.Second,
		AllowOrigin:        "*",
		LogLevel:           slog.LevelInfo,
		LogOutput:          devNull,
	}, db, localstack.Parts)
	fn, err := a.APIEntry("documents")
	if err != nil {
		b.Fatal(err)
	}
	return fn
}

// benchChecksum is a keyed checksum, as every deployed stack has (the
// template's KeyChecksumSecret): each request's key is checked with an
// HMAC before the cache is asked.
func benchChecksum(b *testing.B) auth.Checksum {
	c, err := auth.NewChecksum(strings.Repeat("bench-checksum-secret-", 3))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// benchKey is a key made with benchChecksum.
func benchKey(b *testing.B) string {
	key, _, err := auth.NewKeys(benchDynamoDB(b), benchKeysTable, benchChecksum(b)).
		Create(context.Background(), benchAccount, []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	return key
}

// benchEvent is what API Gateway HTTP API sends for a GET with key.
func benchEvent(key, path, query, routeKey string) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{
		// No accept-encoding: the ratios set the handler's work on a plain
		// answer against its SDK calls; the CPU gzip adds, make bench
		// measures apart (ns_gzip_list) and prices in its cost table.
		"accept":            "application/json",
		"authorization":     "Bearer " + key,
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
	benchHandler(b, benchEvent(benchKey(b), "/api/v1/documents/"+id, "", "GET /api/v1/documents/{id}"), `"id":`+id)
}

// BenchmarkDocumentsList: GET /api/v1/documents (page 1, per_page 10, id
// desc): one Query of ten index entries, one BatchGetItem of ten ~5.5 KB
// documents and the counter item.
func BenchmarkDocumentsList(b *testing.B) {
	benchHandler(b, benchEvent(benchKey(b), "/api/v1/documents", "", "GET /api/v1/documents"), `"total":6012`)
}

// The SDK benchmarks are the floor under the handler benchmarks: the bare
// SDK calls the handler makes, with the same inputs (recorded from the
// store itself) and the same canned answers, on a client built the way the
// SDK's documentation and the AWS samples build one (config.LoadDefaultConfig,
// dynamodb.NewFromConfig), not on the functions' own client: the ratio of a
// handler to its floor is then what the service adds to a plain SDK user's cost.

// BenchmarkSDKGetItem: the GetItem of BenchmarkDocumentsGet.
func BenchmarkSDKGetItem(b *testing.B) {
	db := sdkDefaultDynamoDB(b)
	calls := storeCalls(b, func(t *store.Table) error {
		_, err := t.Get(context.Background(), benchAccount, benchFirstID)
		return err
	})
	benchSDKCalls(b, db, calls)
}

// BenchmarkSDKListCalls: the Query and BatchGetItem of BenchmarkDocumentsList.
func BenchmarkSDKListCalls(b *testing.B) {
	db := sdkDefaultDynamoDB(b)
	q, err := documents.Resource.ParseList(records.Query{}, records.Cursors{})
	if err != nil {
		b.Fatal(err)
	}
	calls := storeCalls(b, func(t *store.Table) error {
		_, err := t.List(context.Background(), benchAccount, q)
		return err
	})
	benchSDKCalls(b, db, calls)
}

// BenchmarkInterleaved is where make bench's handler ratios come from:
// each handler against its SDK floor in one process, in alternating blocks
// of 200 handler calls and 200 repetitions of the bare SDK calls. It
// reports each side's mean time per call (ns/handler, ns/sdk; ns/op mixes
// the two) and their ratio (x). Both sides see the machine in the same
// state and each other's garbage collection, so a shared machine's drift
// cancels out: the ratio moves by a few hundredths from run to run, where
// the ratio of two benchmarks' fastest runs, taken moments apart, moved by
// a tenth. It is the central value under ordinary load, not a quiet
// moment's.
//
//	go test -run '^$' -bench Interleaved -benchtime 60000x ./shared/app/integration
func BenchmarkInterleaved(b *testing.B) {
	ctx := context.Background()
	for _, c := range benchOps(b, benchKey(b)) {
		b.Run(c.name, func(b *testing.B) {
			fn, db, sdkCalls := benchFunction(b), sdkDefaultDynamoDB(b), storeCalls(b, c.op)
			handler := func() {
				if resp, err := fn(ctx, c.ev); err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("%v, status %d: %.300s", err, resp.StatusCode, resp.Body)
				}
			}
			floor := func() {
				for _, call := range sdkCalls {
					if err := call(ctx, db); err != nil {
						b.Fatal(err)
					}
				}
			}
			const block = 200
			var spent [2]time.Duration
			var calls [2]int
			side, start := 0, time.Now()
			for i := 0; b.Loop(); i++ {
				if i%block == 0 && i > 0 {
					now := time.Now()
					spent[side] += now.Sub(start)
					side, start = 1-side, now
				}
				calls[side]++
				if side == 0 {
					handler()
				} else {
					floor()
				}
			}
			spent[side] += time.Since(start)
			if calls[1] > 0 {
				handlerNS, floorNS := float64(spent[0])/float64(calls[0]), float64(spent[1])/float64(calls[1])
				b.ReportMetric(handlerNS, "ns/handler")
				b.ReportMetric(floorNS, "ns/sdk")
				b.ReportMetric(handlerNS/floorNS, "x")
			}
		})
	}
}

// benchOp is an operation the handler benchmarks time: its event, the
// store call behind it, and the documents it reads.
type benchOp struct {
	name  string
	ev    events.APIGatewayV2HTTPRequest
	op    func(*store.Table) error
	items int
}

// benchOps are a get of one document and the default list, with key.
func benchOps(b *testing.B, key string) []benchOp {
	ctx := context.Background()
	q, err := documents.Resource.ParseList(records.Query{}, records.Cursors{})
	if err != nil {
		b.Fatal(err)
	}
	id := strconv.Itoa(benchFirstID)
	return []benchOp{
		{"get", benchEvent(key, "/api/v1/documents/"+id, "", "GET /api/v1/documents/{id}"), func(t *store.Table) error {
			_, err := t.Get(ctx, benchAccount, benchFirstID)
			return err
		}, 1},
		{"list", benchEvent(key, "/api/v1/documents", "", "GET /api/v1/documents"), func(t *store.Table) error {
			_, err := t.List(ctx, benchAccount, q)
			return err
		}, 10},
	}
}

func benchSDKCalls(b *testing.B, db store.DB, calls []func(context.Context, store.DB) error) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, call := range calls {
			if err := call(ctx, db); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// sdkDefaultDynamoDB is a DynamoDB client in the SDK's default
// configuration, credentials from the environment as in Lambda, its HTTP
// going to cannedDynamoDB.
func sdkDefaultDynamoDB(b *testing.B) *dynamodb.Client {
	b.Helper()
	setBenchCredentials(b)
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		// No shared files: a developer's profiles must not change the figure.
		config.WithSharedConfigFiles([]string{}), config.WithSharedCredentialsFiles([]string{}))
	if err != nil {
		b.Fatal(err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: newCannedDynamoDB()}
	})
}

// storeCalls runs op once on a documents table and returns the DynamoDB
// calls it made, as calls that repeat them with the same inputs.
func storeCalls(b *testing.B, op func(*store.Table) error) []func(context.Context, store.DB) error {
	b.Helper()
	rec := &recordingDB{DB: benchDynamoDB(b)}
	if err := op(store.New(rec, benchDocsTable, documents.Resource)); err != nil {
		b.Fatal(err)
	}
	if len(rec.calls) == 0 {
		b.Fatal("the store made no DynamoDB call")
	}
	return rec.calls
}

// recordingDB passes the store's calls on and records each as a call to
// repeat. Only the reads a get and a list make are recorded.
type recordingDB struct {
	store.DB
	calls []func(context.Context, store.DB) error
}

func (r *recordingDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r.calls = append(r.calls, func(ctx context.Context, db store.DB) error {
		out, err := db.GetItem(ctx, in)
		if err == nil && len(out.Item) == 0 {
			err = fmt.Errorf("GetItem: no item")
		}
		return err
	})
	return r.DB.GetItem(ctx, in, opts...)
}

func (r *recordingDB) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	r.calls = append(r.calls, func(ctx context.Context, db store.DB) error {
		out, err := db.Query(ctx, in)
		if err == nil && len(out.Items) == 0 {
			err = fmt.Errorf("Query: no items")
		}
		return err
	})
	return r.DB.Query(ctx, in, opts...)
}

func (r *recordingDB) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	r.calls = append(r.calls, func(ctx context.Context, db store.DB) error {
		out, err := db.BatchGetItem(ctx, in)
		if err == nil && len(out.Responses) == 0 {
			err = fmt.Errorf("BatchGetItem: no items")
		}
		return err
	})
	return r.DB.BatchGetItem(ctx, in, opts...)
}
