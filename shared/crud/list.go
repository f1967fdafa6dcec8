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
	view := res.view(r)
	view.List = true
	room := res.maxAnswerBytes() - envelopeBytes(r)
	// The answer travels escaped inside Lambda's response event, whose
	// limit binds before the body's when records are full of quotes.
	eventRoom := httpapi.MaxLambdaResponseBytes - eventEnvelopeBytes(r)
	// The answer is encoding/json's of {"data": [...], "links", "meta",
	// "status"}, its keys in encoding/json's order, put together here from
	// each record's encoding, made once where its size is measured. Given
	// back to encoding/json as json.RawMessage, which it checks and copies
	// again, the records took a third of a list's CPU (BENCHMARKS.md,
	// Libraries first).
	bp := httpapi.Buffer()
	defer httpapi.Release(bp)
	answer := bytes.NewBuffer(append(*bp, `{"data":[`...))
	enc := json.NewEncoder(answer)
	enc.SetEscapeHTML(false)
	count := 0
	for i, item := range page.Items {
		body, err := res.render(item, view)
		if err != nil {
			return err
		}
		start := answer.Len()
		if err := enc.Encode(body); err != nil {
			return err
		}
		record := answer.Bytes()[start : answer.Len()-1] // less Encode's newline
		room -= len(record) + 1
		eventRoom -= quotedLen(record) - 1 // its quotes, less a comma
		if (room < 0 || eventRoom < 0) && i > 0 {
			// The answer would pass its bound: the rest of the page comes
			// in the next answer.
			answer.Truncate(start)
			page.Partial, page.Next = true, &page.Before[i]
			break
		}
		answer.Bytes()[answer.Len()-1] = ',' // for Encode's newline
		count++
	}
	if count > 0 {
		answer.Truncate(answer.Len() - 1) // the last record's comma
	}
	path := httpapi.BaseURL(r) + r.URL.Path
	meta := records.Paginate(q, page.Total, page.Start, count, path)
	meta.TotalEstimated, meta.Partial = page.TotalEstimated, page.Partial
	links := pageLinks(cursors, path, query, meta, q, page.Next)
	w.Header().Set("Link", linkHeader(links))
	if page.TotalEstimated && q.Search != "" && q.SearchBy == "result" {
		w.Header().Set(searchPartialHeader, "true")
	}
	answer.WriteString("],")
	start := answer.Len()
	if err := enc.Encode(map[string]any{"links": links, "meta": meta, "status": http.StatusOK}); err != nil {
		return err
	}
	// The rest's keys follow data's, without their own opening brace.
	rest := answer.Bytes()[start:]
	copy(rest, rest[1:])
	answer.Truncate(answer.Len() - 1)
	httpapi.WriteEncoded(w, http.StatusOK, answer.Bytes())
	*bp = answer.Bytes()[:0]
	return nil
}

// quotedLen is the length of record, JSON as encoding/json writes it with
// HTML left unescaped, once written as a JSON string, as the Lambda runtime
// writes the response event's body. encoding/json leaves no control
// character, invalid UTF-8, U+2028 or U+2029 in what it writes (it escapes
// them all), so only the quotes and backslashes gain a backslash each.
func quotedLen(record []byte) int {
	return len(record) + 2 + bytes.Count(record, []byte{'"'}) + bytes.Count(record, []byte{'\\'})
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
