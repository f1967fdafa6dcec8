package app

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"contentapi/shared/documents"
	"contentapi/shared/generation"
	"contentapi/shared/images"
	"contentapi/shared/prompts"
	"contentapi/shared/quota"
	"contentapi/shared/records"
	"contentapi/shared/store"
	"contentapi/shared/voices"
	"contentapi/shared/webhook"
)

// Resources are the resources the service serves, each with a Lambda
// function and a table of its own. Everything that exists once per resource
// loops over this list: the entry points, the configuration, the routes,
// and the tests that hold template.yaml, openapi.yaml and the events to the
// code. The first resource's function also serves the OpenAPI document and
// answers unknown paths.
//
// Adding a resource is its package (as shared/images) and a line here, then
// its function in functions/ and its parts of template.yaml and
// openapi.yaml: docs/architecture.md, "Adding a resource", lists them.
var Resources = []Resource{
	{Def: images.Resource, Quota: quota.Policy{Counts: quota.Images, MetersReads: true, History: true}},
	{Def: documents.Resource,
		Quota:   quota.Policy{Counts: quota.Documents, Checks: []quota.Kind{quota.Words}, MetersReads: true, History: true},
		Reserve: quota.Reserve{Kind: quota.Words, N: prompts.MaxAnswerTokens}},
	// A voice costs no model call and counts against no monthly limit
	// (an account holds at most voices.MaxPerAccount); reading voices
	// counts against the reads, as reading any resource does, with a
	// tenth of the deployment's default: all 50 voices are at most about
	// 100 read units, so a tenth is 1,000 full lists a month, and a key's
	// worst day (docs/accounts.md) stays what two resources made it.
	{Def: voices.Resource, Quota: quota.Policy{MetersReads: true, History: true}, DefaultReadsPercent: 10},
}

// Kinds are the kinds of the accounts' monthly limits: each that a
// resource counts or checks, in the order of Resources, then the webhooks'
// (WebhooksQuota), and reads last. A resource that counts a kind of its
// own brings it with it: its default (EnvDefaultMonthly), its flag of
// `apikey limits` and its usage.
var Kinds = KindsOf(Resources)

// WebhooksQuota is what the webhooks count against the accounts' monthly
// limits: every delivery attempt (shared/hooksender), on the account's
// counter item in the webhooks' table, as a resource's kinds are on its
// table's. The app adds the deployment's defaults.
var WebhooksQuota = quota.Policy{Counts: quota.Deliveries, History: true}

// KindsOf are the kinds of resources' limits and the webhooks', as Kinds
// are of Resources'.
func KindsOf(resources []Resource) []quota.Kind {
	var kinds []quota.Kind
	reads := false
	policies := make([]quota.Policy, 0, len(resources)+1)
	for _, r := range resources {
		policies = append(policies, r.Quota)
	}
	for _, p := range append(policies, WebhooksQuota) {
		for _, k := range p.Kinds() {
			switch {
			case k == quota.Reads:
				reads = true
			case !slices.Contains(kinds, k):
				kinds = append(kinds, k)
			}
		}
	}
	if reads {
		kinds = append(kinds, quota.Reads)
	}
	if slices.ContainsFunc(resources, func(r Resource) bool { return r.Def.Content != nil }) {
		// Every generation spends against one limit, on the account's
		// spend ledger (shared/store, ledger.go).
		kinds = append(kinds, quota.Spend)
	}
	return kinds
}

// EventTypes are the webhooks' event types: each generating resource's
// two, named by its records' object ("document.generated",
// "document.failed"), by object in alphabetical order (the order the API
// has shown since before images came first in Resources), then
// webhook.Test. A resource that generates brings its events with it.
var EventTypes = EventTypesOf(Resources)

// EventTypesOf are the event types of resources, as EventTypes are of
// Resources'.
func EventTypesOf(resources []Resource) []string {
	objects := generatingObjects(resources, func(*generation.Content) bool { return true })
	slices.Sort(objects)
	return webhook.Types(objects...)
}

// generatingObjects are the objects ("image") of the resources whose
// content is generated and which meets the condition, in their order.
func generatingObjects(resources []Resource, which func(*generation.Content) bool) []string {
	var objects []string
	for _, r := range resources {
		if r.Def.Content != nil && which(r.Def.Content) {
			objects = append(objects, r.Def.Object)
		}
	}
	return objects
}

// Resource is one resource as the service deploys it. The names of its
// function, table and table variable follow from its name, so template.yaml
// declares them once and the code derives them.
type Resource struct {
	Def *records.Resource
	// Quota is what the resource's creates and regenerates count against
	// the account's monthly limits (the app adds the deployment's
	// defaults). Its kinds' usage and limits live in the resource's table.
	Quota quota.Policy
	// Reserve is what one generation may use of other kinds (a document's
	// words), held from its create or regenerate until it ends where the
	// deployment generates (quota.Policy.Reserve).
	Reserve quota.Reserve
	// DefaultReadsPercent is the share of the deployment's default reads
	// limit that applies to the resource's reads, where it is not the
	// whole (0). An account's own reads limit applies whole.
	DefaultReadsPercent int64
}

// Policy is the resource's quota policy under the deployment's defaults.
func (r Resource) Policy(defaults quota.Limits) quota.Policy {
	p := r.Quota
	p.Defaults = defaults
	if reads, limited := defaults[quota.Reads].Value(); limited && r.DefaultReadsPercent > 0 {
		p.Defaults = maps.Clone(defaults)
		p.Defaults[quota.Reads] = quota.Max(reads * r.DefaultReadsPercent / 100)
	}
	return p
}

// Function is the logical ID of the resource's function in template.yaml:
// "ImagesFunction".
func (r Resource) Function() string { return title(r.Def.Name) + "Function" }

// Table is the logical ID of the resource's table in template.yaml:
// "ImagesTable".
func (r Resource) Table() string { return title(r.Def.Name) + "Table" }

// TableEnv is the variable that gives the function its table's name:
// "IMAGES_TABLE".
func (r Resource) TableEnv() string { return strings.ToUpper(r.Def.Name) + "_TABLE" }

func title(name string) string { return strings.ToUpper(name[:1]) + name[1:] }

// resources are the resources the app serves (Config.Resources).
func (a *App) resources() []Resource {
	if a.cfg.Resources != nil {
		return a.cfg.Resources
	}
	return Resources
}

// lookupResource finds a served resource by its name ("images").
// named is the lookup of the records that rs's records name by their Ref
// fields (records.Ref: a document's voice), in the tables of the
// resources named; nil where they name none.
func (a *App) named(rs ...Resource) (store.Lookup, error) {
	var tables []*store.Table
	for _, name := range NamedBy(rs...) {
		r, ok := a.lookupResource(name)
		if !ok {
			return nil, fmt.Errorf("no resource %q, which a Ref names", name)
		}
		t, err := a.table(r)
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	if len(tables) == 0 {
		return nil, nil
	}
	return store.LookupIn(tables...), nil
}

// NamedBy are the resources rs's records name by their Ref fields, each
// once, in the order met.
func NamedBy(rs ...Resource) []string {
	var names []string
	for _, r := range rs {
		for _, f := range r.Def.Refs() {
			if name := f.Kind.(records.Ref).Resource; !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

func (a *App) lookupResource(name string) (Resource, bool) {
	for _, r := range a.resources() {
		if r.Def.Name == name {
			return r, true
		}
	}
	return Resource{}, false
}
