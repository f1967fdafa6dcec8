package hookapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/app/queue"
	"contentapi/shared/auth"
	"contentapi/shared/hookapi"
	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
	"contentapi/shared/httpapi"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sqslocal"
	"contentapi/shared/webhook"
	"contentapi/shared/webhook/webhooktest"
)

type api struct {
	h http.Handler
}

func newAPI(t *testing.T) *api {
	env := ddblocal.NewTestEnv(t)
	sealer, _ := webhook.NewSealer(nil)
	st := &hookstore.Store{Client: env.Client, Table: env.Tables["WebhooksTable"], Sealer: sealer}
	q, err := sqslocal.Start(sqslocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	c := sqs.New(sqs.Options{Region: sqslocal.Region, BaseEndpoint: aws.String(q.URL()), Credentials: credentials.NewStaticCredentialsProvider("l", "l", "")})
	lanes := hooksender.Lanes{Queue: queue.SQS{Client: c}}
	for name, url := range map[string]*string{"fast": &lanes.Fast, "slow": &lanes.Slow} {
		out, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		*url = *out.QueueUrl
	}
	a := &hookapi.API{Store: st, Client: webhook.NewClient(webhook.Options{Resolver: webhooktest.Resolver{}}),
		Publisher: &hooksender.Publisher{Store: st, Lanes: lanes},
		Events:    webhook.Types("document", "image")}
	return &api{h: httpapi.NewMux(a.Routes())}
}

func (a *api) do(t *testing.T, account, method, path, body string) (int, map[string]any) {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	r = r.WithContext(httpapi.WithPrincipal(r.Context(), auth.Principal{Account: account, Scopes: []auth.Scope{auth.ScopeWrite}}))
	w := httptest.NewRecorder()
	a.h.ServeHTTP(w, r)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

func TestRegisterReadListTestDelete(t *testing.T) {
	a := newAPI(t)
	code, out := a.do(t, "acct", "POST", hookapi.Path, `{"url":"https://hooks.example.com/a","events":"image.generated, image.failed","description":"mine"}`)
	if code != 201 {
		t.Fatalf("%d %v", code, out)
	}
	data := out["data"].(map[string]any)
	id, _ := data["id"].(string)
	if !strings.HasPrefix(id, "wh_") || !strings.HasPrefix(data["secret"].(string), "whsec_") || data["enabled"] != true {
		t.Fatalf("created %v", data)
	}
	code, out = a.do(t, "acct", "GET", hookapi.Path+"/"+id, "")
	if code != 200 || out["data"].(map[string]any)["secret"] != nil {
		t.Errorf("read: %d %v (never the secret)", code, out)
	}
	if code, out := a.do(t, "acct", "GET", hookapi.Path, ""); code != 200 || len(out["data"].([]any)) != 1 {
		t.Errorf("list: %d %v", code, out)
	}
	if code, _ := a.do(t, "other", "GET", hookapi.Path+"/"+id, ""); code != 404 {
		t.Errorf("another account reads it: %d", code)
	}
	if code, _ := a.do(t, "acct", "POST", hookapi.Path+"/"+id+"/test", ""); code != 202 {
		t.Errorf("test: %d", code)
	}
	if code, out := a.do(t, "acct", "GET", hookapi.Path+"/"+id+"/deliveries", ""); code != 200 || len(out["data"].([]any)) != 1 {
		t.Errorf("deliveries after a test: %d %v", code, out)
	}
	if code, _ := a.do(t, "other", "DELETE", hookapi.Path+"/"+id, ""); code != 404 {
		t.Errorf("another account deletes it: %d", code)
	}
	if code, _ := a.do(t, "acct", "DELETE", hookapi.Path+"/"+id, ""); code != 200 {
		t.Errorf("delete: %d", code)
	}
	if code, _ := a.do(t, "acct", "GET", hookapi.Path+"/"+id, ""); code != 404 {
		t.Errorf("after delete: %d", code)
	}
}

// refuses posts each body, a registration refused with a 422 naming its
// field, and checks that none was stored.
func (a *api) refuses(t *testing.T, bodies map[string]string) {
	t.Helper()
	for body, field := range bodies {
		code, out := a.do(t, "acct", "POST", hookapi.Path, body)
		errs, _ := out["errors"].(map[string]any)
		if code != 422 || errs[field] == nil {
			t.Errorf("%.80s: %d %v, want 422 naming %s", body, code, out, field)
		}
	}
	if _, out := a.do(t, "acct", "GET", hookapi.Path, ""); len(out["data"].([]any)) != 0 {
		t.Errorf("a refused registration was stored: %v", out)
	}
}

// Each bad field is a 422 naming it, and nothing is registered.
func TestRegistrationErrorsNameTheirField(t *testing.T) {
	a := newAPI(t)
	a.refuses(t, map[string]string{
		`{}`:                                   "url",
		`{"url":"http://hooks.example.com/a"}`: "url",
		`{"url":"https://internal.example.com/a"}`:                                               "url",
		`{"url":"https://169.254.169.254/latest"}`:                                               "url",
		`{"url":"https://hooks.example.com/` + strings.Repeat("a", 2048) + `"}`:                  "url",
		`{"url":"https://hooks.example.com/a","events":"image.deleted"}`:                         "events",
		`{"url":"https://hooks.example.com/a","events":["image.deleted"]}`:                       "events",
		`{"url":"https://hooks.example.com/a","events":[]}`:                                      "events",
		`{"url":"https://hooks.example.com/a","events":["image.failed",7]}`:                      "events",
		`{"url":"https://hooks.example.com/a","description":"` + strings.Repeat("é", 257) + `"}`: "description",
		`{"url":"https://hooks.example.com/a","secret":"whsec_x"}`:                               "secret",
	})
	for range hookstore.MaxEndpoints {
		if code, out := a.do(t, "acct", "POST", hookapi.Path, `{"url":"https://hooks.example.com/a"}`); code != 201 {
			t.Fatalf("%d %v", code, out)
		}
	}
	code, out := a.do(t, "acct", "POST", hookapi.Path, `{"url":"https://hooks.example.com/a"}`)
	if errs, _ := out["errors"].(map[string]any); code != 422 || errs["url"] == nil {
		t.Errorf("the 11th: %d %v, want 422 naming url", code, out)
	}
}

// A registration's fields follow the rules every resource's fields do
// (records): control characters, non-string values and repeats are 422
// naming the field; text is trimmed, and blank text or null is not given.
func TestRegistrationFieldsFollowTheRecordsRules(t *testing.T) {
	a := newAPI(t)
	a.refuses(t, map[string]string{
		`{"url":"https://hooks.example.com/a","description":"line\u0000"}`:                   "description",
		`{"url":"https://hooks.example.com/a","description":"bell\u0007"}`:                   "description",
		`{"url":"https://hooks.example.com/a","description":7}`:                              "description",
		`{"url":"https://hooks.example.com/a","events":true}`:                                "events",
		`{"url":"https://hooks.example.com/a","events":"` + strings.Repeat(",", 1025) + `"}`: "events",
		`{"url":"https://hooks.example.com/a","url":"https://hooks.example.com/b"}`:          "url",
		`{"url":"   "}`: "url",
		`{"url":null}`:  "url",
		`{"url":"https://hooks.example.com/a","description":"` + strings.Repeat("é", 257) + ` "}`: "description",
		`{"url":"https://hooks.example.com/a\u001f"}`:                                             "url",
		`{"url":"https://hooks.example.com/a","description":"ok","description":"twice"}`:          "description",
	})

	code, out := a.do(t, "acct", "POST", hookapi.Path,
		`{"url":"  https://hooks.example.com/a\n","events":" image.failed ","description":"\tGallery  "}`)
	data, _ := out["data"].(map[string]any)
	if code != 201 || data["url"] != "https://hooks.example.com/a" || data["description"] != "Gallery" ||
		len(data["events"].([]any)) != 1 || data["events"].([]any)[0] != "image.failed" {
		t.Errorf("trimmed: %d %v, want the url, events and description trimmed", code, out)
	}
	code, out = a.do(t, "acct", "POST", hookapi.Path, `{"url":"https://hooks.example.com/a","events":"  ","description":null}`)
	data, _ = out["data"].(map[string]any)
	if code != 201 || data["description"] != "" || len(data["events"].([]any)) != len(webhook.Types("document", "image")) {
		t.Errorf("blank and null: %d %v, want not given (no description, every event)", code, out)
	}
}

// events takes a JSON array of types as well, as the answer shows them.
func TestRegistrationTakesEventsAsAnArray(t *testing.T) {
	a := newAPI(t)
	code, out := a.do(t, "acct", "POST", hookapi.Path, `{"url":"https://hooks.example.com/a","events":["image.failed"," image.generated","image.failed"]}`)
	data, _ := out["data"].(map[string]any)
	if got, _ := json.Marshal(data["events"]); code != 201 || string(got) != `["image.failed","image.generated"]` {
		t.Errorf("%d %v, want the two types once each", code, out)
	}
}

// The delivery log pages with page and per_page as a list does, newest
// first, beyond the latest 100: each delivery on one page only, the next
// link while older ones follow, and a page past the log's reach a 422.
func TestDeliveryLogPages(t *testing.T) {
	a := newAPI(t)
	_, out := a.do(t, "acct", "POST", hookapi.Path, `{"url":"https://hooks.example.com/a"}`)
	id := out["data"].(map[string]any)["id"].(string)
	for range 23 {
		if code, out := a.do(t, "acct", "POST", hookapi.Path+"/"+id+"/test", ""); code != 202 {
			t.Fatalf("test: %d %v", code, out)
		}
	}
	log := hookapi.Path + "/" + id + "/deliveries"
	if code, out := a.do(t, "acct", "GET", log, ""); code != 200 || len(out["data"].([]any)) != 23 || out["links"].(map[string]any)["next"] != nil {
		t.Fatalf("the first page by default: %d %v", code, out)
	}
	seen := map[string]bool{}
	for page, want := range []int{10, 10, 3, 0} {
		code, out := a.do(t, "acct", "GET", fmt.Sprintf("%s?per_page=10&page=%d", log, page+1), "")
		data, _ := out["data"].([]any)
		links, _ := out["links"].(map[string]any)
		if code != 200 || len(data) != want || (links["next"] != nil) != (page < 2) || (links["prev"] != nil) != (page > 0) {
			t.Fatalf("page %d: %d %v", page+1, code, out)
		}
		for _, d := range data {
			seen[d.(map[string]any)["id"].(string)] = true
		}
	}
	if len(seen) != 23 {
		t.Errorf("%d deliveries over the pages, want the 23 once each", len(seen))
	}
	for _, q := range []string{"per_page=7", "page=0", "page=x", "per_page=10&page=1001", "page=101"} {
		if code, out := a.do(t, "acct", "GET", log+"?"+q, ""); code != 422 {
			t.Errorf("%s: %d %v, want 422", q, code, out)
		}
	}
	if code, _ := a.do(t, "acct", "GET", log+"?per_page=10&page=1000", ""); code != 200 {
		t.Errorf("the last page in reach: %d", code)
	}
}

// PATCH changes an endpoint's url, events, description and enabled, each
// checked as at registration; enabling an endpoint the service disabled
// gives it a fresh start, and disabling says the account did it.
func TestUpdateAnEndpoint(t *testing.T) {
	a := newAPI(t)
	_, out := a.do(t, "acct", "POST", hookapi.Path, `{"url":"https://hooks.example.com/a","description":"old"}`)
	id := out["data"].(map[string]any)["id"].(string)
	item := hookapi.Path + "/" + id
	code, out := a.do(t, "acct", "PATCH", item, `{"url":"https://hooks.example.com/b","events":["image.failed"],"description":"new"}`)
	data, _ := out["data"].(map[string]any)
	if got, _ := json.Marshal(data["events"]); code != 200 || data["url"] != "https://hooks.example.com/b" || data["description"] != "new" || string(got) != `["image.failed"]` || data["enabled"] != true {
		t.Fatalf("update: %d %v", code, out)
	}
	code, out = a.do(t, "acct", "PATCH", item, `{"enabled":"off"}`)
	data, _ = out["data"].(map[string]any)
	if code != 200 || data["enabled"] != false || data["disabled_reason"] != hookstore.DisabledByAccount || data["url"] != "https://hooks.example.com/b" {
		t.Fatalf("disable: %d %v", code, out)
	}
	code, out = a.do(t, "acct", "PATCH", item, `{"enabled":true}`)
	data, _ = out["data"].(map[string]any)
	if code != 200 || data["enabled"] != true || data["disabled_reason"] != nil {
		t.Fatalf("enable: %d %v", code, out)
	}
	for body, field := range map[string]string{
		`{}`:                                   "url",
		`{"url":"http://hooks.example.com/a"}`: "url",
		`{"events":"image.deleted"}`:           "events",
		`{"events":[]}`:                        "events",
		`{"enabled":"maybe"}`:                  "enabled",
		`{"secret":"whsec_x"}`:                 "secret",
	} {
		code, out := a.do(t, "acct", "PATCH", item, body)
		if errs, _ := out["errors"].(map[string]any); code != 422 || errs[field] == nil {
			t.Errorf("%s: %d %v, want 422 naming %s", body, code, out, field)
		}
	}
	if _, out := a.do(t, "acct", "GET", item, ""); out["data"].(map[string]any)["url"] != "https://hooks.example.com/b" {
		t.Errorf("a refused update changed the endpoint: %v", out)
	}
	if code, _ := a.do(t, "other", "PATCH", item, `{"enabled":false}`); code != 404 {
		t.Errorf("another account's update: %d, want 404", code)
	}
	if code, _ := a.do(t, "acct", "PATCH", hookapi.Path+"/wh_000000000000000000000000", `{"enabled":false}`); code != 404 {
		t.Errorf("an unknown endpoint's update: %d, want 404", code)
	}
}

// A rotation answers the endpoint with a new secret each time; with 5
// secrets in force (4 replaced within the day) the next is 429 with
// Retry-After until the oldest stops signing, and another account's
// endpoint is 404.
func TestRotationsAreBoundedByTheSecretsInForce(t *testing.T) {
	a := newAPI(t)
	_, out := a.do(t, "acct", "POST", hookapi.Path, `{"url":"https://hooks.example.com/a"}`)
	created := out["data"].(map[string]any)
	path := hookapi.Path + "/" + created["id"].(string) + "/rotate-secret"
	if code, out := a.do(t, "other", "POST", path, ""); code != 404 {
		t.Fatalf("another account's rotation: %d %v", code, out)
	}
	seen := map[any]bool{created["secret"]: true}
	for i := range hookstore.MaxSigningKeys - 1 {
		code, out := a.do(t, "acct", "POST", path, "")
		data, _ := out["data"].(map[string]any)
		if code != 200 || data["id"] != created["id"] || seen[data["secret"]] || !strings.HasPrefix(fmt.Sprint(data["secret"]), "whsec_") {
			t.Fatalf("rotation %d: %d %v", i+1, code, out)
		}
		seen[data["secret"]] = true
	}
	r := httptest.NewRequest("POST", path, nil)
	r = r.WithContext(httpapi.WithPrincipal(r.Context(), auth.Principal{Account: "acct", Scopes: []auth.Scope{auth.ScopeWrite}}))
	w := httptest.NewRecorder()
	a.h.ServeHTTP(w, r)
	if wait, _ := strconv.Atoi(w.Header().Get("Retry-After")); w.Code != 429 || wait < 86000 || wait > 86400 || strings.Contains(w.Body.String(), "whsec_") {
		t.Fatalf("a rotation with 5 secrets in force: %d, Retry-After %q, %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
}
