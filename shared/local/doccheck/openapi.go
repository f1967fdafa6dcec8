package doccheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// ContentType is the one type of every response body, as the contract has it.
const ContentType = "application/json; charset=utf-8"

// OpenAPIValidator checks requests and responses against an OpenAPI 3.1 document.
type OpenAPIValidator struct {
	doc    *openapi3.T
	router routers.Router
	// fallback are the answers to a request outside the document's
	// operations: an unknown path, or a method its path does not take.
	// Authentication, and so rate limiting, come before routing.
	fallbackPath, fallbackMethod map[int]*openapi3.ResponseRef
}

// NewOpenAPIValidator loads a document, JSON or YAML, resolving its references.
func NewOpenAPIValidator(doc []byte) (*OpenAPIValidator, error) {
	loader := openapi3.NewLoader()
	t, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	relaxPlanned(t)
	registerFormDecoder.Do(func() { openapi3filter.RegisterBodyDecoder(formType, formDecoder) })
	router, err := gorillamux.NewRouter(t)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	v := &OpenAPIValidator{doc: t, router: router}
	component := func(name string) *openapi3.ResponseRef {
		if t.Components == nil {
			return nil
		}
		return t.Components.Responses[name]
	}
	common := map[int]string{401: "Unauthenticated", 429: "TooManyRequests", 500: "ServerError", 503: "ServiceUnavailable"}
	v.fallbackPath = map[int]*openapi3.ResponseRef{404: component("NotFound")}
	v.fallbackMethod = map[int]*openapi3.ResponseRef{405: component("MethodNotAllowed")}
	for status, name := range common {
		v.fallbackPath[status] = component(name)
		v.fallbackMethod[status] = component(name)
	}
	for _, m := range []map[int]*openapi3.ResponseRef{v.fallbackPath, v.fallbackMethod} {
		for status, ref := range m {
			if ref == nil {
				return nil, fmt.Errorf("components.responses lacks the answer for status %d outside the operations", status)
			}
		}
	}
	return v, nil
}

// ValidateDocument checks the document against the OpenAPI specification
// of its version, examples and defaults included.
func (v *OpenAPIValidator) ValidateDocument() error {
	if !v.doc.IsOpenAPI31OrLater() || strings.HasPrefix(v.doc.OpenAPI, "3.2") {
		return fmt.Errorf("openapi is %q, want 3.1.x", v.doc.OpenAPI)
	}
	ctx := context.Background()
	if err := v.doc.Validate(ctx, openapi3.EnableExamplesValidation()); err != nil {
		return err
	}
	return v.validateSchemaExamples()
}

// validateSchemaExamples checks the examples of schemas (the JSON Schema
// "examples" keyword of OpenAPI 3.1) against their schemas, which the
// library's document validation leaves alone: they are annotations to JSON
// Schema, but a wrong one misleads every reader of the document.
func (v *OpenAPIValidator) validateSchemaExamples() error {
	var errs []error
	seen := map[*openapi3.Schema]bool{}
	var walk func(where string, ref *openapi3.SchemaRef)
	walk = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		for i, example := range s.Examples {
			if err := s.VisitJSON(example, openapi3.EnableJSONSchema2020()); err != nil {
				errs = append(errs, fmt.Errorf("%s: examples[%d]: %w", where, i, err))
			}
		}
		for name, p := range s.Properties {
			walk(where+".properties."+name, p)
		}
		walk(where+".items", s.Items)
		for _, list := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range list {
				walk(where, sub)
			}
		}
	}
	if v.doc.Components != nil {
		names := make([]string, 0, len(v.doc.Components.Schemas))
		for name := range v.doc.Components.Schemas {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			walk("components.schemas."+name, v.doc.Components.Schemas[name])
		}
	}
	return errors.Join(errs...)
}

// Operations lists the document's operations as "METHOD /path/{param}",
// sorted, but for those marked x-planned (PlannedOperations).
func (v *OpenAPIValidator) Operations() []string { return v.operations(false) }

