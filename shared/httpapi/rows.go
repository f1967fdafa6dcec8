package httpapi

// A batch's rows in one request body: each row the fields of one create,
// as ParseBody reads a create's body.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"contentapi/shared/records"
)

// The media types of a body of rows, beside application/json (an array of
// objects): JSON Lines, under the names clients send it with, and CSV.
var (
	jsonLinesTypes = []string{"application/jsonl", "application/x-ndjson", "application/x-jsonlines"}
	csvType        = "text/csv"
)

// ParseRows reads a body of rows, all or nothing: a JSON array of objects
// (application/json), JSON Lines, one object a line (application/jsonl or
// application/x-ndjson), or CSV with a header row naming the fields
// (text/csv; an empty cell is a field not given). Rows are numbered from
// 1 in the order they come (a CSV's header is not a row; a JSON Lines
// body's row n is its line n, so it has no blank lines but a last
// newline). A row that does not parse is 400 naming its number; a body of
// another type is 415.
func ParseRows(r *http.Request) ([]records.Input, error) {
	raw, err := readBody(r)
	if err != nil {
		return nil, err
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case err != nil:
	case mediaType == "application/json":
		return rowsOfJSONArray(raw)
	case mediaType == csvType:
		return rowsOfCSV(raw)
	case slices.Contains(jsonLinesTypes, mediaType):
		return rowsOfJSONLines(raw)
	}
	return nil, newError(http.StatusUnsupportedMediaType,
		"The Content-Type of rows must be application/json (an array of objects), application/jsonl (JSON Lines) or text/csv (with a header row).")
}

// badRow is the 400 of a row that does not parse.
func badRow(n int, what string) *Error {
	return BadRequest(fmt.Sprintf("Row %d %s.", n, what))
}

func rowsOfJSONArray(raw []byte) ([]records.Input, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, BadRequest("The request body must be a JSON array of rows, each an object.")
	}
	var rows []records.Input
	for dec.More() {
		var row json.RawMessage
		if err := dec.Decode(&row); err != nil {
			return nil, badRow(len(rows)+1, "is not valid JSON")
		}
		in, err := parseJSON(row)
		if err != nil {
			return nil, badRow(len(rows)+1, "must be a JSON object")
		}
		rows = append(rows, in)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return nil, BadRequest("The request body must be a JSON array of rows, each an object.")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, BadRequest("The request body must be a JSON array of rows, each an object.")
	}
	return rows, nil
}

func rowsOfJSONLines(raw []byte) ([]records.Input, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	rows := make([]records.Input, 0, len(lines))
	for i, line := range lines {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, badRow(i+1, "is blank: JSON Lines hold one object on every line")
		}
		in, err := parseJSON(line)
		if err != nil {
			return nil, badRow(i+1, "must be a JSON object on one line")
		}
		rows = append(rows, in)
	}
	return rows, nil
}

func rowsOfCSV(raw []byte) ([]records.Input, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte("\uFEFF"))))
	header, err := r.Read()
	if err != nil {
		return nil, BadRequest("The CSV must start with a header row naming the fields.")
	}
	seen := map[string]bool{}
	for i, name := range header {
		header[i] = strings.TrimSpace(name)
		if header[i] == "" || seen[header[i]] {
			return nil, BadRequest("The CSV's header row must name each field once.")
		}
		seen[header[i]] = true
	}
	r.ReuseRecord = true
	var rows []records.Input
	for {
		cells, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			if errors.Is(err, csv.ErrFieldCount) {
				return nil, badRow(len(rows)+1, fmt.Sprintf("must have %d cells, one for each field of the header", len(header)))
			}
			return nil, badRow(len(rows)+1, "is not valid CSV")
		}
		var in records.Input
		for i, cell := range cells {
			if cell != "" {
				in.Add(header[i], records.InputValue{Text: cell, Type: records.InputString})
			}
		}
		rows = append(rows, in)
	}
}
