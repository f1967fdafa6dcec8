package integration_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"contentapi/shared/local/sam"
)

// statefulTypes are the resource types that keep something when deleted
// or replaced: each says what happens to it, not CloudFormation's default.
var statefulTypes = []string{"AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::SQS::Queue", "AWS::SecretsManager::Secret", "AWS::Logs::LogGroup"}

// Every stateful resource chooses its fate on deletion and replacement,
// the same for both, but that a log group deleted with the stack may be
// kept when replaced (a change of its class makes a new group), so that
// its lines last until they expire; the generation failures queue is
// kept, as the tables are, so a stack's last failures outlive it.
func TestTemplateStatefulResourcesChooseTheirFate(t *testing.T) {
	tmpl := loadTemplate(t)
	for id, r := range tmpl.Resources {
		if !slices.Contains(statefulTypes, r.Type) {
			continue
		}
		keptLines := r.Type == sam.LogGroupType && r.DeletionPolicy == "Delete" && r.UpdateReplacePolicy == "Retain"
		if r.DeletionPolicy == "" || r.UpdateReplacePolicy != r.DeletionPolicy && !keptLines {
			t.Errorf("%s (%s): DeletionPolicy %q, UpdateReplacePolicy %q", id, r.Type, r.DeletionPolicy, r.UpdateReplacePolicy)
		}
	}
	if p := tmpl.Resources["GenerationFailures"].DeletionPolicy; p != "Retain" {
		t.Errorf("GenerationFailures: DeletionPolicy %q, want Retain", p)
	}
}

// What sam delete keeps is each named in docs/deploying.md's Retiring the stack,
// with what it costs meanwhile and how it goes, and its output is read
// before sam delete, which takes the outputs with it.
func TestDocsRetiringTheStack(t *testing.T) {
	section := section(t, docPage(t, "docs/deploying.md"), "## Retiring the stack", "\n## ")
	deleteAt := strings.Index(section, "sam delete --")
	if deleteAt < 0 {
		t.Fatal("the section runs no sam delete")
	}
	tmpl := loadTemplate(t)
	retained := 0
	for id, r := range tmpl.Resources {
		if r.DeletionPolicy != "Retain" {
			continue
		}
		retained++
		if !strings.Contains(section, "`"+id+"`") {
			t.Errorf("%s is kept after sam delete; the section does not name it", id)
		}
		for name, out := range tmpl.Outputs {
			if reflect.DeepEqual(out["Value"], map[string]any{"Ref": id}) {
				if at := strings.Index(section, "$(output "+name+")"); at < 0 || at > deleteAt {
					t.Errorf("output %s (%s) is not read before sam delete", name, id)
				}
			}
		}
	}
	if retained == 0 {
		t.Fatal("the template keeps nothing")
	}
}

// docs/deploying.md's cost lines name what the template turns on, and only that:
// a cost for a feature the template left off would mislead as much as a
// feature whose cost goes unsaid.
func TestDocsCostsMatchTheTemplate(t *testing.T) {
	tmpl := loadTemplate(t)
	costs := section(t, docPage(t, "docs/deploying.md"), "**What it costs.**", "\n#")
	tracing := false
	for _, f := range tmpl.Functions() {
		tracing = tracing || tmpl.ResolveParameters(f.Properties["Tracing"]) == "Active"
	}
	sse, pitr := false, false
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	for _, tbl := range tables {
		props := tmpl.Resources[tbl.LogicalID].Properties
		sse = sse || fmt.Sprint(lookupPath(props, "SSESpecification", "SSEEnabled")) == "true"
		pitr = pitr || fmt.Sprint(lookupPath(props, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled")) == "true"
	}
	_, secret := tmpl.Resources["KeyChecksumSecret"]
	for _, c := range []struct {
		on    bool
		lines []string
	}{
		{tracing, []string{"**X-Ray**", "`Tracing: Active`"}},
		{sse, []string{"**KMS**", "`SSEEnabled: true`", "AWS managed key"}},
		{pitr, []string{"**Point-in-time recovery**"}},
		{secret, []string{"**Secrets Manager**"}},
	} {
		for _, line := range c.lines {
			if strings.Contains(costs, line) != c.on {
				t.Errorf("the template turns %s on: %v; the cost lines say it: %v", line, c.on, !c.on)
			}
		}
	}
}

func lookupPath(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	return v
}

// The concurrency quota a stack needs counts every reservation the
// template makes: ReservedConcurrency once per function that takes it,
// and the generator's own.
func TestDocsConcurrencyQuota(t *testing.T) {
	tmpl := loadTemplate(t)
	reserving := 0
	for _, f := range tmpl.Functions() {
		if strings.Contains(fmt.Sprint(f.Properties["ReservedConcurrentExecutions"]), "Ref:ReservedConcurrency]") {
			reserving++
		}
	}
	times := map[int]string{1: "once", 2: "twice", 3: "three times"}[reserving]
	note := section(t, docPage(t, "docs/deploying.md"), "- `ReservedConcurrency`", "\n- ")
	for _, want := range []string{"100 plus " + times + " this value", "`GeneratorReservedConcurrency`"} {
		if !strings.Contains(note, want) {
			t.Errorf("the quota note does not say %q (%d functions reserve ReservedConcurrency):\n%s", want, reserving, note)
		}
	}
}

// Content goes to the models' region whatever the stack's: docs/deploying.md says
// so, naming the parameter and its default, as a fact about where data
// goes.
func TestDocsWhereContentGoes(t *testing.T) {
	tmpl := loadTemplate(t)
	text := section(t, docPage(t, "docs/deploying.md"), "**Where content goes.**", "\n\n")
	for _, want := range []string{"`BedrockRegion`", fmt.Sprintf("**%v**", tmpl.Parameters["BedrockRegion"].Default), "data residency", "`Generation=off`"} {
		if !strings.Contains(text, want) {
			t.Errorf("the paragraph does not say %s", want)
		}
	}
}

// aws configure export-credentials is AWS CLI v2's: every paragraph or
// command of the pages that uses it says so.
func TestDocsExportCredentialsNeedsCLIv2(t *testing.T) {
	uses := 0
	var paras []string
	for _, p := range docPages(t) {
		paras = append(paras, strings.Split(p.Text, "\n\n")...)
	}
	for _, para := range paras {
		para = strings.Join(strings.Fields(para), " ")
		if strings.Contains(para, "aws configure export-credentials") {
			uses++
			if !strings.Contains(para, "AWS CLI v2") {
				t.Errorf("a page uses export-credentials without saying it needs AWS CLI v2: %s", para)
			}
		}
	}
	if uses == 0 {
		t.Error("no page uses export-credentials any more: drop this test")
	}
}
