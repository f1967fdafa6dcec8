package bench

import "testing"

// A result line is read whole: a sub-benchmark's name with its path, the
// GOMAXPROCS suffix dropped, and every value and unit pair, custom metrics
// included.
func TestResultLine(t *testing.T) {
	out := "goos: linux\n" +
		"BenchmarkDocumentsGet-2   \t   20540\t     58672 ns/op\t  93.71 MB/s\t   48089 B/op\t     370 allocs/op\n" +
		"BenchmarkInterleaved/get-2         \t   60000\t     48000 ns/op\t     55123 ns/handler\t     41234 ns/sdk\t         1.337 x\n" +
		"BenchmarkPlain \t 10 \t 1.5e+06 ns/op\n" +
		"PASS\n"
	got := map[string]BenchResult{}
	for _, m := range resultLine.FindAllStringSubmatch(out, -1) {
		got[m[1]] = parseResult(m[2])
	}
	if len(got) != 3 {
		t.Fatalf("%d results: %v", len(got), got)
	}
	if r := got["BenchmarkDocumentsGet"]; r.NS != 58672 || r.Allocs != 370 || r.Metrics["B/op"] != 48089 {
		t.Errorf("DocumentsGet: %+v", r)
	}
	if r := got["BenchmarkInterleaved/get"]; r.NS != 48000 || r.Allocs != 0 ||
		r.Metrics["ns/handler"] != 55123 || r.Metrics["ns/sdk"] != 41234 || r.Metrics["x"] != 1.337 {
		t.Errorf("Interleaved/get: %+v", r)
	}
	if r := got["BenchmarkPlain"]; r.NS != 1.5e6 {
		t.Errorf("Plain: %+v", r)
	}
}
