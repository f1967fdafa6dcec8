package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/codec"
	"contentapi/shared/documents"
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
//   - codec: the work codec does in that operation, decoding its items
//     (codec.UnmarshalItem against attributevalue.UnmarshalMap into
//     documents.Document) and encoding its answer (codec.AppendJSON
//     against encoding/json with HTML left unescaped).
//
// (The access line written by hand was weighed here too: it saved less
// than 0.05, so slog's JSON handler writes it now; so were the event's
// conversion and the response writer, and the DynamoDB client trimmed by
// removing middlewares, which gave way to the adapter and the SDK's
// client as it comes under issue 40's rule.)
//
//	go test -run '^$' -bench StandIns -benchtime 20000x -count 5 ./shared/app
func BenchmarkStandIns(b *testing.B) {
	for _, o := range benchOps(b, benchKey(b)) {
		opName := o.name
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

// benchItem is the canned document as the SDK decodes it.
func benchItem(b *testing.B) store.Item {
	out, err := benchDynamoDB(b).GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(benchDocsTable),
		Key: store.Item{"account": &types.AttributeValueMemberS{Value: benchAccount}, "id": &types.AttributeValueMemberN{Value: strconv.Itoa(benchFirstID)}}})
	if err != nil || len(out.Item) == 0 {
		b.Fatalf("%v: no item", err)
	}
	return out.Item
}
