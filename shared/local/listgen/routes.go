package listgen

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"contentapi/shared/app"
	"contentapi/shared/crud"
	"contentapi/shared/hookapi"
)

// extraEvents name the template's events of app.ExtraRoutes, in the
// template's order, with why where a route needs it. An event's name is
// its resource's logical ID in the stack, so it stays as deployed; a route
// app.ExtraRoutes gains needs its line here.
var extraEvents = []struct{ route, name, why string }{
	{"GET " + app.OpenAPIPath, "OpenApiDocument", ""},
	{"GET " + app.UsagePath, "Usage", ""},
	{"GET " + app.TemplatesPath, "Templates", ""},
	{"GET " + hookapi.Path, "ListWebhooks", "The webhook endpoints (shared/hookapi). A wrong method on their\npaths reaches this function through the $default route below."},
	{"POST " + hookapi.Path, "CreateWebhook", ""},
	{"GET " + hookapi.Path + "/{id}", "GetWebhook", ""},
	{"PATCH " + hookapi.Path + "/{id}", "UpdateWebhook", ""},
	{"DELETE " + hookapi.Path + "/{id}", "DeleteWebhook", ""},
	{"POST " + hookapi.Path + "/{id}/rotate-secret", "RotateWebhookSecret", ""},
	{"POST " + hookapi.Path + "/{id}/test", "TestWebhook", ""},
	{"GET " + hookapi.Path + "/{id}/deliveries", "ListWebhookDeliveries", ""},
	{"POST " + hookapi.Path + "/{id}/deliveries/{delivery_id}/retry", "RetryWebhookDelivery", ""},
	{"$default", "DefaultRoute", defaultWhy},
}

// Why some routes exist, said above their events.
const (
	patchWhy   = "Laravel accepts PATCH for update, so clients may send either."
	anyWhy     = "The ANY routes bring a wrong method to our code, which answers a\nJSON 405 with Allow instead of the gateway's bare 404."
	generateBy = "Routed whether or not the stack generates: without generation the\nfunction answers 404, as for any path it does not serve."
	defaultWhy = "No Path and no Method: the $default route, so unknown paths get our\nJSON 404 rather than the gateway's {\"message\":\"Not Found\"}."
)

// routeEvents is the Events of a resource's function: its operations
// (crud), an ANY route on each of their paths, so that a wrong method
// reaches the code, then app.ExtraRoutes. The first resource's (explain)
// says why where a route needs it; the others are alike.
func routeEvents(r app.Resource, explain bool) (*yaml.Node, error) {
	def := r.Def
	collection := "/api/v1/" + def.Name
	item := collection + "/{id}"
	events := &yaml.Node{Kind: yaml.MappingNode}
	add := func(name, why, method, path string) {
		props := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{
			plain("!!str", "ApiId"), {Kind: yaml.ScalarNode, Tag: "!Ref", Value: "HttpApi"}}}
		if method != "" && method != "$default" {
			props.Content = append(props.Content, plain("!!str", "Method"), plain("!!str", method),
				plain("!!str", "Path"), plain("!!str", path))
		}
		if !explain {
			why = ""
		}
		events.Content = append(events.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, HeadComment: comment(why)},
			&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
				plain("!!str", "Type"), plain("!!str", "HttpApi"), plain("!!str", "Properties"), props}})
	}
	// Each path's ANY route follows its last operation; the collection's
	// and the item's, together, follow the item's.
	routes := crud.New(def, nil).Routes()
	anyWhySaid := false
	for i, route := range routes {
		object := title(def.Object)
		var name, why string
		switch sub, _ := strings.CutPrefix(route.Pattern, item+"/"); {
		case route.Pattern == collection && route.Method == http.MethodGet:
			name = "List" + title(def.Name)
		case route.Pattern == collection && route.Method == http.MethodPost:
			name = "Create" + object
		case route.Pattern == item:
			op := map[string]string{http.MethodGet: "Get", http.MethodPut: "Update", http.MethodPatch: "Patch", http.MethodDelete: "Delete"}[route.Method]
			if op == "" {
				return nil, fmt.Errorf("%s %s: no event name", route.Method, route.Pattern)
			}
			name = op + object
			if route.Method == http.MethodPatch {
				why = patchWhy
			}
		case sub != route.Pattern && !strings.Contains(sub, "/") && route.Method == http.MethodPost:
			name, why = title(sub)+object, generateBy
		default:
			return nil, fmt.Errorf("%s %s: no event name", route.Method, route.Pattern)
		}
		add(name, why, route.Method, route.Pattern)
		if i+1 < len(routes) && routes[i+1].Pattern == route.Pattern || route.Pattern == collection {
			continue
		}
		if route.Pattern == item {
			add(title(def.Name)+"AnyMethod", anyWhy, "ANY", collection)
			anyWhySaid = true
			add(object+"AnyMethod", "", "ANY", item)
			continue
		}
		why = ""
		if !anyWhySaid {
			why, anyWhySaid = anyWhy, true
		}
		add(name+"AnyMethod", why, "ANY", route.Pattern)
	}
	extras := app.ExtraRoutes(r.Function())
	for _, e := range extraEvents {
		if !slices.Contains(extras, e.route) {
			continue
		}
		extras = slices.DeleteFunc(extras, func(x string) bool { return x == e.route })
		method, path, _ := strings.Cut(e.route, " ")
		add(e.name, e.why, method, path)
	}
	if len(extras) > 0 {
		return nil, fmt.Errorf("%v: name their events in listgen's extraEvents", extras)
	}
	return events, nil
}

func comment(text string) string {
	if text == "" {
		return ""
	}
	return "# " + strings.ReplaceAll(text, "\n", "\n# ")
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
