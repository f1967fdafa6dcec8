package integration_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/expr-lang/expr"

	"contentapi/shared/app"
	"contentapi/shared/generation"
	"contentapi/shared/local/sam"
	"contentapi/shared/metrics"
)

// metricRef is a metric an alarm or the dashboard names: its namespace,
// name and dimensions (values as the template gives them, resolved by
// resolveIntrinsics for the dashboard).
type metricRef struct {
	where, namespace, name string
	dims                   map[string]any
}

// The stand-ins resolveIntrinsics puts for what only a deployed stack
// knows.
const (
	stackNameStandIn = "STACK-NAME"
	refStandIn       = "REF:"
	getAttStandIn    = "GETATT:"
)

// resolveIntrinsics evaluates the intrinsic functions a dashboard body is
// built with (Join, If, Sub, Ref) under the given conditions, the stack's
// values replaced by stand-ins: a reference to a resource that does not
// exist under them, or to anything unknown, is an error.
func resolveIntrinsics(tmpl *sam.Template, v any, conds map[string]bool) (string, error) {
	name, arg, ok := sam.Intrinsic(v)
	if !ok {
		s, isString := v.(string)
		if !isString {
			return "", fmt.Errorf("%v is neither a string nor an intrinsic this test knows", v)
		}
		return s, nil
	}
	args, _ := arg.([]any)
	switch name {
	case "Fn::Join":
		parts, _ := args[1].([]any)
		var out []string
		for _, p := range parts {
			s, err := resolveIntrinsics(tmpl, p, conds)
			if err != nil {
				return "", err
			}
			out = append(out, s)
		}
		return strings.Join(out, args[0].(string)), nil
	case "Fn::If":
		cond, known := conds[args[0].(string)]
		if !known {
			return "", fmt.Errorf("condition %v is not given", args[0])
		}
		if cond {
			return resolveIntrinsics(tmpl, args[1], conds)
		}
		return resolveIntrinsics(tmpl, args[2], conds)
	case "Ref":
		return standIn(tmpl, arg.(string), conds)
	case "Fn::Sub":
		// A string, or a string and its variables: [s, {name: value}].
		s, isString := arg.(string)
		variables := map[string]any{}
		if !isString && len(args) == 2 {
			s, isString = args[0].(string)
			variables, _ = args[1].(map[string]any)
		}
		if !isString {
			return "", fmt.Errorf("Fn::Sub of %v", arg)
		}
		var err error
		out := regexp.MustCompile(`\$\{([^}!]+)\}`).ReplaceAllStringFunc(s, func(m string) string {
			name := m[2 : len(m)-1]
			if v, ok := variables[name]; ok {
				resolved, e := resolveIntrinsics(tmpl, v, conds)
				err = cmp.Or(err, e)
				return resolved
			}
			v, e := standIn(tmpl, name, conds)
			err = cmp.Or(err, e)
			return v
		})
		return out, err
	}
	return "", fmt.Errorf("intrinsic %s is not one this test knows", name)
}

// standIn is what a ${name} or Ref stands for: a parameter's default, a
// stand-in for the stack's name, region, resources and their attributes.
func standIn(tmpl *sam.Template, name string, conds map[string]bool) (string, error) {
	switch name {
	case "AWS::StackName":
		return stackNameStandIn, nil
	case "AWS::Region":
		return "us-east-1", nil
	}
	if p, ok := tmpl.Parameters[name]; ok {
		return fmt.Sprint(p.Default), nil
	}
	resource, attr, hasAttr := strings.Cut(name, ".")
	r, ok := tmpl.Resources[resource]
	if !ok {
		return "", fmt.Errorf("${%s} names no parameter or resource", name)
	}
	if r.Condition != "" && !conds[r.Condition] {
		return "", fmt.Errorf("${%s} is named where its condition %s does not hold", name, r.Condition)
	}
	if hasAttr {
		return getAttStandIn + resource + "." + attr, nil
	}
	return refStandIn + resource, nil
}

