package main

import (
	"math"

	"contentapi/shared/documents"
	"contentapi/shared/local/bench"
	"contentapi/shared/prompts"
)

// deliveryCost is the cost table's row of a webhook delivery, and what
// the log meter keeps its writes under.
const deliveryCost = "webhook delivery"

// costs computes the cost table from the run's figures: each operation's
// DynamoDB calls and request units (and its share of the rate limiter's
// leases), its handler's measured CPU time, its answer, what it wrote to
// CloudWatch Logs (logs, which knows the template's tracing too), and for
// the creates that generate, the models.
func costs(b *bench.Board, logs *bench.LogMeter, ops []operationResult, memory int) *bench.CostModel {
	m := bench.NewCostModel(memory, logs.Tracing)
	val := func(name string) float64 {
		f := b.Get(name)
		if f.Missing != "" || math.IsNaN(f.Value) {
			if m.Missing == "" {
				m.Missing = name
			}
			return 0
		}
		return f.Value
	}
	answer := func(name string) operationResult {
		o := answerOf(ops, name)
		if o.Op.Name == "" && m.Missing == "" {
			m.Missing = "the answer of " + name
		}
		return o
	}
	bytes := func(name string) float64 { return float64(answer(name).Bytes) }
	// An answer that went gzip-encoded cost its encoding too: a list's
	// as measured, any other's as a get's (one record, ~5 KB).
	gzipNs := func(name string) float64 {
		o := answer(name)
		switch {
		case o.Bytes >= len(o.body):
			return 0
		case name == "list_default":
			return val("ns_gzip_list")
		}
		return val("ns_gzip_get")
	}
	logged := func(name string) []bench.LogWrite {
		w := logs.Measured(name)
		if w == nil && m.Missing == "" {
			m.Missing = "the log lines of " + name
		}
		return w
	}
	op := func(name string, calls, rru, wru, answer, cpuNs float64) bench.CostOperation {
		return bench.CostOperation{Name: name, Calls: calls + val("calls_ratelimit_per_request"), RRU: rru,
			WRU: wru + val("wru_ratelimit_per_request"), Bytes: answer, CPUNs: cpuNs}
	}
	get, list := val("ns_handler_get"), val("ns_handler_list")
	// The writes have no handler benchmark: a get's CPU time stands in
	// (one record in, one out); their calls dominate their duration.
	add := func(o bench.CostOperation, measured string) {
		o.Logs = logged(measured)
		m.Add(o)
	}
	add(op("get", val("calls_get"), val("rru_get"), 0, bytes("get"), get+gzipNs("get")), "get")
	add(op("list", val("calls_list_default"), val("rru_list_default"), 0, bytes("list_default"), list+gzipNs("list_default")), "list_default")
	for _, w := range []string{"create", "update"} {
		add(op(w, val("calls_"+w), 0, val("wru_"+w), bytes(w), get+gzipNs(w)), w)
	}
	// wru_delete is the request's and the tally's; the tally's calls run in
	// an invocation of their own, and its lines go to its own group.
	del := op("delete", val("calls_delete"), 0, val("wru_delete"), bytes("delete"), get+gzipNs("delete"))
	del.Streamed = val("calls_delete_tally")
	add(del, "delete")
	// The content is written back with one UpdateItem, counted as
	// update_result's (a ~5 KB result; a picture's file name costs less).
	// A create that generates text answers with it, as large as a get's.
	if req, err := prompts.Document(documents.FreestyleID, createPrompt, 0.75, prompts.Controls{}); err == nil {
		text := op("create, text generated", val("calls_create")+val("calls_update_result"), 0, val("wru_create")+val("wru_update_result"), bytes("get"), get+gzipNs("get"))
		text.WaitSeconds, text.Rest = m.Text(len(req.System)+len(req.Prompt), bench.SeededResultBytes)
		add(text, "generate_doc")
		// Three variants: three model calls at once (the wait of one), the
		// create's calls as measured, and a write-back two ~5 KB texts
		// larger than one text's (a WRU per KB); the answer shows the
		// three texts besides result.
		variants := op("create, 3 variants generated", val("calls_generate_doc_variants3"), 0,
			val("wru_create")+val("wru_update_result")+2*math.Ceil(bench.SeededResultBytes/1024.0), 4*bytes("get"), get+gzipNs("get"))
		variants.WaitSeconds = text.WaitSeconds
		variants.Rest = val("calls_model_doc_variants3") * text.Rest
		add(variants, "generate_doc_variants3")
	} else if m.Missing == "" {
		m.Missing = "the Freestyle template's prompt: " + err.Error()
	}
	picture := op("create image, picture generated", val("calls_create_image")+val("calls_update_result"), 0, val("wru_create_image")+val("wru_update_result"), bytes("create_image"), get+gzipNs("create_image"))
	picture.WaitSeconds, picture.Rest = m.Picture()
	add(picture, "generate_image")
	m.Delivery(deliveryCost, val("calls_webhook_delivery"), val("rru_webhook_delivery"), val("wru_webhook_delivery"), logged(deliveryCost))
	m.WorstAttempt(worstAttempt, val("calls_webhook_delivery"), val("rru_webhook_delivery"), val("wru_webhook_delivery"), logged(worstAttempt))
	return m
}

// worstAttempt is the cost table's row of a webhook attempt at its
// dearest, which usd_worst_key_day counts the deliveries limit's attempts
// at.
const worstAttempt = "webhook attempt, receiver never answers"
