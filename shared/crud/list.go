package crud

import (
	"net/http"
	"strings"

	"contentapi/shared/httpapi"
	"contentapi/shared/input"
	"contentapi/shared/records"
)

// Links is the paginator's "links" object.
type Links struct {
	First string  `json:"first"`
	Last  string  `json:"last"`
	Prev  *string `json:"prev"`
	Next  *string `json:"next"`
}

// searchPartialHeader marks a search that stopped at its budget.
const searchPartialHeader = "X-Search-Partial"

func (res *Resource) list(w http.ResponseWriter, r *http.Request) error {
	query, err := httpapi.ParseQuery(r)
	if err != nil {
		return err
	}
	q, err := res.def.ParseList(query)
	if err != nil {
		return err
	}
	page, err := res.table.List(r.Context(), account(r), q)
	if err != nil {
		return err
	}
	data := make([]any, 0, len(page.Items))
	for _, item := range page.Items {
		body, err := res.render(item)
		if err != nil {
			return err
		}
		data = append(data, body)
	}
	path := baseURL(r) + r.URL.Path
	meta := records.Paginate(q, page.Total, len(data), path)
	links := pageLinks(path, query, meta)
	w.Header().Set("Link", linkHeader(links))
	if page.Partial {
		w.Header().Set(searchPartialHeader, "true")
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"data": data, "links": links, "meta": meta, "status": http.StatusOK,
	})
	return nil
}

// pageLinks builds Laravel's first/last/prev/next: prev whenever the page is
// past the first (even past the end), next while a later page exists.
func pageLinks(path string, query input.Params, m records.Meta) Links {
	at := func(n int64) string { return path + "?" + httpapi.QueryWithPage(query, n) }
	l := Links{First: at(1), Last: at(m.LastPage)}
	if m.CurrentPage > 1 {
		prev := at(m.CurrentPage - 1)
		l.Prev = &prev
	}
	if m.CurrentPage < m.LastPage {
		next := at(m.CurrentPage + 1)
		l.Next = &next
	}
	return l
}

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