// dashboard is the template's dashboard body under the conditions.
func dashboard(t *testing.T, tmpl *sam.Template, conds map[string]bool) map[string]any {
	t.Helper()
	ids := tmpl.ResourcesOfType("AWS::CloudWatch::Dashboard")
	if len(ids) != 1 {
		t.Fatalf("dashboards %v, want one", ids)
	}
	body, err := resolveIntrinsics(tmpl, tmpl.Resources[ids[0]].Properties["DashboardBody"], conds)
	if err != nil {
		t.Fatalf("generation on %v: %v", conds["GenerationOn"], err)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("generation on %v: the dashboard body is not JSON: %v\n%s", conds["GenerationOn"], err, body)
	}
	return d
}

// dashboardMetrics are the metrics the dashboard's widgets graph, and the
// alarms its alarm widgets show (their logical IDs).
func dashboardMetrics(t *testing.T, d map[string]any) (refs []metricRef, alarms []string) {
	t.Helper()
	widgets, _ := d["widgets"].([]any)
	for i, w := range widgets {
		widget, _ := w.(map[string]any)
		props, _ := widget["properties"].(map[string]any)
		where := fmt.Sprintf("dashboard widget %d (%v)", i, props["title"])
		switch widget["type"] {
		case "alarm":
			for _, a := range props["alarms"].([]any) {
				id, ok := strings.CutPrefix(a.(string), getAttStandIn)
				if !ok || !strings.HasSuffix(id, ".Arn") {
					t.Errorf("%s: alarm %v is not an alarm's Arn", where, a)
				}
				alarms = append(alarms, strings.TrimSuffix(id, ".Arn"))
			}
		case "metric":
			for _, m := range props["metrics"].([]any) {
				row, _ := m.([]any)
				if _, isExpression := row[0].(map[string]any); isExpression {
					continue
				}
				var strs []string
				for _, x := range row {
					if s, ok := x.(string); ok {
						strs = append(strs, s)
					}
				}
				// "." repeats the row before's value: a reader of this
				// test would have to resolve it too, so it is not used.
				if slices.Contains(strs, ".") || slices.Contains(strs, "...") || len(strs)%2 != 0 {
					t.Errorf("%s: metric row %v: write each row out whole, namespace, name and dimension pairs", where, row)
					continue
				}
				ref := metricRef{where: where, namespace: strs[0], name: strs[1], dims: map[string]any{}}
				for j := 2; j < len(strs); j += 2 {
					ref.dims[strs[j]] = strs[j+1]
				}
				refs = append(refs, ref)
			}
		default:
			t.Errorf("%s: widget type %v", where, widget["type"])
		}
	}
	return refs, alarms
}

// alarmMetrics are the metrics an alarm watches: its own metric, or each
// of its metric math's metrics.
func alarmMetrics(id string, r sam.Resource) []metricRef {
	p := r.Properties
	dims := func(v any) map[string]any {
		m := map[string]any{}
		for _, d := range v.([]any) {
			d := d.(map[string]any)
			m[d["Name"].(string)] = d["Value"]
		}
		return m
	}
	if name, ok := p["MetricName"].(string); ok {
		return []metricRef{{where: id, namespace: p["Namespace"].(string), name: name, dims: dims(p["Dimensions"])}}
	}
	var refs []metricRef
	for _, m := range p["Metrics"].([]any) {
		stat, ok := m.(map[string]any)["MetricStat"].(map[string]any)
		if !ok {
			continue // an expression
		}
		metric := stat["Metric"].(map[string]any)
		refs = append(refs, metricRef{where: id, namespace: metric["Namespace"].(string),
			name: metric["MetricName"].(string), dims: dims(metric["Dimensions"])})
	}
	return refs
}

