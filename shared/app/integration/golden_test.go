package integration_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden/answers.txt from this run")

// goldenPath holds every answer TestGoldenAnswers makes, byte for byte as
// the functions hand them to API Gateway.
var goldenPath = filepath.Join("testdata", "golden", "answers.txt")

// goldenCase is one request: through the local gateway (method, path,
// header, body) as a client sends it, or, with event set, an event handed
// to a function's entry point as it is.
type goldenCase struct {
	name         string
	method, path string
	key          string // "write", "read" or "" for none
	header       map[string]string
	body         string
	// event, when set, is given to function as it is: what API Gateway
	// never sends but an entry point must still answer.
	event    func(ev *events.APIGatewayV2HTTPRequest)
	function string
}

// The answers of every operation, errors included, are what they were:
// the response events the entry points return, status, headers, cookies
// and body, byte for byte; and so are the items the requests leave in the
// tables (testdata/golden/items.txt), each of which reads into its
// resource's type and back through attributevalue unchanged, its key and
// index keys of the types the table declares. A change to an answer or an
// item is a change to the contract or the stored data: if it is meant,
// rerun with -update-golden and read the diff.
//
// Only what differs from run to run is masked: a presigned link's date and
// signature, and a webhook endpoint's secret, shown once at random.
func TestGoldenAnswers(t *testing.T) {
	fixed := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	var hooks *webhooksQueue
	s := newGenStack(t, genOptions{noStream: true, configure: func(cfg *app.Config) {
		cfg.Clock = func() time.Time { return fixed }
		cfg.Generation.Wait = 10 * time.Second
		hooks = withWebhooks(t)(cfg)
	}})
	_ = hooks
	fns, err := s.app.APIEntries()
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		answered []events.APIGatewayV2HTTPResponse
	)
	recorded := map[string]app.APIEntry{}
	for name, fn := range fns {
		recorded[name] = func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			resp, err := fn(ctx, ev)
			mu.Lock()
			answered = append(answered, resp)
			mu.Unlock()
			return resp, err
		}
	}
	g, err := lambdalocal.NewGateway(loadTemplate(t), recorded, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for fn := range g.Timeouts {
		g.Timeouts[fn] = time.Minute
	}
	g.Now = func() time.Time { return fixed }
	requests := 0
	g.RequestID = func() string {
		requests++
		return fmt.Sprintf("golden-%03d", requests)
	}
	keys := map[string]string{"write": s.writeKey, "read": s.readKey}

	var out strings.Builder
	webhook := "" // the registered endpoint's id
	for _, c := range goldenCases() {
		c.path = strings.ReplaceAll(c.path, "{webhook}", webhook)
		mu.Lock()
		answered = nil
		mu.Unlock()
		if c.event != nil {
			ev := g.Event(httptest.NewRequest(c.method, "https://api.example.com"+c.path, nil), nil, lambdalocal.Match{}, "golden-event")
			ev.Headers["authorization"] = "Bearer " + keys["write"]
			c.event(&ev)
			if _, err := recorded[c.function](context.Background(), ev); err != nil {
				t.Errorf("%s: the entry point failed: %v", c.name, err)
			}
		} else {
			r := httptest.NewRequest(c.method, "https://api.example.com"+c.path, strings.NewReader(c.body))
			r.Header = http.Header{}
			if k := keys[c.key]; k != "" {
				r.Header.Set("Authorization", "Bearer "+k)
			}
			for k, v := range c.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
		}
		mu.Lock()
		got := slices.Clone(answered)
		mu.Unlock()
		if len(got) != 1 {
			t.Errorf("%s: %d invocations, want 1", c.name, len(got))
			continue
		}
		if id := webhookID.FindString(got[0].Body); c.method == "POST" && c.path == "/api/v1/webhooks" {
			webhook = id
		}
		fmt.Fprintf(&out, "=== %s: %s %s\n%s\n", c.name, c.method, c.path, formatAnswer(withoutOpenAPI(got[0])))
	}
	checkGolden(t, goldenPath, maskGolden(out.String(), fixed))
	s.tally.Drain() // the deletes' counts taken down, as the tally function does
	items := storedItems(t, s.stack)
	checkGolden(t, goldenItemsPath, maskGolden(items, fixed))
}

