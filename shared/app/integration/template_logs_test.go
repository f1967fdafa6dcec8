package integration_test

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"contentapi/shared/app"
	"contentapi/shared/httpapi"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/metrics"
)

// Every function logs in Lambda's JSON format, at the system level
// SystemLogLevel says, to a Standard group of its own kept
// LogRetentionDays; and for every LogLevel, Lambda's application level
// (the ApplicationLogLevel mapping) lets through the metric lines, which
// the alarms and the dashboard read, and every line the code writes at
// that level: the code, not Lambda, leaves lines out.
func TestTemplateFunctionsLogAsLambdaKeepsTheirMetrics(t *testing.T) {
	tmpl := loadTemplate(t)
	// As written: the language extensions resolve the mapping at the
	// deployment's LogLevel (here, its default).
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(repoFile(t, "template.yaml")), &doc); err != nil {
		t.Fatal(err)
	}
	written, err := sam.Decode(&doc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"LogFormat":           lambdalocal.LogFormatJSON,
		"ApplicationLogLevel": map[string]any{"Fn::FindInMap": []any{"ApplicationLogLevel", map[string]any{"Ref": "LogLevel"}, "Level"}},
		"SystemLogLevel":      map[string]any{"Ref": "SystemLogLevel"},
	}
	globals, _ := written.(map[string]any)["Globals"].(map[string]any)
	if got := globals["Function"].(map[string]any)["LoggingConfig"]; !reflect.DeepEqual(got, want) {
		t.Errorf("Globals' LoggingConfig = %v, want %v", got, want)
	}
	levels := tmpl.Mappings["ApplicationLogLevel"]
	if got := slices.Sorted(maps.Keys(levels)); !reflect.DeepEqual(got, slices.Sorted(slices.Values(app.LogLevels))) {
		t.Errorf("the ApplicationLogLevel mapping has %v, LogLevel allows %v", got, app.LogLevels)
	}
	var metricLine bytes.Buffer
	metrics.New(&metricLine, "stack").Answer("images", 500, false)
	for _, level := range app.LogLevels {
		lambdaLevel, _ := levels[level].(map[string]any)["Level"].(string)
		keep, err := lambdalocal.ApplicationLogFilter(lambdaLevel)
		if err != nil {
			t.Errorf("LogLevel %s: %v", level, err)
			continue
		}
		if !keep(bytes.TrimSpace(metricLine.Bytes())) {
			t.Errorf("LogLevel %s: Lambda at %s drops the metric lines: %s", level, lambdaLevel, metricLine.Bytes())
		}
		var slogLevel slog.Level
		if err := slogLevel.UnmarshalText([]byte(level)); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		slog.New(httpapi.NewLogHandler(&out, slogLevel)).Log(context.Background(), slogLevel, "a line at the least level")
		if !keep(bytes.TrimSpace(out.Bytes())) {
			t.Errorf("LogLevel %s: Lambda at %s drops what the code writes: %s", level, lambdaLevel, out.Bytes())
		}
	}

	system := tmpl.Parameters["SystemLogLevel"]
	if system.Default != "WARN" {
		t.Errorf("SystemLogLevel's default %v, want WARN: no START and REPORT line for every invocation", system.Default)
	}
	for _, l := range system.AllowedValues {
		if _, err := lambdalocal.PlatformLines(lambdalocal.LogFormatJSON, l.(string)); err != nil {
			t.Errorf("SystemLogLevel allows %v: %v", l, err)
		}
	}
	days := tmpl.Parameters["LogRetentionDays"].Default
	groups := map[string]string{}
	for _, f := range tmpl.Functions() {
		l, err := f.Logging(tmpl)
		if err != nil {
			t.Error(err)
			continue
		}
		if l.Format != lambdalocal.LogFormatJSON || l.Group.Class != sam.LogClassStandard || l.Group.RetentionDays != days {
			t.Errorf("%s logs %+v, want JSON to a Standard group kept %v days", f.LogicalID, l, days)
		}
		if other, taken := groups[l.Group.LogicalID]; taken {
			t.Errorf("%s and %s log to one group, %s", other, f.LogicalID, l.Group.LogicalID)
		}
		groups[l.Group.LogicalID] = f.LogicalID
	}
}

// Each log group is Standard where CloudWatch reads it for more than
// queries (a function's, whose metric lines it extracts; any group a
// metric filter or a subscription reads), and the HTTP API's access log,
// which only Logs Insights reads, is Infrequent Access, at half the price
// a GB. Every group in the template is written by a function or the API.
func TestTemplateLogGroupClasses(t *testing.T) {
	tmpl := loadTemplate(t)
	readByCloudWatch := map[string]string{}
	for _, f := range tmpl.Functions() {
		if l, err := f.Logging(tmpl); err == nil {
			readByCloudWatch[l.Group.LogicalID] = f.LogicalID + "'s metric lines"
		}
	}
	for _, typ := range []string{"AWS::Logs::MetricFilter", "AWS::Logs::SubscriptionFilter"} {
		for _, id := range tmpl.ResourcesOfType(typ) {
			name, arg, _ := sam.Intrinsic(tmpl.Resources[id].Properties["LogGroupName"])
			group, _ := arg.(string)
			if name != "Ref" || group == "" {
				t.Errorf("%s reads no log group of the template by !Ref", id)
			}
			readByCloudWatch[group] = id
		}
	}
	access, err := tmpl.HTTPAPIAccessLog()
	if err != nil {
		t.Fatal(err)
	}
	if reader, read := readByCloudWatch[access.Group.LogicalID]; read || access.Group.Class != sam.LogClassInfrequentAccess {
		t.Errorf("the access log's group %s is %s (read by %q), want Infrequent Access, read by nothing but queries",
			access.Group.LogicalID, access.Group.Class, reader)
	}
	for _, id := range tmpl.ResourcesOfType(sam.LogGroupType) {
		g, err := tmpl.LogGroup(id)
		if err != nil {
			t.Error(err)
			continue
		}
		reader, read := readByCloudWatch[id]
		switch {
		case read && g.Class != sam.LogClassStandard:
			t.Errorf("%s is %s, but CloudWatch reads it for %s: only a Standard group gives them", id, g.Class, reader)
		case !read && id != access.Group.LogicalID:
			t.Errorf("%s: no function nor the HTTP API writes to it", id)
		}
	}
}

// Tracing is a parameter, PassThrough by default: active tracing at 100
// requests a second would cost more than a get's logs and traces may
// (docs/deploying.md prices it).
func TestTemplateTracingIsAParameter(t *testing.T) {
	tmpl := loadTemplate(t)
	if got := tmpl.Globals["Function"]["Tracing"]; !reflect.DeepEqual(got, map[string]any{"Ref": "Tracing"}) {
		t.Errorf("Globals' Tracing = %v, want !Ref Tracing", got)
	}
	p := tmpl.Parameters["Tracing"]
	if !reflect.DeepEqual(p.AllowedValues, []any{"Active", "PassThrough"}) || p.Default != "PassThrough" {
		t.Errorf("parameter Tracing = %+v, want Active or PassThrough, PassThrough by default", p)
	}
	for _, f := range tmpl.Functions() {
		if tr, set := tmpl.Resources[f.LogicalID].Properties["Tracing"]; set {
			t.Errorf("%s sets its own Tracing %v", f.LogicalID, tr)
		}
	}
}
