package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// statefulTypes are the resource types that keep something when deleted
// or replaced: each says what happens to it, not CloudFormation's default.
var statefulTypes = []string{"AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::SQS::Queue", "AWS::SecretsManager::Secret", "AWS::Logs::LogGroup"}

// Every stateful resource chooses its fate on deletion and replacement,
// the same for both; the generation failures queue is kept, as the tables
// are, so a stack's last failures outlive it.
func TestTemplateStatefulResourcesChooseTheirFate(t *testing.T) {
	tmpl := loadTemplate(t)
	for id, r := range tmpl.Resources {
		if !slices.Contains(statefulTypes, r.Type) {
			continue
		}
		if r.DeletionPolicy == "" || r.UpdateReplacePolicy != r.DeletionPolicy {
			t.Errorf("%s (%s): DeletionPolicy %q, UpdateReplacePolicy %q", id, r.Type, r.DeletionPolicy, r.UpdateReplacePolicy)
		}
	}
	if p := tmpl.Resources["GenerationFailures"].DeletionPolicy; p != "Retain" {
		t.Errorf("GenerationFailures: DeletionPolicy %q, want Retain", p)
	}
}

// What sam delete keeps is each named in the README's Retiring the stack,
// with what it costs meanwhile and how it goes, and its output is read
// before sam delete, which takes the outputs with it.
func TestReadmeRetiringTheStack(t *testing.T) {
	section := between(t, readmeText(t), "### Retiring the stack", "\n## ")
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

func readmeText(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// between is text from the first from to the next to after it, or to
// the end when no to follows; a text without from fails the test.
func between(t *testing.T, text, from, to string) string {
	t.Helper()
	start := strings.Index(text, from)
	if start < 0 {
		t.Fatalf("README.md has no %q", from)
	}
	end := strings.Index(text[start+len(from):], to)
	if end < 0 {
		return text[start:]
	}
	return text[start : start+len(from)+end]
}

// The README's cost lines name what the template turns on, and only that:
// a cost for a feature the template left off would mislead as much as a
// feature whose cost goes unsaid.
func TestReadmeCostsMatchTheTemplate(t *testing.T) {
	tmpl := loadTemplate(t)
	costs := between(t, readmeText(t), "**What it costs.**", "\n#")
	tracing := false
	for _, f := range tmpl.Functions() {
		tracing = tracing || f.Properties["Tracing"] == "Active"
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
func TestReadmeConcurrencyQuota(t *testing.T) {
	tmpl := loadTemplate(t)
	reserving := 0
	for _, f := range tmpl.Functions() {
		if strings.Contains(fmt.Sprint(f.Properties["ReservedConcurrentExecutions"]), "Ref:ReservedConcurrency]") {
			reserving++
		}
	}
	times := map[int]string{1: "once", 2: "twice", 3: "three times"}[reserving]
	note := between(t, readmeText(t), "- `ReservedConcurrency`", "\n- ")
	for _, want := range []string{"100 plus " + times + " this value", "`GeneratorReservedConcurrency`"} {
		if !strings.Contains(note, want) {
			t.Errorf("the quota note does not say %q (%d functions reserve ReservedConcurrency):\n%s", want, reserving, note)
		}
	}
}

// Content goes to the models' region whatever the stack's: the README says
// so, naming the parameter and its default, as a fact about where data
// goes.
func TestReadmeWhereContentGoes(t *testing.T) {
	tmpl := loadTemplate(t)
	text := between(t, readmeText(t), "**Where content goes.**", "\n\n")
	for _, want := range []string{"`BedrockRegion`", fmt.Sprintf("**%v**", tmpl.Parameters["BedrockRegion"].Default), "data residency", "`Generation=off`"} {
		if !strings.Contains(text, want) {
			t.Errorf("the paragraph does not say %s", want)
		}
	}
}

// aws configure export-credentials is AWS CLI v2's: every paragraph or
// command of the README that uses it says so.
func TestReadmeExportCredentialsNeedsCLIv2(t *testing.T) {
	uses := 0
	for _, para := range strings.Split(readmeText(t), "\n\n") {
		para = strings.Join(strings.Fields(para), " ")
		if strings.Contains(para, "aws configure export-credentials") {
			uses++
			if !strings.Contains(para, "AWS CLI v2") {
				t.Errorf("README.md uses export-credentials without saying it needs AWS CLI v2: %s", para)
			}
		}
	}
	if uses == 0 {
		t.Error("README.md no longer uses export-credentials: drop this test")
	}
}
