package client

import "strconv"

// TemplateScope is a documents list's template_id: a template's id
// (TemplateScope(9)), or AllTemplates for every template's documents.
type TemplateScope int

// AllTemplates lists the documents of every template (template_id=all).
const AllTemplates TemplateScope = 0

// MarshalText is the parameter as the query carries it: the id, or "all".
func (s TemplateScope) MarshalText() ([]byte, error) {
	if s == AllTemplates {
		return []byte("all"), nil
	}
	return strconv.AppendInt(nil, int64(s), 10), nil
}
