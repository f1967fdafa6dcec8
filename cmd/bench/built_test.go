package main

import (
	"testing"

	"contentapi/shared/local/bench"
)

// The handler figures are the median round's, so each ratio is that
// round's handler time over its floor's; the allocations come from the
// benchmarks that count them.
func TestReportBenchmarks(t *testing.T) {
	interleaved := func(get, getSDK, list, listSDK float64) bench.BenchRound {
		return bench.BenchRound{
			"BenchmarkInterleaved/get":  {Metrics: map[string]float64{"ns/handler": get, "ns/sdk": getSDK, "x": get / getSDK}},
			"BenchmarkInterleaved/list": {Metrics: map[string]float64{"ns/handler": list, "ns/sdk": listSDK, "x": list / listSDK}},
		}
	}
	ratioRounds := []bench.BenchRound{
		interleaved(60000, 40000, 300000, 200000), // get 1.5, list 1.5
		interleaved(52000, 40000, 220000, 200000), // get 1.3, the median; list 1.1
		interleaved(50000, 40000, 280000, 200000), // get 1.25, list 1.4
		interleaved(55000, 40000, 250000, 200000), // get 1.375, list 1.25
		interleaved(44000, 40000, 260000, 200000), // get 1.1, list 1.3, the median
	}
	allocs := bench.BenchRound{
		"BenchmarkDocumentsGet": {Allocs: 370}, "BenchmarkSDKGetItem": {Allocs: 343},
		"BenchmarkDocumentsList": {Allocs: 2900}, "BenchmarkSDKListCalls": {Allocs: 2500},
	}
	b := &bench.Board{}
	rep := &report{}
	reportBenchmarks(b, allocs, ratioRounds, rep)
	for name, want := range map[string]float64{
		"ns_handler_get": 52000, "ns_sdk_getitem": 40000, "ratio_handler_get": 1.3,
		"ns_handler_list": 260000, "ns_sdk_list_calls": 200000, "ratio_handler_list": 1.3,
		"allocs_handler_get": 370, "allocs_sdk_getitem": 343, "allocs_handler_list": 2900, "allocs_sdk_list_calls": 2500,
	} {
		if got := b.Get(name).Value; got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if len(rep.Ratios) != 2 || len(rep.Ratios[0].Rounds) != 5 {
		t.Errorf("round ratios: %+v", rep.Ratios)
	}
}
