// Package crud serves the five operations of a resource over HTTP: one
// implementation that images and documents both use, joining the contract's
// request rules (records), storage (store) and answers (httpapi).
package crud

import (
	"net/http"
	"strconv"

	"contentapi/shared/httpapi"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// Resource serves one resource.
type Resource struct {
	def   *records.Resource
	table *store.Table
	// collection is the resource's path, /api/v1/<name>.
	collection string
	// gen is nil when the deployment does not generate content.
	gen *Generation
	// MaxAnswerBytes bounds a list's body (0: DefaultMaxAnswerBytes); a
	// page that would pass it is cut short, with a next link for the rest.
	MaxAnswerBytes int
	// Cursors sign the list cursors this resource hands out and check
	// those it is given (the zero value: the local stack's public key).
	Cursors records.Cursors
	// Lookup reads the records of other resources the resource's records
	// name (records.Ref); nil where they name none.
	Lookup store.Lookup
}

// New serves def, stored in table.
func New(def *records.Resource, table *store.Table) *Resource {
	return &Resource{def: def, table: table, collection: "/api/v1/" + def.Name}
}

// render shows a stored item as its resource declares (records.Render).
func (res *Resource) render(item store.Item, view records.View) (any, error) {
	return res.def.Render.Render(store.Stored(item), view)
}

// Routes are the resource's operations. PATCH is the same update as PUT:
// Laravel's apiResource routes both, so clients of the original may use it.
// Regenerate is a resource's whose records are generated (Content), whether
// or not the deployment generates (without, it answers 404); a resource
// without Content has none.
func (res *Resource) Routes() []httpapi.Route {
	collection := res.collection
	item := collection + "/{id}"
	routes := []httpapi.Route{
		{Method: http.MethodGet, Pattern: collection, Handler: res.handle(res.list)},
		{Method: http.MethodPost, Pattern: collection, Handler: res.handle(res.create)},
		{Method: http.MethodGet, Pattern: item, Handler: res.handle(res.get)},
		{Method: http.MethodPut, Pattern: item, Handler: res.handle(res.update)},
		{Method: http.MethodPatch, Pattern: item, Handler: res.handle(res.update)},
		{Method: http.MethodDelete, Pattern: item, Handler: res.handle(res.delete)},
	}
	if res.def.Content != nil {
		routes = append(routes, httpapi.Route{Method: http.MethodPost, Pattern: item + "/regenerate", Handler: res.handle(res.regenerate)})
	}
	return routes
}

// handle answers the error an operation returns; storage failures become
// the domain's errors first, which httpapi answers (404, 412, 503).
func (res *Resource) handle(op func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := op(w, r); err != nil {
			httpapi.WriteError(w, r, store.Classify(err))
		}
	}
}

// maxIDDigits bounds an id's length: ids stay below store's scope stride.
const maxIDDigits = 12

// recordID reads the {id} of the path; anything but a plain positive
// integer is a record that does not exist.
func recordID(r *http.Request) (int64, error) {
	s := r.PathValue("id")
	if !plainPositive(s) {
		return 0, httpapi.NotFound()
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, httpapi.NotFound()
	}
	return id, nil
}

// plainPositive reports whether s is a positive integer written plainly,
// of at most maxIDDigits digits: no sign, no leading zero.
func plainPositive(s string) bool {
	if s == "" || len(s) > maxIDDigits || s[0] == '0' {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// target is the record a write names and what the write requires of its
// version (precondition). A write that If-None-Match: * refuses whenever
// the record exists is answered here: 412, or 404 when there is no record.
func (res *Resource) target(r *http.Request) (id int64, pre store.Precondition, err error) {
	if id, err = recordID(r); err != nil {
		return 0, pre, err
	}
	pre, absent, err := precondition(r, id)
	if err != nil || !absent {
		return id, pre, err
	}
	item, err := res.table.Read(r.Context(), account(r), id)
	switch {
	case err != nil:
		return 0, pre, err
	case item == nil:
		return 0, pre, records.ErrNotFound
	}
	return 0, pre, httpapi.PreconditionFailed()
}

func account(r *http.Request) string {
	p, _ := httpapi.PrincipalFrom(r.Context())
	return p.Account
}

// single answers with one record and its ETag.
func (res *Resource) single(w http.ResponseWriter, r *http.Request, status int, item store.Item) error {
	body, err := res.render(item, res.view(r))
	if err != nil {
		return err
	}
	setETag(w, etag(item))
	httpapi.WriteJSON(w, status, map[string]any{"data": body, "status": status})
	return nil
}

func (res *Resource) get(w http.ResponseWriter, r *http.Request) error {
	id, err := recordID(r)
	if err != nil {
		return err
	}
	item, err := res.table.Read(r.Context(), account(r), id)
	if err != nil {
		return err
	}
	if item == nil {
		return records.ErrNotFound
	}
	// The tag is made here only for a conditional get; single makes it
	// for the answer.
	if r.Header.Get("If-None-Match") != "" {
		if tag := etag(item); httpapi.IfNoneMatch(r, tag) {
			setETag(w, tag)
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
	}
	return res.single(w, r, http.StatusOK, item)
}

// create stores the record and, where the deployment generates, requests
// its generation and waits for it as the request prefers (generate.go).
func (res *Resource) create(w http.ResponseWriter, r *http.Request) error {
	in, err := httpapi.ParseBody(r)
	if err != nil {
		return err
	}
	v, err := res.def.ValidateCreate(in)
	if err != nil {
		return err
	}
	named, err := res.named(r.Context(), account(r), v, nil)
	if err != nil {
		return err
	}
	plan := res.plan(r)
	plan.named = named
	item, err := res.table.Create(r.Context(), account(r), v, plan.state)
	if err != nil {
		return err
	}
	item = res.await(w, r, plan, item)
	id, _ := store.IntAttr(item, store.AttrID)
	w.Header().Set("Location", httpapi.BaseURL(r)+res.collection+"/"+strconv.FormatInt(id, 10))
	return res.single(w, r, http.StatusCreated, item)
}

func (res *Resource) update(w http.ResponseWriter, r *http.Request) error {
	id, pre, err := res.target(r)
	if err != nil {
		return err
	}
	in, err := httpapi.ParseBody(r)
	if err != nil {
		return err
	}
	v, err := res.def.ValidateUpdate(in)
	if err != nil {
		return err
	}
	item, err := res.table.Update(r.Context(), account(r), id, v, pre)
	if err != nil {
		return err
	}
	return res.single(w, r, http.StatusOK, item)
}

func (res *Resource) delete(w http.ResponseWriter, r *http.Request) error {
	id, pre, err := res.target(r)
	if err != nil {
		return err
	}
	if err := res.table.Delete(r.Context(), account(r), id, pre); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": res.def.Object, "deleted": true, "status": http.StatusOK,
	})
	return nil
}
