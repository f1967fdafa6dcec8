package doccheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// Webhooks lists the event types the document's webhooks section declares,
// sorted.
func (v *OpenAPIValidator) Webhooks() []string {
	var types []string
	for name := range v.doc.Webhooks {
		types = append(types, name)
	}
	slices.Sort(types)
	return types
}

// ValidateWebhook checks a delivery, its headers and its JSON body, against
// the webhook of its event type (the body's "type") in the document's
// webhooks section: every header parameter the operation declares, and the
// body against its request body's schema.
func (v *OpenAPIValidator) ValidateWebhook(header http.Header, body []byte) error {
	var event struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &event); err != nil {
		return fmt.Errorf("a delivery's body is not JSON: %w", err)
	}
	item := v.doc.Webhooks[event.Type]
	if item == nil || item.Post == nil {
		return fmt.Errorf("the document has no webhook %q", event.Type)
	}
	op := item.Post
	var errs []error
	for _, ref := range op.Parameters {
		p := ref.Value
		if p == nil || p.In != openapi3.ParameterInHeader {
			continue
		}
		raw := header.Get(p.Name)
		if raw == "" {
			if p.Required {
				errs = append(errs, fmt.Errorf("%s: header %s missing", event.Type, p.Name))
			}
			continue
		}
		var value any = raw
		if p.Schema.Value.Type.Is(openapi3.TypeInteger) {
			n, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: header %s %q is not an integer", event.Type, p.Name, raw))
				continue
			}
			value = n
		}
		if err := p.Schema.Value.VisitJSON(value, openapi3.EnableJSONSchema2020()); err != nil {
			errs = append(errs, fmt.Errorf("%s: header %s: %w", event.Type, p.Name, err))
		}
	}
	media := op.RequestBody.Value.Content.Get("application/json")
	if media == nil {
		return errors.Join(append(errs, fmt.Errorf("%s: no JSON body in the document", event.Type))...)
	}
	var decoded any
	if err := json.Unmarshal(body, &decoded); err != nil {
		return errors.Join(append(errs, err)...)
	}
	if err := media.Schema.Value.VisitJSON(decoded, openapi3.EnableJSONSchema2020()); err != nil {
		errs = append(errs, fmt.Errorf("%s: body: %w", event.Type, err))
	}
	return errors.Join(errs...)
}
