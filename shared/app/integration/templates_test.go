package integration_test

import (
	"testing"

	"contentapi/shared/app"
	"contentapi/shared/documents"
)

// GET /api/v1/templates lists the 52 templates a document's template_id
// names, each as a document's template shows it and with a line on what it
// writes, for a read-only key too.
func TestTemplatesAreListed(t *testing.T) {
	s := newStack(t)
	r := s.do(request{method: "GET", path: app.TemplatesPath, key: s.readKey})
	expect(t, r, 200)
	list := r.list()
	if len(list) != 52 {
		t.Fatalf("%d templates, want 52", len(list))
	}
	for i, e := range list {
		tpl, _ := e.(map[string]any)
		id := int64(i + 1)
		if num(tpl["id"]) != id || tpl["name"] != documents.Templates[id] || tpl["description"] == "" || len(tpl) != 3 {
			t.Errorf("template %d: %v", id, tpl)
		}
	}
	created := createDocument(t, s, "Launch", "template_id", "9")
	if tpl, _ := list[8].(map[string]any); created["template"].(map[string]any)["name"] != tpl["name"] {
		t.Errorf("a document of template 9 shows %v, the list %v", created["template"], tpl)
	}
	expect(t, s.do(request{method: "GET", path: app.TemplatesPath}), 401)
	expect(t, s.do(request{method: "POST", path: app.TemplatesPath, key: s.writeKey}), 405)
}
