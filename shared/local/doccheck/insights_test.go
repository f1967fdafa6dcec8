package doccheck

import (
	"reflect"
	"testing"
)

// The queries of a page, fenced or inline, each with the groups named
// after it.
func TestInsightsQueries(t *testing.T) {
	page := "- Failures:\n\n  ```\n  fields a, b\n  | filter msg = \"x\"\n  ```\n\n  over `G1 G2`. The gateway's: `filter status >= 500 | stats count() by route,\n  status` over `Access`.\n" +
		"```sh\ninsights 'filter msg = \"y\"' G1\n```\nAnd `filter msg = \"metrics\"`.\n"
	got := InsightsQueries(page)
	want := []QueryIn{
		{Text: `fields a, b | filter msg = "x"`, Groups: []string{"G1", "G2"}},
		{Text: "filter status >= 500 | stats count() by route, status", Groups: []string{"Access"}},
		{Text: `filter msg = "metrics"`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// The subset of Logs Insights the runbook uses, run over lines.
func TestQueryMatches(t *testing.T) {
	lines := map[string]string{
		"request500": `{"msg":"request","status":503,"account":"acme","request_id":"r1"}`,
		"request404": `{"msg":"request","status":404,"account":"acme"}`,
		"failed":     `{"msg":"request failed","error":"boom","request_id":"r2"}`,
		"access":     `{"requestId":"r1","status":"503","routeKey":"GET /x","integrationError":"-"}`,
		"tally":      `{"msg":"tally: counts not taken down, delivered again","shard":"s"}`,
		"metrics":    `{"_aws":{},"QuotaRefusals":1,"Function":"images","msg":"metrics"}`,
		"report":     `{"type":"platform.report","record":{"metrics":{"maxMemoryUsedMB":32}}}`,
		"text":       `START RequestId: x`,
	}
	for _, tc := range []struct {
		query string
		want  []string
		reads []string
	}{
		{`fields @timestamp, request_id, account, status, error | filter (msg = "request" and status >= 500) or msg = "request failed" or msg = "panic" | sort @timestamp desc`,
			[]string{"request500", "failed"}, []string{"@timestamp", "request_id", "account", "status", "error"}},
		{`filter status >= 500 | stats count() by routeKey, status, integrationError`, []string{"request500", "access"}, []string{"routeKey", "status", "integrationError"}},
		{`filter msg like /^tally: / or msg = "stream record not handled"`, []string{"tally"}, nil},
		{`filter msg = "metrics" and ispresent(QuotaRefusals) | stats sum(QuotaRefusals) by Function, bin(5m)`, []string{"metrics"}, []string{"QuotaRefusals", "Function"}},
		{`filter type = "platform.report" | stats max(record.metrics.maxMemoryUsedMB) by bin(1h)`, []string{"report"}, []string{"record.metrics.maxMemoryUsedMB"}},
		{`filter not ispresent(status) and msg != "metrics" and msg != "request failed"`, []string{"tally"}, nil},
	} {
		q, err := ParseQuery(tc.query)
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		var got []string
		for _, name := range []string{"request500", "request404", "failed", "access", "tally", "metrics", "report", "text"} {
			if q.Matches([]byte(lines[name])) {
				got = append(got, name)
			}
		}
		if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(q.Reads, tc.reads) {
			t.Errorf("%s: matches %v, reads %v; want %v, %v", tc.query, got, q.Reads, tc.want, tc.reads)
		}
	}
	if !Has([]byte(lines["report"]), "record.metrics.maxMemoryUsedMB") || Has([]byte(lines["report"]), "record.metrics.initDurationMs") || !Has([]byte(lines["text"]), "@message") {
		t.Error("Has")
	}
	for _, bad := range []string{`filter msg ~ "x"`, `parse @message "a*b" as c`, `filter (msg = "x"`, `filter msg like "x"`} {
		if _, err := ParseQuery(bad); err == nil {
			t.Errorf("%s: taken", bad)
		}
	}
}
