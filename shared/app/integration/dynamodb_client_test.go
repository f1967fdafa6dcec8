package integration_test

import (
	"bytes"
	"context"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
)

// fakeDynamoDB answers every request from a list of statuses and bodies,
// and keeps the requests it was sent.
type fakeDynamoDB struct {
	answers  []fakeAnswer
	requests []*http.Request
}

type fakeAnswer struct {
	status int
	body   string
}

func (f *fakeDynamoDB) RoundTrip(r *http.Request) (*http.Response, error) {
	f.requests = append(f.requests, r)
	a := f.answers[min(len(f.requests), len(f.answers))-1]
	crc := crc32.ChecksumIEEE([]byte(a.body))
	h := http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amz-Crc32": {strconv.FormatUint(uint64(crc), 10)}}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(bytes.NewReader([]byte(a.body))),
		ContentLength: int64(len(a.body)), Request: r}, nil
}

func lambdaClient(t *testing.T, cfg app.Config, fake *fakeDynamoDB) *dynamodb.Client {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "ASIATESTTESTTESTTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test/secret/key/not/real/000000000000000")
	t.Setenv("AWS_SESSION_TOKEN", "IQoJb3JpZ2luX2VjETestToken")
	db, err := app.NewDynamoDB(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dynamodb.New(db.Options(), func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: fake} })
}

func getItem(db *dynamodb.Client) (*dynamodb.GetItemOutput, error) {
	return db.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String("DocumentsTable"),
		Key:       map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: "acme"}, "id": &types.AttributeValueMemberN{Value: "7"}},
	})
}

// The functions' client goes to the region's endpoint, or DynamoDB
// Local's, signs with the session token and retries what DynamoDB asks to
// be retried.
func TestDynamoDBClient(t *testing.T) {
	const item = `{"Item":{"id":{"N":"7"}}}`
	t.Run("signed, to the region", func(t *testing.T) {
		fake := &fakeDynamoDB{answers: []fakeAnswer{{status: 200, body: item}}}
		out, err := getItem(lambdaClient(t, app.Config{Region: "eu-west-1"}, fake))
		if err != nil || len(out.Item) != 1 {
			t.Fatalf("GetItem: %v %v", out, err)
		}
		r := fake.requests[0]
		if r.URL.String() != "https://dynamodb.eu-west-1.amazonaws.com/" {
			t.Errorf("sent to %s", r.URL)
		}
		if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=ASIATESTTESTTESTTEST/") ||
			!strings.Contains(auth, "/eu-west-1/dynamodb/aws4_request") || r.Header.Get("X-Amz-Security-Token") == "" {
			t.Errorf("not signed for eu-west-1 with the session: %q", auth)
		}
		if r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.GetItem" || r.Header.Get("Accept-Encoding") != "identity" {
			t.Errorf("headers: %v", r.Header)
		}
	})
	t.Run("DynamoDB Local", func(t *testing.T) {
		fake := &fakeDynamoDB{answers: []fakeAnswer{{status: 200, body: item}}}
		if _, err := getItem(lambdaClient(t, app.Config{Region: "us-east-1", DynamoDBEndpoint: "http://127.0.0.1:8000"}, fake)); err != nil {
			t.Fatal(err)
		}
		if u := fake.requests[0].URL.String(); u != "http://127.0.0.1:8000/" {
			t.Errorf("sent to %s", u)
		}
	})
	t.Run("throttling retried", func(t *testing.T) {
		throttled := `{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"slow down"}`
		fake := &fakeDynamoDB{answers: []fakeAnswer{{status: 400, body: throttled}, {status: 200, body: item}}}
		out, err := getItem(lambdaClient(t, app.Config{Region: "eu-west-1"}, fake))
		if err != nil || len(out.Item) != 1 || len(fake.requests) != 2 {
			t.Fatalf("after a throttle: %v, %d requests", err, len(fake.requests))
		}
	})
}

// The functions' client keeps the SDK's CRC32 check of every answer: a
// check that guards data is never switched off.
func TestDynamoDBClientChecksAnswers(t *testing.T) {
	db, err := app.NewDynamoDB(context.Background(), app.Config{Region: "eu-west-1", DynamoDBEndpoint: "http://127.0.0.1:8000"})
	if err != nil {
		t.Fatal(err)
	}
	if db.Options().DisableValidateResponseChecksum {
		t.Fatal("the functions' client does not check its answers' CRC32")
	}
}