// Operation names the document's operation that serves method and target
// (the path with its query string), as Operations lists it.
func (v *OpenAPIValidator) Operation(method, target string) (string, error) {
	req, err := newRequest(method, target, nil, nil)
	if err != nil {
		return "", err
	}
	route, _, err := v.router.FindRoute(req)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", method, target, err)
	}
	return route.Method + " " + route.Path, nil
}

// ValidateRequest checks a request against the document: path and query
// parameters, headers, the bearer key's presence and the body. target is
// the path with its query string. Header values are taken as HTTP defines
// them, without the white space around them.
func (v *OpenAPIValidator) ValidateRequest(method, target string, header http.Header, body []byte) error {
	trimmed := http.Header{}
	for k, vs := range header {
		for _, s := range vs {
			trimmed.Add(k, strings.Trim(s, " \t"))
		}
	}
	req, err := newRequest(method, target, trimmed, body)
	if err != nil {
		return err
	}
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, target, err)
	}
	opts := &openapi3filter.Options{MultiError: true, AuthenticationFunc: bearerOnly}
	opts.WithCustomSchemaErrorFunc(schemaError)
	err = openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route, Options: opts,
	})
	if err != nil {
		return fmt.Errorf("%s %s: request does not match the document: %w", method, target, err)
	}
	return nil
}

// schemaError keeps a schema mismatch to its reason, which names the place
// in the body; the library would add the whole schema and value.
func schemaError(err *openapi3.SchemaError) string { return err.Reason }

// bearerOnly checks that a request carries a key where the document asks
// for one; whether the key is good is the server's business.
func bearerOnly(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	scheme := in.SecurityScheme
	if scheme == nil || scheme.Type != "http" || !strings.EqualFold(scheme.Scheme, "bearer") {
		return fmt.Errorf("security scheme %q is not HTTP bearer", in.SecuritySchemeName)
	}
	kind, token, _ := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !strings.EqualFold(kind, "Bearer") || strings.TrimSpace(token) == "" {
		return errors.New("no bearer token")
	}
	return nil
}

