package httpapi

import (
	"net/http"
	"path"
	"slices"
)

// Route is one operation: a method and a ServeMux path pattern.
type Route struct {
	Method  string
	Pattern string
	Handler http.HandlerFunc
}

// NewMux registers routes on a ServeMux and answers, in the contract's JSON
// shape, what ServeMux would answer in plain text: 405 with Allow for a
// known path with another method, and 404 for any unknown path. A path that
// is not clean ("..", "//", "/./") is a 404 too: ServeMux would redirect it,
// and this API never redirects.
func NewMux(routes []Route) http.Handler {
	mux := newServeMux(routes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "" || path.Clean(p) != p {
			WriteError(w, r, NotFound())
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func newServeMux(routes []Route) *http.ServeMux {
	mux := http.NewServeMux()
	allow := map[string][]string{}
	for _, rt := range routes {
		mux.HandleFunc(rt.Method+" "+rt.Pattern, rt.Handler)
		allow[rt.Pattern] = append(allow[rt.Pattern], rt.Method)
	}
	for pattern, methods := range allow {
		if slices.Contains(methods, http.MethodGet) {
			methods = append(methods, http.MethodHead)
		}
		methods = append(methods, http.MethodOptions)
		slices.Sort(methods)
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			WriteError(w, r, MethodNotAllowed(methods))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, NotFound())
	})
	return mux
}
