package main

import (
	"fmt"

	"contentapi/shared/local/bench"
)

// measureGzip reports what compression saves and adds: the default list's
// answer decoded and as sent to a client that takes gzip, and the time
// the answers' encoder takes on it and on a get's answer, beside the
// standard library's (bench.GzipFigures).
func measureGzip(b *bench.Board, ops []operationResult) error {
	list, get := answerOf(ops, "list_default"), answerOf(ops, "get")
	if list.body == "" || get.body == "" || list.Issue != "" {
		return fmt.Errorf("gzip: no answer of list_default and get")
	}
	b.Add(bench.Figure{Name: "bytes_list_default", Value: float64(len(list.body)), Unit: "bytes"})
	b.Add(bench.Figure{Name: "bytes_list_default_gzip", Value: float64(list.Bytes), Unit: "bytes"})
	for _, f := range bench.GzipFigures([]byte(list.body), []byte(get.body)) {
		b.Add(f)
	}
	return nil
}

// answerOf is the result of the operation named, or none.
func answerOf(ops []operationResult, name string) operationResult {
	for _, o := range ops {
		if o.Op.Name == name {
			return o
		}
	}
	return operationResult{}
}
