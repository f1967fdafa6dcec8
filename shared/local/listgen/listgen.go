// Package listgen is make generate's first step (cmd/listgen runs it): it
// writes into openapi.yaml and template.yaml the lists and
// values the code declares, so that each is kept in one place: the allowed
// styles, media, filters and resolutions, the templates' names and ids, the
// list parameters' values, the generation statuses and codes, the
// tables' keys and indexes, the resources' functions' routes (lists.go names
// them all; routes.go names the routes' events), the names of the metrics
// the alarms and the dashboard watch (metricnames.go). A value it writes follows
// a comment that names its source:
//
//	# make generate: images.Resource style
//	enum: [3d_render, abstract, ...]
//
// The names of the functions' environment variables follow their keys
// (env.go), in a mapping marked so; it also checks that each function is
// given what app.DeployedEnv says it reads, and nothing else:
//
//	# make generate: each name from its comment
//	Variables:
//	  API_KEYS_TABLE: !Ref ApiKeysTable  # app.EnvKeysTable
//
// Edit the declaration and run `make generate` (which runs this first, then
// derives the client and the served JSON from openapi.yaml); the text
// around a marked value is left as written. TestDocumentsAreGenerated fails
// when a document is not what this would write.
//
// It also writes each template's name beside its brief's id in
// shared/prompts/templates.yaml ("- id: 2 # About us"), from
// documents.Templates.
//
//	go run ./cmd/listgen    # from the repository's root
//
// Generate does it for any list of resources, as TestAThirdResource has a
// resource of its own written into the documents.
package listgen

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"contentapi/shared/app"
	"contentapi/shared/generation"
	"contentapi/shared/local/sam"
)

// Documents are the files whose marked values listgen writes, relative to
// the repository's root; it also names the briefs' templates (Briefs) and
// writes the models' prices into the cost table (PriceTable).
var Documents = []string{"openapi.yaml", "template.yaml"}

// Run rewrites the documents under root as the code declares them, for
// the service's resources (app.Resources).
func Run(root string) error {
	srcs, err := Read(root)
	if err != nil {
		return err
	}
	out, err := Generate(srcs, app.Resources)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if err := os.WriteFile(filepath.Join(root, name), out[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Read reads the documents under root, by name: Documents, Briefs and
// PriceTable.
func Read(root string) (map[string][]byte, error) {
	srcs := map[string][]byte{}
	for _, name := range append(slices.Clip(Documents), Briefs, PriceTable) {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		srcs[name] = b
	}
	return srcs, nil
}

// Generate returns each document of srcs (by name, as Read gives them) as
// listgen writes it for resources. Every declared value must be marked
// somewhere, so that none is left to a hand-kept copy.
func Generate(srcs map[string][]byte, resources []app.Resource) (map[string][]byte, error) {
	values, err := declared(resources)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	out := map[string][]byte{}
	rewrite := func(name string, f func([]byte) ([]byte, error)) error {
		src, ok := srcs[name]
		if !ok {
			return fmt.Errorf("no %s to write", name)
		}
		var err error
		if out[name], err = f(src); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	for _, name := range Documents {
		err := rewrite(name, func(src []byte) ([]byte, error) {
			if err := Unmarked(src, values); err != nil {
				return nil, err
			}
			if err := HandNamedMetrics(src); err != nil {
				return nil, err
			}
			return Rewrite(src, values, used)
		})
		if err != nil {
			return nil, err
		}
	}
	tmpl, err := sam.Parse(out["template.yaml"])
	if err == nil {
		err = checkEnvironment(tmpl, resources)
	}
	if err != nil {
		return nil, fmt.Errorf("template.yaml: %w", err)
	}
	if err := rewrite(Briefs, NameTemplates); err != nil {
		return nil, err
	}
	err = rewrite(PriceTable, func(src []byte) ([]byte, error) { return WritePrices(src, generation.DefaultPrices) })
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if !used[name] {
			return nil, fmt.Errorf("no document marks %q", marker+name)
		}
	}
	return out, nil
}