// checkGolden holds text to the golden file at path, or with
// -update-golden writes it there.
func checkGolden(t *testing.T, path, text string) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (make it with go test ./shared/app/integration -run TestGoldenAnswers -update-golden)", err)
	}
	if text != string(want) {
		t.Errorf("%s differs; if the change is meant, rerun with -update-golden and read the diff:\n%s",
			path, firstDifference(string(want), text))
	}
}

// goldenItemsPath holds the items the golden requests leave in the
// resources' tables: what a deployed table holds, attribute by attribute,
// each with its DynamoDB type.
var goldenItemsPath = filepath.Join("testdata", "golden", "items.txt")

// storedItems writes every item of the resources' tables, in key order,
// each attribute with its type; and checks, of each record, that its key
// and index keys have the types the table declares, and that it reads into
// its resource's type and back through attributevalue unchanged.
func storedItems(t *testing.T, s *stack) string {
	t.Helper()
	var b strings.Builder
	for _, res := range app.Resources {
		table := s.env.Tables[res.Table()]
		declared := map[string]types.ScalarAttributeType{}
		for _, a := range store.Schema(res.Def).AttributeDefinitions {
			declared[*a.AttributeName] = a.AttributeType
		}
		record, err := res.Def.Render.Render(noItem{}, records.View{})
		if err != nil {
			t.Fatalf("%s: rendering an empty item: %v", res.Def.Name, err)
		}
		recordType := reflect.TypeOf(record)
		out, err := s.env.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: &table, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		items := out.Items
		slices.SortFunc(items, func(x, y map[string]types.AttributeValue) int {
			return strings.Compare(itemKey(x), itemKey(y))
		})
		fmt.Fprintf(&b, "=== %s\n", res.Table())
		for _, item := range items {
			b.WriteString(formatItem(item))
			if _, record := item[store.AttrIDKey]; !record {
				continue
			}
			for name, typ := range declared {
				if av, ok := item[name]; ok && attributeType(av) != string(typ) {
					t.Errorf("%s %s: %s is %s, the table declares %s", res.Table(), itemKey(item), name, attributeType(av), typ)
				}
			}
			roundTrip(t, res.Table(), item, reflect.New(recordType).Interface())
		}
	}
	return b.String()
}

// noItem is a stored record with nothing in it: what its resource's
// Render makes of it shows the record's type.
type noItem struct{}

func (noItem) Decode(any) error { return nil }

// roundTrip reads item into record through attributevalue and writes it
// back: every attribute the type names comes back as the item held it,
// type and value.
func roundTrip(t *testing.T, table string, item map[string]types.AttributeValue, record any) {
	t.Helper()
	if err := attributevalue.UnmarshalMap(item, record); err != nil {
		t.Errorf("%s %s: %v", table, itemKey(item), err)
		return
	}
	back, err := attributevalue.MarshalMap(record)
	if err != nil {
		t.Errorf("%s %s: %v", table, itemKey(item), err)
		return
	}
	for name, av := range back {
		held, ok := item[name]
		if !ok {
			if _, null := av.(*types.AttributeValueMemberNULL); null {
				continue // a field the record lacks reads as its zero value
			}
			t.Errorf("%s %s: %s comes back as %s but the item has none", table, itemKey(item), name, formatValue(av))
			continue
		}
		if formatValue(held) != formatValue(av) {
			t.Errorf("%s %s: %s is %s, comes back as %s", table, itemKey(item), name, formatValue(held), formatValue(av))
		}
	}
}

func itemKey(item map[string]types.AttributeValue) string {
	return formatValue(item[store.AttrAccount]) + " " + formatValue(item[store.AttrID])
}

