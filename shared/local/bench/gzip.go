// GzipFigures times the answers' gzip encoder (httpapi.AppendGzip)
// against the standard library's compress/gzip at its default level, for
// make bench: the measurement the encoder was chosen by.

package bench

import (
	"bytes"
	"compress/gzip"
	"slices"
	"time"

	"contentapi/shared/httpapi"
)

// GzipRounds and GzipBlock shape the timings: GzipRounds rounds of GzipBlock encodings of
// one answer by each encoder in turn, the median round's mean reported,
// so that every encoder sees the machine alike.
const (
	GzipRounds = 9
	GzipBlock  = 40
)

// GzipFigures times encoding list, a list's answer, with the answers'
// encoder (ns_gzip_list) and the standard library's (ns_gzip_list_stdlib,
// which makes bytes_list_default_gzip_stdlib), and get, a get's answer,
// with the answers' encoder (ns_gzip_get).
func GzipFigures(list, get []byte) []Figure {
	var dst []byte
	ours := func(body []byte) func() { return func() { dst = httpapi.AppendGzip(dst[:0], body) } }
	var std bytes.Buffer
	zw := gzip.NewWriter(&std)
	stdlib := func() {
		std.Reset()
		zw.Reset(&std)
		_, _ = zw.Write(list)
		_ = zw.Close()
	}
	ns := interleave(ours(list), stdlib, ours(get))
	return []Figure{
		{Name: "ns_gzip_list", Value: ns[0], Unit: "ns"},
		{Name: "ns_gzip_list_stdlib", Value: ns[1], Unit: "ns"},
		{Name: "bytes_list_default_gzip_stdlib", Value: float64(std.Len()), Unit: "bytes"},
		{Name: "ns_gzip_get", Value: ns[2], Unit: "ns"},
	}
}

// interleave times each of fns in GzipRounds rounds of GzipBlock calls, in turn,
// and returns each one's median round's mean time per call, in ns.
func interleave(fns ...func()) []float64 {
	per := make([][]float64, len(fns))
	for range GzipRounds {
		for i, fn := range fns {
			start := time.Now()
			for range GzipBlock {
				fn()
			}
			per[i] = append(per[i], float64(time.Since(start).Nanoseconds())/GzipBlock)
		}
	}
	medians := make([]float64, len(fns))
	for i, ts := range per {
		slices.Sort(ts)
		medians[i] = ts[len(ts)/2]
	}
	return medians
}