// ValidateResponse checks an answer to method and target (the path with
// its query string) against the document: that its status is documented
// for the operation, its headers (required ones present, every value
// valid, and no header of the API's own that the document does not
// declare for that answer), its Content-Type and its body, which must not
// hold a property the document marks x-planned.
//
// A request outside the document's operations may only have the answers
// the document describes for it: 404 for an unknown path, 405 for a method
// the path does not take, and those that come before routing (401, 429,
// 500, 503). OPTIONS is the CORS preflight, 204 without a body on any
// path; on a listed path, its headers are checked too.
func (v *OpenAPIValidator) ValidateResponse(method, target string, status int, header http.Header, body []byte) error {
	where := fmt.Sprintf("%s %s -> %d", method, target, status)
	if _, err := v.Operation(method, target); err != nil && method == http.MethodOptions {
		// The preflight of a path the document does not list.
		if status != http.StatusNoContent || len(body) > 0 {
			return fmt.Errorf("%s: a preflight answers 204 without a body", where)
		}
		return nil
	}
	route, ref, err := v.response(method, target, status)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	errs := v.checkResponse(route, ref, method, header, body)
	if media := ref.Value.Content.Get("application/json"); len(errs) == 0 && status < 300 && media != nil {
		if fields := plannedServed(media.Schema, body); len(fields) > 0 {
			errs = append(errs, plannedError(fields))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: answer does not match the document:\n%w", where, errors.Join(errs...))
	}
	return nil
}

// response finds what the document says a request may be answered with
// status: the status itself, or its range ("4XX"). An operation's default
// answer does not count: every status the service gives must be listed.
func (v *OpenAPIValidator) response(method, target string, status int) (*routers.Route, *openapi3.ResponseRef, error) {
	req, err := newRequest(method, target, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	route, _, err := v.router.FindRoute(req)
	var fallback map[int]*openapi3.ResponseRef
	switch {
	case errors.Is(err, routers.ErrPathNotFound):
		fallback = v.fallbackPath
	case errors.Is(err, routers.ErrMethodNotAllowed):
		fallback = v.fallbackMethod
	case err != nil:
		return nil, nil, err
	}
	if fallback != nil {
		ref := fallback[status]
		if ref == nil {
			return nil, nil, fmt.Errorf("the path or method is not in the document (%v), which allows only %v here", err, statuses(fallback))
		}
		return &routers.Route{Spec: v.doc, Path: req.URL.Path, Method: method}, ref, nil
	}
	ref := route.Operation.Responses.Status(status)
	if ref == nil {
		ref = route.Operation.Responses.Value(fmt.Sprintf("%dXX", status/100))
	}
	if ref == nil || ref.Value == nil {
		return nil, nil, fmt.Errorf("status %d is not documented for %s %s", status, route.Method, route.Path)
	}
	return route, ref, nil
}

func statuses(m map[int]*openapi3.ResponseRef) []int {
	var s []int
	for status := range m {
		s = append(s, status)
	}
	slices.Sort(s)
	return s
}

// checkResponse validates headers and body against one documented answer.
// The library skips some statuses (304) and methods (HEAD) entirely, so the
// answer is presented to it as the only, 200, response of a GET.
func (v *OpenAPIValidator) checkResponse(route *routers.Route, ref *openapi3.ResponseRef, method string, header http.Header, body []byte) []error {
	var errs []error
	resp := ref.Value
	hasContent := len(resp.Content) > 0 && method != http.MethodHead
	switch {
	case hasContent && len(body) == 0:
		errs = append(errs, errors.New("the body is empty, but the document describes one"))
	case !hasContent && len(body) > 0:
		errs = append(errs, fmt.Errorf("the document describes no body, but there is one: %.200q", body))
	}
	if len(body) > 0 {
		if ct := header.Get("Content-Type"); ct != ContentType {
			errs = append(errs, fmt.Errorf("Content-Type is %q, want %q", ct, ContentType))
		}
	}
	for name := range header {
		if !transportHeader(name) && !declared(resp.Headers, name) {
			errs = append(errs, fmt.Errorf("header %s is not declared for this answer", name))
		}
	}

	req, err := newRequest(http.MethodGet, route.Path, nil, nil)
	if err != nil {
		return append(errs, err)
	}
	synthetic := &routers.Route{Spec: v.doc, Path: route.Path, Method: http.MethodGet,
		Operation: &openapi3.Operation{Responses: openapi3.NewResponses(openapi3.WithStatus(http.StatusOK, ref))}}
	opts := &openapi3filter.Options{
		MultiError: true, IncludeResponseStatus: true,
		ExcludeResponseBody: !hasContent || len(body) == 0,
	}
	opts.WithCustomSchemaErrorFunc(schemaError)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: synthetic},
		Status:                 http.StatusOK,
		Header:                 header,
		Options:                opts,
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// transportHeader tells headers that belong to HTTP, CORS and API Gateway
// rather than to the API, which the document describes once in prose
// instead of on every answer.
func transportHeader(name string) bool {
	name = http.CanonicalHeaderKey(name)
	switch name {
	case "Content-Type", "Content-Length", "Date", "Vary", "Connection", "Transfer-Encoding", "Keep-Alive",
		"Apigw-Requestid":
		return true
	}
	return strings.HasPrefix(name, "Access-Control-")
}

func declared(headers openapi3.Headers, name string) bool {
	for k := range headers {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

func newRequest(method, target string, header http.Header, body []byte) (*http.Request, error) {
	var r io.Reader = http.NoBody
	if len(body) > 0 {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://localhost"+target, r)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = slices.Clone(vs)
	}
	return req, nil
}
