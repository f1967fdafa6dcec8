// GET /api/v1/templates: the document templates a client may name in
// template_id, so that it need not copy the table. Served by the first
// resource's function, from the declaration (documents.Templates).

package app

import (
	"net/http"

	"contentapi/shared/documents"
	"contentapi/shared/httpapi"
)

// TemplatesPath is where the service lists the document templates.
const TemplatesPath = "/api/v1/templates"

// template is a document template as the list shows it: the document's
// template object ({"id", "name"}) and what it writes.
type template struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// TemplatesRoute serves the templates, by id, in one answer: it reads
// nothing, so it counts against no monthly limit.
func TemplatesRoute() httpapi.Route {
	list := make([]template, 0, len(documents.Templates)-1)
	for id := documents.FreestyleID; id < len(documents.Templates); id++ {
		list = append(list, template{int64(id), documents.Templates[id], documents.TemplateDescriptions[id]})
	}
	return httpapi.Route{Method: http.MethodGet, Pattern: TemplatesPath, Handler: func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": list, "status": http.StatusOK})
	}}
}
