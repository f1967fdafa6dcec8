package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/codec"
	"contentapi/shared/documents"
	"contentapi/shared/httpapi"
	"contentapi/shared/store"
)

// BenchmarkStandIns weighs each of our stand-ins for a library's work
// against the library's own path, in one process: for each, blocks of
// 200 calls of our path, of the library's, and of the operation's SDK
// floor (the bare calls of BenchmarkInterleaved) in turn. It reports each
// side's mean time per call (ns/ours, ns/library, ns/sdk) and the saving,
// (library - ours) / sdk: what the stand-in takes off the handler's ratio
// to its floor. A stand-in stays only where that is at least 0.05.
//
//   - adapter: the whole function, our event-to-request and response
//     writer (request.go, response.go) against httpadapter.NewV2's
//     ProxyWithContext around the same handler.
//
//   - lambdasdk: the whole function on our DynamoDB client (lambdasdk.go:
//     the endpoint resolved once, middlewares removed by id) against the
//     same client without forLambda.
//
//   - codec: the work codec does in that operation, decoding its items
//     (codec.UnmarshalItem against attributevalue.UnmarshalMap into
//     documents.Document) and encoding its answer (codec.AppendJSON
//     against encoding/json with HTML left unescaped).
//
// (The access line written by hand was weighed here too: it saved less
// than 0.05, so slog's JSON handler writes it now.)
//
//	go test -run '^$' -bench StandIns -benchtime 20000x -count 5 ./shared/app
func BenchmarkStandIns(b *testing.B) {
	ctx := context.Background()
	for _, o := range benchOps(b, benchKey(b)) {
		opName := o.name
		call := func(fn app.APIEntry) func() {
			return func() {
				if resp, err := fn(ctx, o.ev); err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("%v, status %d: %.300s", err, resp.StatusCode, resp.Body)
				}
			}
		}
		b.Run("adapter/"+opName, func(b *testing.B) {
			a := benchApp(b, benchDynamoDB(b))
			fn, err := a.APIEntry("documents")
			if err != nil {
				b.Fatal(err)
			}
			h, err := a.Handler("documents")
			if err != nil {
				b.Fatal(err)
			}
			adapter := httpadapter.NewV2(h)
			library := func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
				return adapter.ProxyWithContext(httpapi.WithGatewayRequestID(ctx, ev.RequestContext.RequestID), ev)
			}
			weigh(b, call(fn), call(library), floorOf(b, o.op))
		})
		b.Run("lambdasdk/"+opName, func(b *testing.B) {
			ours, err := benchApp(b, benchDynamoDB(b)).APIEntry("documents")
			if err != nil {
				b.Fatal(err)
			}
			library, err := benchApp(b, defaultOptionsDynamoDB(b)).APIEntry("documents")
			if err != nil {
				b.Fatal(err)
			}
			weigh(b, call(ours), call(library), floorOf(b, o.op))
		})
		b.Run("codec/"+opName, func(b *testing.B) {
			item := benchItem(b)
			var doc documents.Document
			answer := func(decode func(store.Item, any) error, encode func(any) []byte) func() {
				return func() {
					page := make([]any, 0, o.items)
					for range o.items {
						if err := decode(item, &doc); err != nil {
							b.Fatal(err)
						}
						page = append(page, doc)
					}
					var body any = page
					if o.items == 1 {
						body = page[0]
					}
					encode(map[string]any{"data": body, "status": 200})
				}
			}
			buf := make([]byte, 0, 64<<10)
			ours := answer(codec.UnmarshalItem, func(v any) []byte {
				buf, _ = codec.AppendJSON(buf[:0], v)
				return buf
			})
			var out bytes.Buffer
			enc := json.NewEncoder(&out)
			enc.SetEscapeHTML(false)
			library := answer(func(item store.Item, v any) error { return attributevalue.UnmarshalMap(item, v) }, func(v any) []byte {
				out.Reset()
				_ = enc.Encode(v)
				return out.Bytes()
			})
			weigh(b, ours, library, floorOf(b, o.op))
		})
	}
}

// weigh runs ours, library and floor in turn in blocks of 200 calls and
// reports their means and the saving in units of the floor.
func weigh(b *testing.B, ours, library, floor func()) {
	const block = 200
	sides := []func(){ours, library, floor}
	var spent [3]time.Duration
	var calls [3]int
	side, start := 0, time.Now()
	for i := 0; b.Loop(); i++ {
		if i%block == 0 && i > 0 {
			now := time.Now()
			spent[side] += now.Sub(start)
			side, start = (side+1)%3, now
		}
		calls[side]++
		sides[side]()
	}
	spent[side] += time.Since(start)
	if calls[2] == 0 {
		return
	}
	var ns [3]float64
	for i := range ns {
		ns[i] = float64(spent[i]) / float64(calls[i])
	}
	b.ReportMetric(ns[0], "ns/ours")
	b.ReportMetric(ns[1], "ns/library")
	b.ReportMetric(ns[2], "ns/sdk")
	b.ReportMetric((ns[1]-ns[0])/ns[2], "saving")
}

// floorOf is the bare SDK calls of op, on a client in the SDK's default
// configuration, as BenchmarkInterleaved's floor.
func floorOf(b *testing.B, op func(*store.Table) error) func() {
	ctx := context.Background()
	db, calls := sdkDefaultDynamoDB(b), storeCalls(b, op)
	return func() {
		for _, call := range calls {
			if err := call(ctx, db); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchApp is benchFunction's app on db.
func benchApp(b *testing.B, db *dynamodb.Client) *app.App {
	b.Helper()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { devNull.Close() })
	return app.New(app.Config{
		KeyChecksum: benchChecksum(b), Region: "us-east-1",
		Tables:    map[string]string{"DocumentsTable": benchDocsTable},
		KeysTable: benchKeysTable, RateLimitTable: "RateLimitTable", IdempotencyTable: "IdempotencyTable",
		AuthCacheTTL: auth.DefaultCacheTTL, RateLimitPerMinute: 600, RequestTimeout: 8 * time.Second,
		AllowOrigin: "*", LogLevel: slog.LevelInfo, LogOutput: devNull,
	}, db)
}

// defaultOptionsDynamoDB is app.NewDynamoDB's client without forLambda:
// the same credentials and retryer, every middleware the SDK
// puts in, its endpoint resolved per call.
func defaultOptionsDynamoDB(b *testing.B) *dynamodb.Client {
	setBenchCredentials(b)
	return dynamodb.New(dynamodb.Options{
		Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"),
			os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")),
		HTTPClient: &http.Client{Transport: newCannedDynamoDB()},
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.MaxBackoff = 500 * time.Millisecond
		}),
	})
}

// benchItem is the canned document as the SDK decodes it.
func benchItem(b *testing.B) store.Item {
	out, err := benchDynamoDB(b).GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(benchDocsTable),
		Key: store.Item{"account": &types.AttributeValueMemberS{Value: benchAccount}, "id": &types.AttributeValueMemberN{Value: strconv.Itoa(benchFirstID)}}})
	if err != nil || len(out.Item) == 0 {
		b.Fatalf("%v: no item", err)
	}
	return out.Item
}