// formatItem writes an item's attributes in name order, one a line.
func formatItem(item map[string]types.AttributeValue) string {
	names := make([]string, 0, len(item))
	for name := range item {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("-\n")
	for _, name := range names {
		fmt.Fprintf(&b, "  %s: %s\n", name, formatValue(item[name]))
	}
	return b.String()
}

// formatValue writes an attribute value with its type: N "12", S "x",
// M {a: S "b"}, ...
func formatValue(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return fmt.Sprintf("S %q", v.Value)
	case *types.AttributeValueMemberN:
		return fmt.Sprintf("N %q", v.Value)
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprintf("BOOL %t", v.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberB:
		return fmt.Sprintf("B %x", v.Value)
	case *types.AttributeValueMemberSS:
		return fmt.Sprintf("SS %q", v.Value)
	case *types.AttributeValueMemberNS:
		return fmt.Sprintf("NS %q", v.Value)
	case *types.AttributeValueMemberBS:
		return fmt.Sprintf("BS %x", v.Value)
	case *types.AttributeValueMemberL:
		parts := make([]string, len(v.Value))
		for i, e := range v.Value {
			parts[i] = formatValue(e)
		}
		return "L [" + strings.Join(parts, ", ") + "]"
	case *types.AttributeValueMemberM:
		names := make([]string, 0, len(v.Value))
		for name := range v.Value {
			names = append(names, name)
		}
		slices.Sort(names)
		parts := make([]string, len(names))
		for i, name := range names {
			parts[i] = name + ": " + formatValue(v.Value[name])
		}
		return "M {" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprintf("%T", av)
}

// attributeType is an attribute's scalar type as a table declares it
// ("S", "N", "B"), or its kind for any other.
func attributeType(av types.AttributeValue) string {
	kind, _, _ := strings.Cut(formatValue(av), " ")
	return kind
}

// withoutOpenAPI is resp with the OpenAPI document, which changes with
// every change to openapi.yaml and is served as it is embedded, named
// instead of written out, and its tag with it.
func withoutOpenAPI(resp events.APIGatewayV2HTTPResponse) events.APIGatewayV2HTTPResponse {
	doc := app.OpenAPIDocument()
	if resp.Body != string(doc) {
		return resp
	}
	sum := sha256.Sum256(doc)
	if resp.Headers["Etag"] == `"`+hex.EncodeToString(sum[:16])+`"` {
		resp.Headers["Etag"] = "(the document's)"
	}
	resp.Body = "(app.OpenAPIDocument())"
	return resp
}

// formatAnswer writes a response event: its status, whether the body is
// base64, its headers in order, its cookies, and its body.
func formatAnswer(resp events.APIGatewayV2HTTPResponse) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %d, base64 %t\n", resp.StatusCode, resp.IsBase64Encoded)
	names := make([]string, 0, len(resp.Headers))
	for k := range resp.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s: %s\n", k, resp.Headers[k])
	}
	fmt.Fprintf(&b, "cookies %q\n", resp.Cookies)
	body := resp.Body
	if resp.IsBase64Encoded {
		// A gzip-encoded answer: what it decodes to (the encoder is
		// compress.go's, and its bytes vary with what is masked).
		raw, err := base64.StdEncoding.DecodeString(body)
		if err == nil {
			var zr *gzip.Reader
			if zr, err = gzip.NewReader(bytes.NewReader(raw)); err == nil {
				raw, err = io.ReadAll(zr)
			}
		}
		if err != nil {
			fmt.Fprintf(&b, "body not gzip (%v) %q\n", err, body)
			return b.String()
		}
		fmt.Fprintf(&b, "body gzip of %q\n", raw)
		return b.String()
	}
	fmt.Fprintf(&b, "body %q\n", body)
	return b.String()
}

// webhookID is a webhook endpoint's id in an answer, for the requests
// that follow its registration.
var webhookID = regexp.MustCompile(`wh_[A-Za-z0-9]+`)

