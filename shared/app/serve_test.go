package app_test

import (
	"net/http"
	"strings"
	"testing"

	"contentapi/shared/app"
)

// serve is the HTTP front of the stack under test.
func serve(t testing.TB, a *app.App) http.Handler {
	images, documents := a.ImagesHandler(), a.DocumentsHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/documents") {
			documents.ServeHTTP(w, r)
			return
		}
		images.ServeHTTP(w, r)
	})
}
