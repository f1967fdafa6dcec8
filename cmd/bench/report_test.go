package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"contentapi/shared/local/bench"
	"contentapi/shared/local/sam"
)

// fakeBoard holds figures as a run of the bench would, without running it.
func fakeBoard() *bench.Board {
	b := &bench.Board{}
	for name, v := range map[string]float64{
		"calls_get": 1, "rru_get": 2, "calls_list_default": 2, "rru_list_default": 22,
		"calls_create": 2, "wru_create": 9, "calls_create_image": 2, "wru_create_image": 5,
		"calls_update": 1, "wru_update": 9, "calls_update_result": 1, "wru_update_result": 6,
		"calls_delete": 1, "calls_delete_tally": 1, "wru_delete": 9, "calls_ratelimit_per_request": 0.029, "wru_ratelimit_per_request": 0.029,
		"calls_auth_warm": 0, "ns_handler_get": 70000, "ns_handler_list": 250000, "ns_sdk_getitem": 50000,
		"ns_sdk_list_calls": 170000, "ratio_handler_get": 1.4, "ratio_handler_list": 1.47,
		"calls_webhook_delivery": 7, "rru_webhook_delivery": 2, "wru_webhook_delivery": 6,
		"calls_generate_doc_variants3": 3, "calls_model_doc_variants3": 3,
	} {
		b.Add(bench.Figure{Name: name, Value: v, Unit: strings.SplitN(name, "_", 2)[0]})
	}
	return b
}

// projectLogs is a log meter of the project's template, holding what each
// request the cost table prices wrote: an access line of 250 bytes, and
// 100 bytes of the functions'.
func projectLogs(t *testing.T) *bench.LogMeter {
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := bench.NewLogMeter(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"get", "list_default", "create", "update", "delete", "generate_doc", "generate_doc_variants3", "generate_image",
		deliveryCost, worstAttempt} {
		logs.Add(name, bench.LogWrite{Group: "HttpApiAccessLogs", Class: sam.LogClassInfrequentAccess, RetentionDays: 30, Bytes: 250},
			bench.LogWrite{Group: "DocumentsLogGroup", Class: sam.LogClassStandard, RetentionDays: 30, Bytes: 100})
	}
	return logs
}

// The cost table is computed from the run's figures and shows up in the
// report: every operation, its dollars with its logs' and traces', and the
// prices' date.
func TestReportCosts(t *testing.T) {
	b := fakeBoard()
	ops := []operationResult{}
	for name, n := range map[string]int{"get": 5600, "list_default": 56000, "create": 700, "update": 5700, "delete": 70, "create_image": 600} {
		ops = append(ops, operationResult{Op: operation{Name: name}, Bytes: n})
	}
	rep := &report{board: b, Started: time.Now(), Operations: ops, Costs: costs(b, projectLogs(t), ops, 256)}
	if rep.Costs.Missing != "" {
		t.Fatalf("missing %s", rep.Costs.Missing)
	}
	get := rep.Costs.Rows[0]
	// 1.029 calls at 4 ms and 70 µs of CPU at 256/1769 of a vCPU: 5 ms.
	if get.Ms != 5 || get.Gateway != 1 || get.DynamoDB < 0.25 || get.DynamoDB > 0.27 {
		t.Errorf("get: %+v", get)
	}
	// 350 bytes of lines, 250 of them at half the price; the template
	// traces nothing by default.
	if get.LogBytes != 350 || get.Logs < 0.11 || get.Logs > 0.12 || get.XRay != 0 || get.Total != get.Untraced+get.Logs {
		t.Errorf("get's logs and traces: %+v", get)
	}
	// A delete's tally: its call, in an invocation of its own.
	if del := rep.Costs.Rows[4]; del.Op != "delete" || del.Calls != 2.029 || del.Lambda < 2*bench.AWSPrices.LambdaRequests {
		t.Errorf("delete: %+v", del)
	}
	text := rep.Costs.Rows[5]
	if text.Rest < 100 || text.Total < text.Rest || text.Ms < 1000 {
		t.Errorf("create with text: %+v", text)
	}
	// Three variants: three times the model, waited for once, and two
	// ~5 KB texts more written back.
	if v := rep.Costs.Rows[6]; v.Op != "create, 3 variants generated" || v.Rest != 3*text.Rest || v.Ms != text.Ms ||
		v.WRU != text.WRU+10 || v.Calls != text.Calls {
		t.Errorf("create with 3 variants: %+v, one text's %+v", v, text)
	}
	// A webhook delivery: no gateway, two invocations at most, 7 calls at
	// 4 ms and the receiver's 250 ms, three SQS requests.
	hook := rep.Costs.Row("webhook delivery")
	if hook.Gateway != 0 || hook.Ms != 278 || hook.Lambda < 2*bench.AWSPrices.LambdaRequests ||
		hook.Rest != 3*bench.AWSPrices.SQS || hook.Total < hook.Lambda+hook.Rest {
		t.Errorf("webhook delivery: %+v", hook)
	}
	// At its dearest, an attempt waits the 10 s timeout in an invocation
	// of its own, and its lines are priced.
	if worst := rep.Costs.Rows[len(rep.Costs.Rows)-1]; worst.Op != worstAttempt || worst.Ms != 7*4+10_000 || worst.Total < hook.Total ||
		worst.LogBytes != 350 || worst.Total != worst.Untraced+worst.Logs {
		t.Errorf("the worst attempt: %+v", worst)
	}
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := rep.write(path); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## What a million requests cost", "| get | 1.029 | 2 | 0.029 | 5600 | 5 | 350 | 1.00 |", "**PassThrough**",
		"create image, picture generated", "| webhook delivery | 7 | 2 | 6 |", "checked on " + bench.PricesRead, "$0.0000133334 per GB-second"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// Without the handler benchmarks (-quick), the report says what is missing.
func TestReportCostsNeedTheHandlerBenchmarks(t *testing.T) {
	m := costs(&bench.Board{}, projectLogs(t), nil, 256)
	if m.Missing == "" {
		t.Fatal("costs computed from no figures")
	}
}