// goldenMasks are what changes from run to run: presigned links' dates,
// credentials and signatures (the local S3's clock is the machine's), the
// local S3's port, and the tally's mark of how far it read a stream shard
// (its sequence number and time).
var goldenMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`X-Amz-(Date|Credential|Signature)=[^&"\\\s]+`), "X-Amz-$1=MASKED"},
	{regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/`), "http://127.0.0.1:PORT/"},
	{regexp.MustCompile(`(sq_\S+: S )"[0-9]+ [0-9]+"`), `${1}"MASKED"`},
}

// randomTokens are values made at random: each distinct one becomes
// its kind and a number, in order of appearance, so that where two
// places hold the same token the golden text still shows it. Operation
// tokens, generation attempts and pictures' file names (32 hex digits),
// webhook endpoints' ids and secrets, deliveries' ids, and the tally's
// marks, named by a hash of the stream shard.
var randomTokens = []struct {
	re   *regexp.Regexp
	kind string
}{
	{regexp.MustCompile(`[0-9a-z]{6}-[0-9a-z]{10}`), "op"},
	{regexp.MustCompile(`\b[0-9a-f]{32}\b`), "hex"},
	{regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`), "whsec_"},
	{regexp.MustCompile(`wh_[A-Za-z0-9]+`), "wh_"},
	{regexp.MustCompile(`msg_[A-Za-z0-9_-]{22}`), "msg_"},
	// Exactly 8 characters of base64url: a mark ending in "-" has no
	// word boundary before the ":" after it.
	{regexp.MustCompile(`sq_[A-Za-z0-9_-]{8}`), "sq_"},
}

// machineTime is a time written from the machine's clock, not the
// configured one: when a generation finished, when an endpoint was made.
var machineTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

func maskGolden(s string, fixed time.Time) string {
	for _, m := range goldenMasks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	for _, r := range randomTokens {
		seen := map[string]string{}
		s = r.re.ReplaceAllStringFunc(s, func(tok string) string {
			if _, ok := seen[tok]; !ok {
				seen[tok] = fmt.Sprintf("%s%d", r.kind, len(seen)+1)
			}
			return seen[tok]
		})
	}
	return machineTime.ReplaceAllStringFunc(s, func(t string) string {
		if parsed, err := time.Parse(time.RFC3339Nano, t); err == nil && parsed.Equal(fixed) {
			return t
		}
		return "MACHINE-TIME"
	})
}

// firstDifference shows where two golden texts part: the case and the
// line of each.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	head := ""
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if strings.HasPrefix(wl, "=== ") {
			head = wl
		}
		if wl != gl {
			return fmt.Sprintf("%s\nline %d\nwant %.2000s\ngot  %.2000s", head, i+1, wl, gl)
		}
	}
	return ""
}

