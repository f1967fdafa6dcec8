package main

import (
	"fmt"
	"math"

	"contentapi/shared/documents"
	"contentapi/shared/local/sam"
	"contentapi/shared/prompts"
)

// priceList holds AWS list prices, on demand, in US East (N. Virginia), in
// US dollars.
type priceList struct {
	// HTTPAPI per million requests (the first 300 million a month).
	HTTPAPI float64
	// LambdaRequests per million; LambdaARMGBSecond per GB-second of
	// arm64 duration (the first 7.5 billion GB-seconds a month).
	LambdaRequests, LambdaARMGBSecond float64
	// DynamoDBRead and DynamoDBWrite per million request units (standard
	// table class, since the price cut of 1 November 2024).
	DynamoDBRead, DynamoDBWrite float64
	// TextInput and TextOutput per million tokens of the text model;
	// Picture per picture of the image model.
	TextModel, ImageModel          string
	TextInput, TextOutput, Picture float64
	// S3Put per thousand PUT requests (S3 Standard).
	S3Put float64
	// DataOut per GB from API Gateway to the internet (the first 10 TB a
	// month).
	DataOut float64
}

// prices are as read on pricesRead from the sources the report names.
var prices = priceList{
	HTTPAPI:        1.00,
	LambdaRequests: 0.20, LambdaARMGBSecond: 0.0000133334,
	DynamoDBRead: 0.125, DynamoDBWrite: 0.625,
	TextModel: "us.amazon.nova-micro-v1:0", ImageModel: "stability.stable-image-core-v1:1",
	TextInput: 0.035, TextOutput: 0.14, Picture: 0.04,
	S3Put:   0.005,
	DataOut: 0.09,
}

const pricesRead = "2026-11-23"

// The cost model's assumptions, each stated in the report.
const (
	// dynamoDBRoundTripMs is what one DynamoDB call adds to a function's
	// duration in its own region: single-digit milliseconds, as AWS states.
	dynamoDBRoundTripMs = 4
	// vCPUMemoryMB is the memory size at which Lambda gives a function a
	// whole vCPU; below it the CPU share is proportional.
	vCPUMemoryMB = 1769
	// charsPerToken is how much English text a model token holds.
	charsPerToken = 4
	// textTokensPerSecond is the text model's assumed output speed, and
	// pictureSeconds the image model's assumed time per picture: while a
	// create waits for generation, the function's duration runs.
	textTokensPerSecond = 200
	pictureSeconds      = 4
)

// costRow is what a million requests of one operation cost, in dollars.
type costRow struct {
	Op                                       string
	Calls, RRU, WRU, Ms, Bytes               float64
	Gateway, DataOut, Lambda, DynamoDB, Rest float64
	Total                                    float64
}

// costModel is the cost table and what it was computed from.
type costModel struct {
	Rows                  []costRow
	MemoryMB              int
	InputTokens           int
	OutputTokens          int
	TextSeconds           float64
	LambdaPerSecondPerM   float64
	CPUScale              float64
	Missing               string
	Prices                priceList
	PricesRead            string
	RoundTripMs           int
	TokensPerSecond       int
	PictureSeconds        int
	TextModel, ImageModel string
}

// memoryMB is the documents function's memory size in template.yaml.
func memoryMB(tmpl *sam.Template) (int, error) {
	fn, err := tmpl.Function("DocumentsFunction")
	if err != nil {
		return 0, err
	}
	switch v := fn.Properties["MemorySize"].(type) {
	case int:
		return v, nil
	case float64:
		return int(v), nil
	}
	return 0, fmt.Errorf("template.yaml: DocumentsFunction has no MemorySize")
}