// functionFolders are the functions' folders under functions/, the
// values of the metrics' Function dimension.
func functionFolders(t *testing.T) []string {
	t.Helper()
	path, err := sam.Find()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(filepath.Dir(path), "functions"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Every ContentAPI metric an alarm or the dashboard names is one the code
// emits by those dimensions, with this stack's Stack and values the code
// gives its dimensions. The names themselves, the namespace's, the
// metrics' and the dimensions', make generate writes from shared/metrics
// (cmd/listgen refuses one written by hand); which dimensions go with
// which metric, and their values, no generator writes.
func TestTemplateMonitorsWhatTheCodeEmits(t *testing.T) {
	tmpl := loadTemplate(t)
	refs, _ := dashboardMetrics(t, dashboard(t, tmpl, map[string]bool{"GenerationOn": true, "SpendAlarmOn": true}))
	for _, id := range tmpl.ResourcesOfType("AWS::CloudWatch::Alarm") {
		refs = append(refs, alarmMetrics(id, tmpl.Resources[id])...)
	}
	declared := map[string]metrics.Metric{}
	for _, m := range metrics.Defined() {
		declared[m.Name] = m
	}
	var kinds []string
	for _, r := range app.Resources {
		if r.Def.Content != nil {
			kinds = append(kinds, r.Def.Name)
		}
	}
	functions := functionFolders(t)
	valid := map[string]func(string) bool{
		metrics.DimStack:    func(v string) bool { return v == stackNameStandIn },
		metrics.DimKind:     func(v string) bool { return slices.Contains(kinds, v) },
		metrics.DimFunction: func(v string) bool { return slices.Contains(functions, v) },
		metrics.DimOutcome:  func(v string) bool { return slices.Contains(metrics.Outcomes(), metrics.Outcome(v)) },
		metrics.DimCode:     func(v string) bool { return string(generation.NewError(generation.Code(v)).Code) == v },
	}
	named := 0
	for _, ref := range refs {
		if ref.namespace != metrics.Namespace {
			continue
		}
		named++
		m := declared[ref.name]
		var names []string
		for name, v := range ref.dims {
			names = append(names, name)
			value := fmt.Sprint(v)
			if name == metrics.DimStack && fmt.Sprint(v) == fmt.Sprint(map[string]any{"Ref": "AWS::StackName"}) {
				value = stackNameStandIn // an alarm's !Ref AWS::StackName
			}
			if check, known := valid[name]; known && !check(value) {
				t.Errorf("%s: %s's %s is %v, which the code never gives it", ref.where, ref.name, name, v)
			}
		}
		sort.Strings(names)
		if !slices.ContainsFunc(m.Dimensions, func(set []string) bool {
			set = slices.Sorted(slices.Values(set))
			return slices.Equal(set, names)
		}) {
			t.Errorf("%s: %s by %v; the code emits it by %v", ref.where, ref.name, names, m.Dimensions)
		}
	}
	if named == 0 {
		t.Fatal("no alarm or widget names a ContentAPI metric")
	}
}

// The dashboard graphs each value the code gives the dimensions that
// matter: every resource's function's answers, every kind's generations,
// every outcome, both stream functions' batches. A resource added to
// app.Resources fails here until the dashboard shows it.
func TestTemplateDashboardShowsEveryValue(t *testing.T) {
	tmpl := loadTemplate(t)
	refs, _ := dashboardMetrics(t, dashboard(t, tmpl, map[string]bool{"GenerationOn": true, "SpendAlarmOn": true}))
	shown := map[string]bool{}
	for _, ref := range refs {
		for name, v := range ref.dims {
			shown[ref.name+" "+name+"="+fmt.Sprint(v)] = true
		}
	}
	var want []string
	for _, r := range app.Resources {
		for _, m := range []metrics.Metric{metrics.ServerErrors, metrics.DynamoDBUnavailable, metrics.QuotaRefusals} {
			want = append(want, m.Name+" "+metrics.DimFunction+"="+r.Def.Name)
		}
		if r.Def.Content != nil {
			for _, m := range []metrics.Metric{metrics.GenerationLatency, metrics.GenerationErrors} {
				want = append(want, m.Name+" "+metrics.DimKind+"="+r.Def.Name)
			}
		}
	}
	for _, o := range metrics.Outcomes() {
		want = append(want, metrics.Generations.Name+" "+metrics.DimOutcome+"="+string(o))
	}
	for _, f := range []string{metrics.FunctionGenerator, metrics.FunctionTally} {
		want = append(want, metrics.BatchFailures.Name+" "+metrics.DimFunction+"="+f)
	}
	for _, w := range want {
		if !shown[w] {
			t.Errorf("the dashboard does not graph %s", w)
		}
	}
}

// Each function has an alarm on its Errors and Throttles, under the
// function's own condition; every alarm goes to the alarm topic, raised
// and cleared, and the dashboard shows it.
func TestTemplateAlarmsCoverEveryFunction(t *testing.T) {
	tmpl := loadTemplate(t)
	alarms := tmpl.ResourcesOfType("AWS::CloudWatch::Alarm")
	if len(alarms) == 0 {
		t.Fatal("no alarm")
	}
	topic := map[string]any{"Ref": "AlarmTopic"}
	for _, id := range alarms {
		p := tmpl.Resources[id].Properties
		for _, actions := range []string{"AlarmActions", "OKActions"} {
			if list, _ := p[actions].([]any); !slices.ContainsFunc(list, func(a any) bool { return fmt.Sprint(a) == fmt.Sprint(topic) }) {
				t.Errorf("%s: %s do not notify AlarmTopic: %v", id, actions, p[actions])
			}
		}
	}
	for _, f := range tmpl.Functions() {
		var watched []string
		for _, id := range alarms {
			for _, ref := range alarmMetrics(id, tmpl.Resources[id]) {
				if ref.namespace == "AWS/Lambda" && fmt.Sprint(ref.dims["FunctionName"]) == fmt.Sprint(map[string]any{"Ref": f.LogicalID}) {
					watched = append(watched, ref.name)
					if c := tmpl.Resources[id].Condition; c != tmpl.Resources[f.LogicalID].Condition {
						t.Errorf("%s watches %s under condition %q, the function exists under %q", id, f.LogicalID, c, tmpl.Resources[f.LogicalID].Condition)
					}
				}
			}
		}
		for _, metric := range []string{"Errors", "Throttles"} {
			if !slices.Contains(watched, metric) {
				t.Errorf("no alarm on %s's %s", f.LogicalID, metric)
			}
		}
	}
	for _, on := range []bool{true, false} {
		// The spend alarm exists where a threshold is set, and only with
		// generation on: set, here.
		_, shown := dashboardMetrics(t, dashboard(t, tmpl, map[string]bool{"GenerationOn": on, "SpendAlarmOn": on}))
		for _, id := range alarms {
			exists := tmpl.Resources[id].Condition == "" || on
			if exists && !slices.Contains(shown, id) {
				t.Errorf("generation on %v: the dashboard does not show %s", on, id)
			}
		}
	}
}

// The alarm mail goes to AlarmEmail only when it is set.
func TestTemplateAlarmEmailIsOptional(t *testing.T) {
	tmpl := loadTemplate(t)
	if p := tmpl.Parameters["AlarmEmail"]; p.Default != "" {
		t.Errorf("AlarmEmail defaults to %v, want empty", p.Default)
	}
	subs := tmpl.ResourcesOfType("AWS::SNS::Subscription")
	if len(subs) != 1 {
		t.Fatalf("subscriptions %v, want one", subs)
	}
	s := tmpl.Resources[subs[0]]
	if s.Condition != "AlarmEmailSet" || fmt.Sprint(s.Properties["Endpoint"]) != fmt.Sprint(map[string]any{"Ref": "AlarmEmail"}) ||
		s.Properties["Protocol"] != "email" {
		t.Errorf("subscription %+v", s)
	}
}

// repoFile is a file of the repository, by its path from the root.
func repoFile(t *testing.T, name string) string {
	t.Helper()
	path, err := sam.Find()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(path), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// anchors are the anchors of a Markdown text's headings, as GitHub makes
// them.
func anchors(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		if heading, ok := strings.CutPrefix(line, "#"); ok {
			heading = strings.ToLower(strings.TrimSpace(strings.TrimLeft(heading, "#")))
			heading = regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(heading, "")
			out = append(out, strings.ReplaceAll(heading, " ", "-"))
		}
	}
	return out
}

// Every alarm's description says where its runbook section is, a section
// docs/operations.md has, and the runbook names every alarm; its own links
// within the page lead to its sections (TestDocsLinksResolve holds its
// links to other pages).
func TestTemplateAlarmsPointToTheRunbook(t *testing.T) {
	tmpl := loadTemplate(t)
	doc, readme := repoFile(t, "docs/operations.md"), repoFile(t, "README.md")
	sections := anchors(doc)
	section := regexp.MustCompile(`Runbook: docs/operations\.md#([a-z0-9-]+)$`)
	for _, id := range tmpl.ResourcesOfType("AWS::CloudWatch::Alarm") {
		// A loop's alarm names its resource in its description by an
		// Fn::Sub of the loop's mapping.
		desc, _ := sam.FoldLiteralSubs(tmpl.Resources[id].Properties["AlarmDescription"]).(string)
		m := section.FindStringSubmatch(strings.TrimSpace(desc))
		switch {
		case m == nil:
			t.Errorf("%s: the description does not end with its runbook section: %q", id, desc)
		case !slices.Contains(sections, m[1]):
			t.Errorf("%s: docs/operations.md has no section #%s", id, m[1])
		}
		if len(desc) > 1024 {
			t.Errorf("%s: a description of %d characters; CloudWatch takes 1024", id, len(desc))
		}
		if !strings.Contains(doc, "`"+id+"`") {
			t.Errorf("docs/operations.md does not name %s", id)
		}
	}
	for _, m := range regexp.MustCompile(`\]\(#([a-z0-9-]+)\)`).FindAllStringSubmatch(doc, -1) {
		if !slices.Contains(sections, m[1]) {
			t.Errorf("docs/operations.md links #%s, which it has no section for", m[1])
		}
	}
	// What its commands read of the stack exists: outputs, and resources
	// by logical ID (those the text names, in backquotes, too).
	for _, m := range regexp.MustCompile(`\$\(output (\w+)\)`).FindAllStringSubmatch(doc, -1) {
		if _, ok := tmpl.Outputs[m[1]]; !ok {
			t.Errorf("docs/operations.md reads output %s, which the template does not have", m[1])
		}
	}
	for _, m := range regexp.MustCompile("`([A-Z][A-Za-z0-9]*(?:Alarm|LogGroup|Logs|Function|Topic))`").FindAllStringSubmatch(doc, -1) {
		if _, ok := tmpl.Resources[m[1]]; !ok {
			t.Errorf("docs/operations.md names %s, which the template does not have", m[1])
		}
	}
	links := regexp.MustCompile(`\]\(docs/operations\.md(?:#([a-z0-9-]+))?\)`).FindAllStringSubmatch(readme, -1)
	if len(links) == 0 {
		t.Error("the README does not link the runbook")
	}
	for _, m := range links {
		if m[1] != "" && !slices.Contains(sections, m[1]) {
			t.Errorf("the README links docs/operations.md#%s, which has no such section", m[1])
		}
	}
}

// awsMetric is a metric an AWS service publishes, as its CloudWatch
// documentation names it: the dimension the template selects it by, and
// the type of the resource whose Ref or attribute is that dimension's
// value.
type awsMetric struct {
	dimension, resourceType, attribute string
}

// published are the AWS metrics the alarms and the dashboard read, by
// namespace and name (API Gateway's "Monitor CloudWatch metrics for HTTP
// APIs": 4xx, 5xx, Count by ApiId; Lambda's function metrics by
// FunctionName; SQS's by QueueName). A REST API's 5XXError, or a
// dimension named otherwise, is a metric nobody publishes: its alarm would
// never leave INSUFFICIENT_DATA or, with missing data not breaching, OK.
var published = map[string]map[string]awsMetric{
	"AWS/ApiGateway": {
		"4xx":   {"ApiId", "AWS::Serverless::HttpApi", ""},
		"5xx":   {"ApiId", "AWS::Serverless::HttpApi", ""},
		"Count": {"ApiId", "AWS::Serverless::HttpApi", ""},
	},
	"AWS/Lambda": {
		"Errors":      {"FunctionName", "AWS::Serverless::Function", ""},
		"Throttles":   {"FunctionName", "AWS::Serverless::Function", ""},
		"IteratorAge": {"FunctionName", "AWS::Serverless::Function", ""},
	},
	"AWS/SQS": {
		"ApproximateNumberOfMessagesVisible": {"QueueName", "AWS::SQS::Queue", "QueueName"},
	},
}

// dimensionTarget is the resource (and attribute) a dimension's value
// names: an alarm's !Ref X or !GetAtt X.Attr, or the dashboard's stand-in
// of either.
func dimensionTarget(v any) (resource, attribute string, ok bool) {
	if s, isString := v.(string); isString {
		if id, found := strings.CutPrefix(s, refStandIn); found {
			return id, "", true
		}
		if ga, found := strings.CutPrefix(s, getAttStandIn); found {
			resource, attribute, _ = strings.Cut(ga, ".")
			return resource, attribute, true
		}
		return "", "", false
	}
	name, arg, isIntrinsic := sam.Intrinsic(v)
	switch {
	case !isIntrinsic:
		return "", "", false
	case name == "Ref":
		resource, ok = arg.(string)
		return resource, "", ok
	case name == "Fn::GetAtt":
		parts, _ := arg.([]any)
		if len(parts) == 2 {
			resource, _ = parts[0].(string)
			attribute, _ = parts[1].(string)
			return resource, attribute, resource != "" && attribute != ""
		}
	}
	return "", "", false
}

// Every AWS metric an alarm or the dashboard reads is one the service
// publishes, by the dimension it publishes it by, whose value is the
// right resource of this stack: IteratorAge only of a function that reads
// a stream.
func TestTemplateReadsAWSMetricsAsPublished(t *testing.T) {
	tmpl := loadTemplate(t)
	refs, _ := dashboardMetrics(t, dashboard(t, tmpl, map[string]bool{"GenerationOn": true, "SpendAlarmOn": true}))
	for _, id := range tmpl.ResourcesOfType("AWS::CloudWatch::Alarm") {
		refs = append(refs, alarmMetrics(id, tmpl.Resources[id])...)
	}
	mappings, err := tmpl.StreamMappings()
	if err != nil {
		t.Fatal(err)
	}
	readsStream := map[string]bool{}
	for _, m := range mappings {
		readsStream[m.Function] = true
	}
	read := 0
	for _, ref := range refs {
		if !strings.HasPrefix(ref.namespace, "AWS/") {
			continue
		}
		read++
		want, ok := published[ref.namespace][ref.name]
		if !ok {
			t.Errorf("%s: %s %s is not a metric this test knows AWS to publish", ref.where, ref.namespace, ref.name)
			continue
		}
		value, ok := ref.dims[want.dimension]
		if len(ref.dims) != 1 || !ok {
			t.Errorf("%s: %s %s by %v; AWS publishes it by %s", ref.where, ref.namespace, ref.name, ref.dims, want.dimension)
			continue
		}
		resource, attribute, ok := dimensionTarget(value)
		if !ok || attribute != want.attribute || tmpl.Resources[resource].Type != want.resourceType {
			t.Errorf("%s: %s %s's %s is %v, want the %s of a %s", ref.where, ref.namespace, ref.name,
				want.dimension, value, cmp.Or(want.attribute, "Ref"), want.resourceType)
			continue
		}
		if ref.name == "IteratorAge" && !readsStream[resource] {
			t.Errorf("%s: IteratorAge of %s, which reads no stream", ref.where, resource)
		}
	}
	if read == 0 {
		t.Fatal("no alarm or widget reads an AWS metric")
	}
}

// alarmOn is the alarm that reads metric name of namespace with a
// dimension whose value is resource's (a Ref or attribute, or a pseudo
// parameter such as AWS::StackName), and the period it reads it over.
func alarmOn(t *testing.T, tmpl *sam.Template, namespace, name, resource string) (id string, props map[string]any, period float64) {
	t.Helper()
	for _, id := range tmpl.ResourcesOfType("AWS::CloudWatch::Alarm") {
		p := tmpl.Resources[id].Properties
		stats := []map[string]any{p}
		if p["MetricName"] == nil {
			stats = nil
			for _, m := range p["Metrics"].([]any) {
				if s, ok := m.(map[string]any)["MetricStat"].(map[string]any); ok {
					metric := s["Metric"].(map[string]any)
					stats = append(stats, map[string]any{"Namespace": metric["Namespace"], "MetricName": metric["MetricName"],
						"Dimensions": metric["Dimensions"], "Period": s["Period"]})
				}
			}
		}
		for _, s := range stats {
			if s["Namespace"] != namespace || s["MetricName"] != name {
				continue
			}
			for _, d := range s["Dimensions"].([]any) {
				if r, _, _ := dimensionTarget(d.(map[string]any)["Value"]); r == resource {
					f, _ := s["Period"].(float64)
					if i, ok := s["Period"].(int); ok {
						f = float64(i)
					}
					return id, p, f
				}
			}
		}
	}
	t.Fatalf("no alarm reads %s %s of %s", namespace, name, resource)
	return "", nil, 0
}

// The alarms the operator was promised, each on the signal and with the
// threshold it was promised: GenerationFailures has a message; a stream
// function's iterator age passes StreamIteratorAgeAlarmSeconds (IteratorAge
// is in milliseconds); the HTTP API's 5xx pass 1% of its answers over 5
// minutes; the generation failure rate passes its parameter.
func TestTemplateAlarmsKeepTheirPromise(t *testing.T) {
	tmpl := loadTemplate(t)
	threshold := func(p map[string]any) string { return fmt.Sprint(p["Threshold"]) }
	ref := func(name string) string { return fmt.Sprint(map[string]any{"Ref": name}) }
	expressions := func(p map[string]any) string {
		var out []string
		for _, m := range p["Metrics"].([]any) {
			if e, ok := m.(map[string]any)["Expression"]; ok {
				source, err := resolveIntrinsics(tmpl, e, nil)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, source)
			}
		}
		return strings.Join(out, "; ")
	}

	id, p, _ := alarmOn(t, tmpl, "AWS/SQS", "ApproximateNumberOfMessagesVisible", "GenerationFailures")
	if threshold(p) != "0" || p["ComparisonOperator"] != "GreaterThanThreshold" {
		t.Errorf("%s: %v %v, want GreaterThanThreshold 0: one message raises it", id, p["ComparisonOperator"], threshold(p))
	}
	for _, fn := range []string{app.GeneratorFunction, "TallyFunction"} {
		id, p, _ := alarmOn(t, tmpl, "AWS/Lambda", "IteratorAge", fn)
		if threshold(p) != ref("StreamIteratorAgeAlarmSeconds") || !strings.Contains(expressions(p), "/ 1000") {
			t.Errorf("%s: threshold %v over %q; want StreamIteratorAgeAlarmSeconds over the age in seconds", id, threshold(p), expressions(p))
		}
	}
	id, p, period := alarmOn(t, tmpl, "AWS/ApiGateway", "5xx", "HttpApi")
	if _, q, countPeriod := alarmOn(t, tmpl, "AWS/ApiGateway", "Count", "HttpApi"); fmt.Sprint(q) != fmt.Sprint(p) || countPeriod != period {
		t.Errorf("%s: the 5xx and the answers they are a share of are not read by one alarm over one period", id)
	}
	if threshold(p) != "1" || period != 300 || fmt.Sprint(p["EvaluationPeriods"]) != "1" || !strings.Contains(expressions(p), "100 *") {
		t.Errorf("%s: %v%% (%q) over %v s x %v, want 1%% over 300 s x 1", id, threshold(p), expressions(p), period, p["EvaluationPeriods"])
	}
	id, p, _ = alarmOn(t, tmpl, metrics.Namespace, metrics.Generations.Name, "AWS::StackName")
	if threshold(p) != ref("GenerationFailureRateAlarmPercent") {
		t.Errorf("%s: threshold %v, want GenerationFailureRateAlarmPercent", id, threshold(p))
	}
	// The rate is failed among those that ended, done or failed: content
	// filters' refusals and tries that will be retried are not in it.
	var outcomes []string
	for _, m := range alarmMetrics(id, tmpl.Resources[id]) {
		outcomes = append(outcomes, fmt.Sprint(m.dims[metrics.DimOutcome]))
	}
	if sort.Strings(outcomes); !slices.Equal(outcomes, []string{string(metrics.Done), string(metrics.Failed)}) {
		t.Errorf("%s: reads the outcomes %v, want done and failed", id, outcomes)
	}
}

// CloudWatch dashboards are global to the account: the dashboard's name
// holds the stack's region as well as its name, or a stack of the same
// name in another region would take it over, and its deletion delete it.
func TestTemplateDashboardNameIsTheStacksInItsRegion(t *testing.T) {
	tmpl := loadTemplate(t)
	for _, id := range tmpl.ResourcesOfType("AWS::CloudWatch::Dashboard") {
		name, err := resolveIntrinsics(tmpl, tmpl.Resources[id].Properties["DashboardName"], nil)
		if err != nil || !strings.Contains(name, stackNameStandIn) || !strings.Contains(name, "us-east-1") {
			t.Errorf("%s: DashboardName %q (%v), want the stack's name and region", id, name, err)
		}
	}
}

// The rate alarms judge a rate only once failures reach
// RateAlarmMinimumFailures: one 5xx among two answers, or two failed
// generations of two, pages nobody; the same share of more does. Each
// alarm's metric math is evaluated as CloudWatch would on a period's
// sums (a missing sum is no data, which FILL replaces).
func TestTemplateRateAlarmsWaitForAFewFailures(t *testing.T) {
	tmpl := loadTemplate(t)
	minimum, err := strconv.ParseFloat(fmt.Sprint(tmpl.Parameters["RateAlarmMinimumFailures"].Default), 64)
	if err != nil || minimum < 2 {
		t.Fatalf("RateAlarmMinimumFailures defaults to %v (%v), want a few", tmpl.Parameters["RateAlarmMinimumFailures"].Default, err)
	}
	cases := []struct {
		alarm  string
		sums   map[string]any // a period's sums by metric id; absent: no data
		breach bool
	}{
		{"HttpApi5xxRateAlarm", map[string]any{"errors": 1.0, "requests": 2.0}, false},
		{"HttpApi5xxRateAlarm", map[string]any{"errors": minimum - 1, "requests": minimum}, false},
		{"HttpApi5xxRateAlarm", map[string]any{"errors": minimum, "requests": 100 * minimum}, false},
		{"HttpApi5xxRateAlarm", map[string]any{"errors": minimum, "requests": 10 * minimum}, true},
		{"HttpApi5xxRateAlarm", map[string]any{"errors": minimum}, true},
		{"HttpApi5xxRateAlarm", map[string]any{"requests": 1000.0}, false},
		{"GenerationFailureRateAlarm", map[string]any{"failed": minimum - 1}, false},
		{"GenerationFailureRateAlarm", map[string]any{"failed": minimum, "done": 100 * minimum}, false},
		{"GenerationFailureRateAlarm", map[string]any{"failed": minimum}, true},
		{"GenerationFailureRateAlarm", map[string]any{"failed": minimum, "done": minimum}, true},
		{"GenerationFailureRateAlarm", map[string]any{"done": 50.0}, false},
	}
	for _, c := range cases {
		p := tmpl.Resources[c.alarm].Properties
		threshold := fmt.Sprint(p["Threshold"])
		if _, _, ok := sam.Intrinsic(p["Threshold"]); ok {
			threshold, err = resolveIntrinsics(tmpl, p["Threshold"], nil)
		}
		limit, perr := strconv.ParseFloat(threshold, 64)
		if err != nil || perr != nil {
			t.Fatalf("%s's threshold %v: %v %v", c.alarm, p["Threshold"], err, perr)
		}
		value := alarmValue(t, tmpl, c.alarm, c.sums)
		if breach := value > limit; breach != c.breach {
			t.Errorf("%s on %v: %v against %v, breaching %v, want %v", c.alarm, c.sums, value, limit, breach, c.breach)
		}
	}
}

// alarmValue is the value an alarm's metric math returns on a period's
// sums: its expressions evaluated in order, each seeing the metrics and
// the expressions before it, IF and FILL as CloudWatch defines them.
func alarmValue(t *testing.T, tmpl *sam.Template, alarm string, sums map[string]any) float64 {
	t.Helper()
	number := func(v any) float64 {
		switch v := v.(type) {
		case int:
			return float64(v)
		case float64:
			return v
		}
		t.Fatalf("%s: %v (%T) is not a number", alarm, v, v)
		return 0
	}
	env := map[string]any{
		"IF": func(cond bool, yes, no any) float64 {
			if cond {
				return number(yes)
			}
			return number(no)
		},
		"FILL": func(v, fill any) float64 {
			if v == nil {
				return number(fill)
			}
			return number(v)
		},
	}
	var returned any
	for _, m := range tmpl.Resources[alarm].Properties["Metrics"].([]any) {
		m := m.(map[string]any)
		id := m["Id"].(string)
		if _, isMetric := m["MetricStat"]; isMetric {
			env[id] = sums[id] // nil: no data
		} else {
			source, err := resolveIntrinsics(tmpl, m["Expression"], nil)
			if err != nil {
				t.Fatal(err)
			}
			v, err := expr.Eval(source, env)
			if err != nil {
				t.Fatalf("%s's %s = %s: %v", alarm, id, source, err)
			}
			env[id] = v
		}
		if m["ReturnData"] == true {
			returned = env[id]
		}
	}
	v, ok := returned.(float64)
	if !ok {
		t.Fatalf("%s returns %v (%T), not a number", alarm, returned, returned)
	}
	return v
}