func goldenCases() []goldenCase {
	json := map[string]string{"Content-Type": "application/json"}
	form := map[string]string{"Content-Type": formType}
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	multipart := "--b\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nMultipart note\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\nA note sent as multipart\r\n--b--\r\n"
	return []goldenCase{
		// Documents: each operation, and the shapes of its input.
		{name: "create a document from JSON", method: "POST", path: "/api/v1/documents", key: "write", header: json,
			body: `{"name":"Launch <notes> & \"plans\"","prompt":"Announce the launch","template_id":1,"creativity":0.5}`},
		{name: "create a document from a form", method: "POST", path: "/api/v1/documents", key: "write", header: form,
			body: "name=Caf%C3%A9+menu&prompt=Write+the+menu"},
		{name: "create a document from multipart", method: "POST", path: "/api/v1/documents", key: "write",
			header: map[string]string{"Content-Type": "multipart/form-data; boundary=b"}, body: multipart},
		{name: "create a document without waiting", method: "POST", path: "/api/v1/documents", key: "write",
			header: with(form, "Prefer", "respond-async"), body: "name=Later&prompt=Write+it+later"},
		{name: "create a document under an idempotency key", method: "POST", path: "/api/v1/documents", key: "write",
			header: with(form, "Idempotency-Key", "order-1"), body: "name=Once&prompt=Only+once"},
		{name: "the same create replayed", method: "POST", path: "/api/v1/documents", key: "write",
			header: with(form, "Idempotency-Key", "order-1"), body: "name=Once&prompt=Only+once"},
		{name: "get a document", method: "GET", path: "/api/v1/documents/1", key: "read"},
		{name: "get a document gzip-encoded", method: "GET", path: "/api/v1/documents/1", key: "read",
			header: map[string]string{"Accept-Encoding": "gzip"}},
		{name: "get a document the client holds", method: "GET", path: "/api/v1/documents/2", key: "read",
			header: map[string]string{"If-None-Match": "*"}},
		{name: "list documents", method: "GET", path: "/api/v1/documents", key: "read"},
		{name: "list documents gzip-encoded", method: "GET", path: "/api/v1/documents", key: "read",
			header: map[string]string{"Accept-Encoding": "gzip"}},
		{name: "list documents, filtered and sorted", method: "GET", path: "/api/v1/documents?template_id=1&sort=desc&per_page=10", key: "read"},
		{name: "list documents, page 2", method: "GET", path: "/api/v1/documents?per_page=10&page=2", key: "read"},
		{name: "search documents by name", method: "GET", path: "/api/v1/documents?search=caf%C3%A9", key: "read"},
		{name: "search documents by result", method: "GET", path: "/api/v1/documents?search=launch&search_by=result", key: "read"},
		{name: "list documents, gzip among other encodings", method: "GET", path: "/api/v1/documents?per_page=10", key: "read",
			header: map[string]string{"Accept-Encoding": "br;q=1.0, gzip;q=0.5, *;q=0"}},
		{name: "a path with escapes", method: "GET", path: "/api/v1/documents/%31", key: "read"},
		{name: "list documents, HEAD", method: "HEAD", path: "/api/v1/documents", key: "read"},
		{name: "update a document", method: "PUT", path: "/api/v1/documents/2", key: "write", header: form, body: "name=Caf%C3%A9+menu%2C+winter"},
		{name: "update a document's result", method: "PATCH", path: "/api/v1/documents/2", key: "write", header: json,
			body: `{"result":"A new text\nwith \u2028 and <b>tags</b> and \"quotes\" and \t tabs"}`},
		{name: "regenerate a document", method: "POST", path: "/api/v1/documents/3/regenerate", key: "write", header: form,
			body: "prompt=Write+it+again"},
		{name: "delete a document", method: "DELETE", path: "/api/v1/documents/4", key: "write"},
		{name: "get a deleted document", method: "GET", path: "/api/v1/documents/4", key: "read"},

		// Images.
		{name: "create an image", method: "POST", path: "/api/v1/images", key: "write", header: form,
			body: "name=Sunset&description=A+sunset&resolution=256x256&style=anime&filter=sepia"},
		{name: "create an image from JSON", method: "POST", path: "/api/v1/images", key: "write", header: json,
			body: `{"name":"Night","description":"A night sky","resolution":"512x512","medium":"ink"}`},
		{name: "get an image", method: "GET", path: "/api/v1/images/1", key: "read"},
		{name: "list images", method: "GET", path: "/api/v1/images", key: "read"},
		{name: "list images, filtered", method: "GET", path: "/api/v1/images?style=anime&favorite=false", key: "read"},
		{name: "update an image", method: "PATCH", path: "/api/v1/images/2", key: "write", header: json, body: `{"favorite":true}`},
		{name: "delete an image", method: "DELETE", path: "/api/v1/images/2", key: "write"},

		// The first function's other routes.
		{name: "usage", method: "GET", path: "/api/v1/usage", key: "read"},
		{name: "the OpenAPI document", method: "GET", path: "/api/v1/openapi.json"},
		{name: "register a webhook", method: "POST", path: "/api/v1/webhooks", key: "write", header: json,
			body: `{"url":"https://hooks.example.com/in","events":"document.generated,image.failed","description":"CMS"}`},
		{name: "list webhooks", method: "GET", path: "/api/v1/webhooks", key: "read"},
		{name: "get a webhook", method: "GET", path: "/api/v1/webhooks/{webhook}", key: "read"},
		{name: "test a webhook", method: "POST", path: "/api/v1/webhooks/{webhook}/test", key: "write"},
		{name: "a webhook's deliveries", method: "GET", path: "/api/v1/webhooks/{webhook}/deliveries", key: "read"},
		{name: "delete a webhook", method: "DELETE", path: "/api/v1/webhooks/{webhook}", key: "write"},
		{name: "unknown path", method: "GET", path: "/api/v1/nothing", key: "read"},
		{name: "preflight", method: "OPTIONS", path: "/api/v1/documents",
			header: map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST"}},

		// Errors.
		{name: "no key", method: "GET", path: "/api/v1/documents"},
		{name: "a key that is no key", method: "GET", path: "/api/v1/documents", header: map[string]string{"Authorization": "Bearer nope"}},
		{name: "a read key writing", method: "POST", path: "/api/v1/documents", key: "read", header: form, body: "name=a&prompt=b"},
		{name: "no such document", method: "GET", path: "/api/v1/documents/999", key: "read"},
		{name: "an id that is no id", method: "GET", path: "/api/v1/documents/abc", key: "read"},
		{name: "a method the path lacks", method: "PUT", path: "/api/v1/documents", key: "write", header: form, body: "name=a"},
		{name: "fields missing", method: "POST", path: "/api/v1/documents", key: "write", header: form, body: "name="},
		{name: "fields invalid", method: "POST", path: "/api/v1/images", key: "write", header: json,
			body: `{"name":["a"],"description":{"x":1},"resolution":512,"style":"none"}`},
		{name: "malformed JSON", method: "POST", path: "/api/v1/documents", key: "write", header: json, body: `{"name":"a",`},
		{name: "JSON that is no object", method: "POST", path: "/api/v1/documents", key: "write", header: json, body: `[]`},
		{name: "invalid UTF-8 in JSON", method: "POST", path: "/api/v1/documents", key: "write", header: json,
			body: "{\"name\":\"caf\xe9\",\"prompt\":\"p\"}"},
		{name: "a lone surrogate in JSON", method: "POST", path: "/api/v1/documents", key: "write", header: json,
			body: `{"name":"a\ud800b","prompt":"p"}`},
		{name: "duplicate JSON keys", method: "POST", path: "/api/v1/documents", key: "write", header: json,
			body: `{"name":"a","name":"b","prompt":"p"}`},
		{name: "invalid UTF-8 in a form", method: "POST", path: "/api/v1/documents", key: "write", header: form, body: "name=a%ffb&prompt=p"},
		{name: "unsupported media type", method: "POST", path: "/api/v1/documents", key: "write",
			header: map[string]string{"Content-Type": "text/plain"}, body: "name=a"},
		{name: "a bad query", method: "GET", path: "/api/v1/documents?page=abc&sort=sideways", key: "read"},
		{name: "a bad escape in the query", method: "GET", path: "/api/v1/documents?search=%zz", key: "read"},
		{name: "a cursor that is no cursor", method: "GET", path: "/api/v1/documents?cursor=abc", key: "read"},
		{name: "an idempotency key with a comma", method: "POST", path: "/api/v1/documents", key: "write",
			header: with(form, "Idempotency-Key", "a,b"), body: "name=a&prompt=b"},

		// Events an entry point gets only from a caller other than API
		// Gateway (sam local invoke, a test): still a JSON answer.
		{name: "an event whose body is not base64", method: "POST", path: "/api/v1/documents", function: "DocumentsFunction",
			event: func(ev *events.APIGatewayV2HTTPRequest) {
				ev.Headers["content-type"] = formType
				ev.Body, ev.IsBase64Encoded = "name=a&prompt=b!!", true
			}},
		{name: "an event with an unparsable path", method: "GET", path: "/api/v1/documents", function: "DocumentsFunction",
			event: func(ev *events.APIGatewayV2HTTPRequest) { ev.RawPath = "/api/v1/%zz" }},
		{name: "an event with no method", method: "GET", path: "/api/v1/documents", function: "DocumentsFunction",
			event: func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.HTTP.Method = "" }},
		{name: "an event with the query only as parameters", method: "GET", path: "/api/v1/documents", function: "DocumentsFunction",
			event: func(ev *events.APIGatewayV2HTTPRequest) {
				ev.RawQueryString = ""
				ev.QueryStringParameters = map[string]string{"per_page": "10"}
			}},
		{name: "an event with cookies and a header not in lower case", method: "GET", path: "/api/v1/documents/1", function: "DocumentsFunction",
			event: func(ev *events.APIGatewayV2HTTPRequest) {
				ev.Cookies = []string{"a=1", "b=2"}
				ev.Headers["Accept"] = "application/json" // not in lower case, as HTTP API would have it
			}},
	}
}