// costs computes the cost table from the run's figures: each operation's
// DynamoDB calls and request units (and its share of the rate limiter's
// leases), its duration modeled from its calls and its handler's measured
// CPU time, and for the creates that generate, the models' list prices.
func costs(b *board, ops []operationResult, memory int) *costModel {
	m := &costModel{MemoryMB: memory, Prices: prices, PricesRead: pricesRead, RoundTripMs: dynamoDBRoundTripMs,
		TokensPerSecond: textTokensPerSecond, PictureSeconds: pictureSeconds,
		TextModel: prices.TextModel, ImageModel: prices.ImageModel}
	val := func(name string) float64 {
		f := b.get(name)
		if f.Missing != "" || math.IsNaN(f.Value) {
			if m.Missing == "" {
				m.Missing = name
			}
			return 0
		}
		return f.Value
	}
	bytes := func(name string) float64 {
		for _, o := range ops {
			if o.Op.Name == name {
				return float64(o.Bytes)
			}
		}
		if m.Missing == "" {
			m.Missing = "the answer of " + name
		}
		return 0
	}
	gb := float64(memory) / 1024
	m.CPUScale = float64(vCPUMemoryMB) / float64(memory)
	m.LambdaPerSecondPerM = gb * prices.LambdaARMGBSecond * 1e6
	row := func(op string, calls, rru, wru, answer, cpuNs, waitSeconds, rest float64) costRow {
		r := costRow{Op: op, Calls: calls + val("calls_ratelimit_per_request"), RRU: rru,
			WRU: wru + val("wru_ratelimit_per_request"), Bytes: answer, Rest: rest}
		r.Ms = math.Ceil(r.Calls*dynamoDBRoundTripMs + cpuNs/1e6*m.CPUScale + waitSeconds*1000)
		r.Gateway = prices.HTTPAPI
		r.DataOut = answer / (1 << 30) * prices.DataOut * 1e6
		r.Lambda = prices.LambdaRequests + r.Ms/1000*m.LambdaPerSecondPerM
		r.DynamoDB = r.RRU*prices.DynamoDBRead + r.WRU*prices.DynamoDBWrite
		r.Total = r.Gateway + r.DataOut + r.Lambda + r.DynamoDB + r.Rest
		return r
	}
	get, list := val("ns_handler_get"), val("ns_handler_list")
	// The writes have no handler benchmark: a get's CPU time stands in
	// (one record in, one out); their calls dominate their duration.
	m.Rows = []costRow{
		row("get", val("calls_get"), val("rru_get"), 0, bytes("get"), get, 0, 0),
		row("list", val("calls_list_default"), val("rru_list_default"), 0, bytes("list_default"), list, 0, 0),
		row("create", val("calls_create"), 0, val("wru_create"), bytes("create"), get, 0, 0),
		row("update", val("calls_update"), 0, val("wru_update"), bytes("update"), get, 0, 0),
		row("delete", val("calls_delete"), 0, val("wru_delete"), bytes("delete"), get, 0, 0),
	}
	if req, err := prompts.Document(documents.FreestyleID, createPrompt, 0.75); err == nil {
		m.InputTokens = (len(req.System) + len(req.Prompt)) / charsPerToken
		m.OutputTokens = resultBytes / charsPerToken
		m.TextSeconds = float64(m.OutputTokens) / textTokensPerSecond
		text := float64(m.InputTokens)*prices.TextInput + float64(m.OutputTokens)*prices.TextOutput
		// The generated text is written back with one UpdateItem of the
		// ~5 KB result (update_result), and the answer holds it: as large
		// as a get's.
		m.Rows = append(m.Rows, row("create, text generated",
			val("calls_create")+val("calls_update_result"), 0, val("wru_create")+val("wru_update_result"), bytes("get"), get, m.TextSeconds, text))
	} else if m.Missing == "" {
		m.Missing = "the Freestyle template's prompt: " + err.Error()
	}
	// A picture: the model's price, one S3 PUT, and the file name written
	// back with one UpdateItem (counted as update_result's, an upper bound).
	picture := prices.Picture*1e6 + prices.S3Put*1e3
	m.Rows = append(m.Rows, row("create image, picture generated",
		val("calls_create_image")+val("calls_update_result"), 0, val("wru_create_image")+val("wru_update_result"), bytes("create_image"), get, pictureSeconds, picture))
	return m
}
