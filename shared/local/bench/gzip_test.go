package bench

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"contentapi/shared/httpapi"
)

// Each encoder is timed, and the standard library's size is that of a
// real encoding of the list, which decodes to it.
func TestGzipFigures(t *testing.T) {
	list := []byte(strings.Repeat(`{"name":"Crème brûlée recipe","result":"Whisk the cream."},`, 200))
	got := map[string]float64{}
	for _, f := range GzipFigures(list, list[:5000]) {
		got[f.Name] = f.Value
	}
	for _, name := range []string{"ns_gzip_list", "ns_gzip_list_stdlib", "ns_gzip_get"} {
		if got[name] <= 0 {
			t.Errorf("%s = %v", name, got[name])
		}
	}
	var std bytes.Buffer
	zw := gzip.NewWriter(&std)
	zw.Write(list)
	zw.Close()
	if got["bytes_list_default_gzip_stdlib"] != float64(std.Len()) {
		t.Errorf("stdlib size %v, want %d", got["bytes_list_default_gzip_stdlib"], std.Len())
	}
	zr, err := gzip.NewReader(bytes.NewReader(httpapi.AppendGzip(nil, list)))
	if err != nil {
		t.Fatal(err)
	}
	if back, err := io.ReadAll(zr); err != nil || !bytes.Equal(back, list) {
		t.Fatalf("AppendGzip does not decode to its input: %v", err)
	}
}

func TestInterleaveRunsEachInTurn(t *testing.T) {
	var order []int
	interleave(func() { order = append(order, 0) }, func() { order = append(order, 1) })
	if len(order) != 2*GzipRounds*GzipBlock || order[0] != 0 || order[GzipBlock] != 1 || order[2*GzipBlock] != 0 {
		t.Fatalf("%d calls, order %v...", len(order), order[:min(len(order), 3)])
	}
}
