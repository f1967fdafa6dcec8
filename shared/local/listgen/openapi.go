package listgen

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"

	"contentapi/shared/app"
	"contentapi/shared/records"
	"contentapi/shared/webhook"
)

// resourceOpenAPI is what openapi.yaml says of every resource, written from
// its declaration (resource.openapi.tmpl): its paths ("paths of the
// resources"), its responses ("responses of the resources") and the schemas
// that wrap its records ("schemas of the resources"), each a run of keys
// listgen writes (runTag).
//
//go:embed resource.openapi.tmpl
var resourceOpenAPI string

var openAPITemplates = template.Must(template.New("openapi").Funcs(template.FuncMap{
	"ticks":  ticks,
	"either": func(s []string) string { return strings.Join(s, " or ") },
	"join":   strings.Join,
	"preflight": func(r resourceDoc, suffix string) preflightDoc {
		op := r.Titles
		switch suffix {
		case "/{id}":
			op = r.Title
		case "/{id}/regenerate":
			op = r.Title + "Regenerate"
		}
		return preflightDoc{Operation: op, Path: r.Name + suffix, Anchors: r.First && suffix == ""}
	},
}).Parse(resourceOpenAPI))

// resourceDoc is a resource as resource.openapi.tmpl writes it.
type resourceDoc struct {
	// First is the first resource, whose preflight carries the anchors the
	// others name.
	First bool
	// Name and Object as declared (images, image), Title and Titles as
	// they start the operations' and components' names (Image, Images),
	// A its article (an image).
	Name, Object, Title, Titles, A string
	// Favorite: its records start unfavored.
	Favorite bool
	// Generates is what its generation makes; nil for a resource without
	// (no Content): it then has no regenerate operation.
	Generates *generatesDoc
	// Counted are the kinds of the monthly limits its creates count or
	// check; ReadsRefused and CreatesRefused the 429 its reads and its
	// creates answer (a quota's where one applies).
	Counted                      []string
	ReadsRefused, CreatesRefused string
	Scope                        *scopeDoc
	Filters                      []filterDoc
	SearchBy                     []string
	// SearchesRecords are what search_by may name that is read in the
	// records, not in the index (documents' result).
	SearchesRecords []string
	// Updates and Regenerates are the fields an update and a regenerate
	// take; GeneratedUpdates the generated field, if an update takes it.
	Updates, Regenerates []string
	GeneratedUpdates     string
	// Answers are the schemas wrapping one record, by status.
	Answers    []answerDoc
	MaxPerPage int
	// Events are the webhooks' event types its generation ends with; none
	// for a resource that does not generate.
	Events []eventDoc
}

// eventDoc is an event type as the document's webhooks name it.
type eventDoc struct {
	Type, Operation, Summary, When string
}

type generatesDoc struct {
	// Plural and One name what is made: pictures and a picture, text.
	Plural, One string
	Pictures    bool
	// Field is the one the generation writes (result).
	Field string
}

type scopeDoc struct {
	Param string
	// Default is the scope a list without the parameter reads.
	Default int
	// Component is the parameter's name in components, written by hand
	// with its values (TemplateIdScope).
	Component string
}

type filterDoc struct {
	Param string
	// Parameter names a whole parameter in components (FavoriteFilter);
	// else Schema names the parameter's schema (StyleFilter), which
	// openapi.yaml has by hand.
	Parameter, Schema string
	// OnRecord: matched on the records, which the list indexes do not
	// carry (records.Filter.OnRecord).
	OnRecord bool
}

type answerDoc struct {
	Name   string
	Status int
}

type preflightDoc struct {
	Operation, Path string
	Anchors         bool
}

// runTag tags the value of a run of keys: its Value is the keys' text, as
// they read at the left margin.
const runTag = "!run"

// openAPIRuns declares the runs of keys openapi.yaml has of the resources.
func openAPIRuns(v map[string]*yaml.Node, resources []app.Resource) error {
	sections := map[string]string{"paths": "paths", "responses": "responses", "schemas": "schemas", "webhooks": "webhooks"}
	texts := map[string][]string{}
	for i, r := range resources {
		doc, err := docOf(r, i == 0)
		if err != nil {
			return fmt.Errorf("openapi.yaml of %s: %w", r.Def.Name, err)
		}
		for section := range sections {
			var b strings.Builder
			if err := openAPITemplates.ExecuteTemplate(&b, section, doc); err != nil {
				return err
			}
			if text := strings.TrimSpace(wrapLiterals(b.String())); text != "" {
				texts[section] = append(texts[section], text)
			}
		}
	}
	for section := range sections {
		sep := "\n"
		if section == "paths" {
			sep = "\n\n"
		}
		v[section+" of the resources"] = &yaml.Node{Kind: yaml.ScalarNode, Tag: runTag,
			Value: strings.Join(texts[section], sep) + "\n"}
	}
	return nil
}

