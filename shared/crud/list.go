package crud

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"contentapi/shared/httpapi"
	"contentapi/shared/records"
)

// Links is the paginator's "links" object.
type Links struct {
	First string  `json:"first"`
	Last  string  `json:"last"`
	Prev  *string `json:"prev"`
	Next  *string `json:"next"`
}

// searchPartialHeader marks a search by result whose total is estimated;
// deprecated in favour of meta.total_estimated.
const searchPartialHeader = "X-Search-Partial"

// DefaultMaxAnswerBytes bounds a list's body (5 MB) unless the Resource
// says otherwise; the response event is held to Lambda's 6 MB as well
// (httpapi.MaxLambdaResponseBytes).
const DefaultMaxAnswerBytes = 5_000_000

// envelopeBytes is what a list's answer holds besides its records, at most:
// meta and four links.
func envelopeBytes(r *http.Request) int {
	return 4<<10 + linksBytes(r)
}

// linksBytes bounds four links, each a URL with the request's query and a
// cursor.
func linksBytes(r *http.Request) int {
	return 5 * (len(r.Host) + len(r.URL.Path) + len(r.URL.RawQuery) + records.MaxCursorLength + 64)
}

// eventEnvelopeBytes is what the response event holds besides the records,
// at most: the envelope escaped (a query may hold `"` or `\`, which double;
// control characters never reach a handler in a URL), the links again in
// the Link header, and the other headers and the event's own fields.
func eventEnvelopeBytes(r *http.Request) int {
	return 2*envelopeBytes(r) + 2*linksBytes(r) + 4<<10
}

func (res *Resource) list(w http.ResponseWriter, r *http.Request) error {
	query, err := httpapi.ParseQuery(r)
	if err != nil {
		return err
	}
	// A cursor is good for the account it was given to only.
	cursors := res.Cursors.For(account(r))
	q, err := res.def.ParseList(query, cursors)
	if err != nil {
		return err
	}
	if r.Method == http.MethodHead {
		// Its body unsent, a page is not worth its reads: HEAD answers
		// what it can know without them, the status a valid query gets,
		// and no Link, whose last and next need the count.
		w.Header().Set("Content-Type", httpapi.ContentType)
		w.WriteHeader(http.StatusOK)
		return nil
	}
	page, err := res.table.List(r.Context(), account(r), q)
	if err != nil {
		return err
	}
	data := make([]any, 0, len(page.Items))
	view := res.view(r)
	view.List = true
	room := res.maxAnswerBytes() - envelopeBytes(r)
	// The answer travels escaped inside Lambda's response event, whose
	// limit binds before the body's when records are full of quotes.
	eventRoom := httpapi.MaxLambdaResponseBytes - eventEnvelopeBytes(r)
	// Each record is encoded once, here, where its size is measured; the
	// answer then copies its bytes.
	encodedBuf := httpapi.Buffer()
	defer httpapi.Release(encodedBuf)
	encoded := bytes.NewBuffer(*encodedBuf)
	enc := json.NewEncoder(encoded)
	enc.SetEscapeHTML(false)
	for i, item := range page.Items {
		body, err := res.render(item, view)
		if err != nil {
			return err
		}
		start := encoded.Len()
		if err := enc.Encode(body); err != nil {
			return err
		}
		record := encoded.Bytes()[start : encoded.Len()-1] // less Encode's newline
		room -= len(record) + 1
		eventRoom -= quotedLen(record) - 1 // its quotes, less a comma
		if (room < 0 || eventRoom < 0) && i > 0 {
			// The answer would pass its bound: the rest of the page comes
			// in the next answer.
			page.Partial, page.Next = true, &page.Before[i]
			break
		}
		data = append(data, json.RawMessage(record))
	}
	*encodedBuf = encoded.Bytes()[:0]
	path := baseURL(r) + r.URL.Path
	meta := records.Paginate(q, page.Total, page.Start, len(data), path)
	meta.TotalEstimated, meta.Partial = page.TotalEstimated, page.Partial
	links := pageLinks(cursors, path, query, meta, q, page.Next)
	w.Header().Set("Link", linkHeader(links))
	if page.TotalEstimated && q.Search != "" && q.SearchBy == "result" {
		w.Header().Set(searchPartialHeader, "true")
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"data": data, "links": links, "meta": meta, "status": http.StatusOK,
	})
	return nil
}

// quotedLen is the length of b written as a JSON string, as the Lambda
// runtime writes the response event's body: encoding/json, HTML left
// unescaped.
func quotedLen(b []byte) int {
	var n byteCount
	enc := json.NewEncoder(&n)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(string(b)) // a string always encodes
	return int(n) - 1         // less Encode's newline
}

// byteCount is a writer that counts what it is given.
type byteCount int

func (n *byteCount) Write(p []byte) (int, error) {
	*n += byteCount(len(p))
	return len(p), nil
}

func (res *Resource) maxAnswerBytes() int {
	if res.MaxAnswerBytes > 0 {
		return res.MaxAnswerBytes
	}
	return DefaultMaxAnswerBytes
}

// pageLinks builds Laravel's first/last/prev/next: prev whenever the page is
// past the first (even past the end), next while a later page exists. When
// a bound was hit, next resumes at the cursor instead: the same page when
// it is partial, else the next one. Only next ever carries a cursor,
// signed by cursors (the account's).
func pageLinks(cursors records.Cursors, path string, query records.Query, m records.Meta, q records.ListQuery, resume *records.Cursor) Links {
	query = slices.DeleteFunc(slices.Clone(query), func(p records.QueryParam) bool { return p.Name == cursorParam })
	at := func(n int64) string { return path + "?" + httpapi.QueryWithPage(query, n) }
	l := Links{First: at(1), Last: at(m.LastPage)}
	if m.CurrentPage > 1 {
		prev := at(m.CurrentPage - 1)
		l.Prev = &prev
	}
	switch {
	case resume != nil:
		page := m.CurrentPage
		if !m.Partial {
			page++
		}
		q.Page = page
		next := at(page) + "&" + cursorParam + "=" + cursors.Encode(q, *resume)
		l.Next = &next
	case m.CurrentPage < m.LastPage:
		next := at(m.CurrentPage + 1)
		l.Next = &next
	}
	return l
}

// cursorParam is the query parameter of a cursor.
const cursorParam = "cursor"

// linkHeader is the RFC 8288 form of the same links.
func linkHeader(l Links) string {
	parts := []string{`<` + l.First + `>; rel="first"`}
	if l.Prev != nil {
		parts = append(parts, `<`+*l.Prev+`>; rel="prev"`)
	}
	if l.Next != nil {
		parts = append(parts, `<`+*l.Next+`>; rel="next"`)
	}
	parts = append(parts, `<`+l.Last+`>; rel="last"`)
	return strings.Join(parts, ", ")
}