// docOf is what resource.openapi.tmpl reads of r.
func docOf(r app.Resource, first bool) (resourceDoc, error) {
	def := r.Def
	d := resourceDoc{First: first, Name: def.Name, Object: def.Object, Title: title(def.Object), Titles: title(def.Name),
		A: "a", SearchBy: def.SearchBy, MaxPerPage: slices.Max(records.PerPages),
		ReadsRefused: "TooManyRequests", CreatesRefused: "TooManyRequests"}
	if strings.ContainsRune("aeiou", rune(def.Object[0])) {
		d.A = "an"
	}
	if len(def.SearchBy) == 0 {
		return d, fmt.Errorf("search_by has no value")
	}
	for _, f := range def.SearchBy {
		if f != "name" {
			d.SearchesRecords = append(d.SearchesRecords, f)
		}
	}
	for _, k := range r.Quota.Kinds() {
		if k != "reads" {
			d.Counted = append(d.Counted, string(k))
		}
	}
	if len(d.Counted) > 0 {
		d.CreatesRefused = "TooManyRequestsOrQuota"
	}
	if r.Quota.MetersReads {
		d.ReadsRefused = "TooManyRequestsOrQuota"
	}
	for _, f := range def.Fields {
		if f.Name == "favorite" {
			d.Favorite = true
		}
		if f.Update {
			d.Updates = append(d.Updates, f.Name)
			if f.Name == def.Generated {
				d.GeneratedUpdates = f.Name
			}
		}
		if f.Regenerate {
			d.Regenerates = append(d.Regenerates, f.Name)
		}
	}
	if len(d.Updates) == 0 {
		return d, fmt.Errorf("an update takes no field")
	}
	d.Answers = []answerDoc{{"Response", 200}, {"CreatedResponse", 201}}
	if c := def.Content; c != nil {
		g := &generatesDoc{Plural: "text", One: "text", Field: def.Generated}
		if c.Picture {
			g.Plural, g.One, g.Pictures = "pictures", "picture", true
		}
		d.Generates = g
		d.Answers = append(d.Answers, answerDoc{"AcceptedResponse", 202})
		d.Events = []eventDoc{
			{Type: webhook.Generated(def.Object), Operation: title(def.Object) + "Generated", Summary: title(def.Object) + " generated",
				When: "wrote its " + g.One + " (`generation.status` `done`)"},
			{Type: webhook.Failed(def.Object), Operation: title(def.Object) + "Failed", Summary: title(def.Object) + " generation failed",
				When: "ended `failed`"},
		}
		if len(d.Regenerates) == 0 {
			return d, fmt.Errorf("a regenerate takes no field")
		}
	}
	if s := def.Scope; s != nil {
		d.Scope = &scopeDoc{Param: s.Field, Default: int(s.Default), Component: camel(s.Field) + "Scope"}
	}
	// A flag's filter is a whole parameter every resource shares
	// (FavoriteFilter); any other's schema is written by hand beside its
	// input schema, with its values (StyleFilter: the style or empty).
	for _, f := range def.Filters {
		if _, flag := f.Kind.(records.Bool); flag {
			d.Filters = append(d.Filters, filterDoc{Param: f.Param, Parameter: camel(f.Param) + "Filter"})
			continue
		}
		d.Filters = append(d.Filters, filterDoc{Param: f.Param, Schema: camel(f.Param) + "Filter", OnRecord: f.OnRecord})
	}
	return d, nil
}

// camel is a snake_case name in CamelCase: template_id is TemplateId.
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part != "" {
			b.WriteString(title(part))
		}
	}
	return b.String()
}

// ticks lists names as code: `a`, `b` and `c`.
func ticks(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`" + n + "`"
	}
	if len(quoted) < 2 {
		return strings.Join(quoted, "")
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " and " + quoted[len(quoted)-1]
}

// wrapLiterals wraps the lines of text's literal block scalars (a key's
// "|" value) that pass width at spaces, each new line at its line's
// indentation: the prose the templates write a paragraph to a line reads
// as the hand-written prose around it.
func wrapLiterals(text string) string {
	var out []string
	block := -1 // the indentation of the key whose literal block this is, or -1
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if block >= 0 && trimmed != "" && indent <= block {
			block = -1
		}
		if block < 0 {
			out = append(out, line)
			if strings.HasSuffix(line, ": |") || strings.HasSuffix(line, " |") && strings.Contains(line, ": &") {
				block = indent
			}
			continue
		}
		for len(line) > width {
			cut := strings.LastIndex(line[:width+1], " ")
			if cut <= indent {
				break
			}
			out = append(out, line[:cut])
			line = strings.Repeat(" ", indent) + line[cut+1:]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
