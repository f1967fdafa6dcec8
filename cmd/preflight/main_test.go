package main

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"contentapi/shared/bedrock"
	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/local/doccheck"
	"contentapi/shared/local/sam"
)

// standin is a stand-in of Bedrock served for one test.
type standin struct {
	*bedrockstandin.Server
	url string
}

func startStandin(t *testing.T) standin {
	s := bedrockstandin.New(bedrockstandin.Options{})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return standin{s, srv.URL}
}

// preflight runs the command against the stand-in, with the models given
// as the template's parameters would give them.
func preflight(t *testing.T, s standin, models ...string) (int, string) {
	t.Helper()
	args := append([]string{"--bedrock-region", "us-west-2", "--endpoint", s.url}, models...)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	return code, stdout.String()
}

// row is a model's line of the report: its kind, ids, region, access and
// lifecycle, as the table prints them.
func row(t *testing.T, out, kind string) []string {
	t.Helper()
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) == 6 && f[0] == kind {
			return f[1:]
		}
	}
	t.Fatalf("no %s row in\n%s", kind, out)
	return nil
}

var standinModels = []string{"--text-model", bedrockstandin.TextModel, "--image-model", bedrockstandin.ImageModel}

// Both models answer and are active: every row says so, with the region
// they are called in, and the exit status is 0.
func TestReady(t *testing.T) {
	s := startStandin(t)
	code, out := preflight(t, s, standinModels...)
	if code != exitReady || !strings.Contains(out, "Ready") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	for kind, id := range map[string]string{"text": bedrockstandin.TextModel, "image": bedrockstandin.ImageModel} {
		if got, want := row(t, out, kind), []string{id, id, "us-west-2", accessGranted, lifecycleActive}; !equal(got, want) {
			t.Errorf("%s: %v, want %v", kind, got, want)
		}
	}
}

// A model whose access is denied (the stand-in's access-denied mode, as
// Bedrock answers an account without a working subscription) is reported
// DENIED with what to do, the other granted, and the exit status is 1.
func TestAccessDenied(t *testing.T) {
	s := startStandin(t)
	s.Deny(bedrockstandin.ImageModel)
	code, out := preflight(t, s, standinModels...)
	if code != exitNotReady || !strings.Contains(out, "NOT READY: 1 of 2") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if got := row(t, out, "image"); got[3] != accessDenied || got[4] != lifecycleActive {
		t.Errorf("image: %v", got)
	}
	if got := row(t, out, "text"); got[3] != accessGranted {
		t.Errorf("text: %v", got)
	}
	for _, want := range []string{"AccessDeniedException", "MarketplaceProductIds", "payment method", "15 minutes"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say %s:\n%s", want, out)
		}
	}
}

// A LEGACY model and one Bedrock does not know are not ready, each said
// as such.
func TestLegacyAndUnknownModels(t *testing.T) {
	s := startStandin(t)
	s.List("stability.old-image-v1:0", bedrockstandin.Legacy)
	code, out := preflight(t, s, "--text-model", "acme.no-such-model-v1:0", "--image-model", "stability.old-image-v1:0")
	if code != exitNotReady || !strings.Contains(out, "NOT READY: 2 of 2") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if got := row(t, out, "image"); got[4] != "LEGACY" || !strings.Contains(out, "choose an ACTIVE one") {
		t.Errorf("image: %v\n%s", got, out)
	}
	if got := row(t, out, "text"); strings.Join(got[3:], " ") != accessGranted+" "+notFoundWord {
		t.Errorf("text: %v\n%s", got, out)
	}
}

// A model called through an inference profile is invoked by the profile's
// id and described by its foundation model's, as the functions call it and
// as Bedrock's control plane knows it.
func TestInferenceProfile(t *testing.T) {
	s := startStandin(t)
	s.List("amazon.nova-micro-v1:0", bedrockstandin.Active)
	s.Deny("us.amazon.nova-micro-v1:0")
	code, out := preflight(t, s, "--text-model", "amazon.nova-micro-v1:0", "--text-profile", "us", "--image-model", bedrockstandin.ImageModel)
	got := row(t, out, "text")
	if code != exitNotReady || !equal(got, []string{"amazon.nova-micro-v1:0", "us.amazon.nova-micro-v1:0", "us-west-2", accessDenied, lifecycleActive}) {
		t.Errorf("exit %d, text %v:\n%s", code, got, out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"extra"},
		{"--text-model", "a.b"},
		{"--text-model", "a.b", "--image-model", "c.d"},
		{"--text-model", "a.b", "--image-model", "c.d", "--bedrock-region", "us-west-2", "--region", "us-east-1"},
		{"--endpoint", "http://127.0.0.1:1"},
		{"--text-profile", "us"},
		{"--stak", "contentapi"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "usage:") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

// A stack's parameters are read as the template declares them: with every
// default, as DescribeStacks returns them, preflight checks the models the
// functions call by default (TEXT_MODEL and IMAGE_MODEL), in BedrockRegion.
func TestFromParametersReadsTheTemplate(t *testing.T) {
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	var params []cftypes.Parameter
	for name, p := range tmpl.Parameters {
		params = append(params, cftypes.Parameter{ParameterKey: aws.String(name), ParameterValue: aws.String(fmt.Sprint(p.Default))})
	}
	s, err := fromParameters(params)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Generation || s.Region != tmpl.Parameters["BedrockRegion"].Default || len(s.Models) != 2 ||
		s.Models[0].calledAs() != bedrock.DefaultTextModel || s.Models[1].calledAs() != bedrock.DefaultImageModel {
		t.Errorf("setup %+v", s)
	}
	for i, p := range params {
		if aws.ToString(p.ParameterKey) == "Generation" {
			params[i].ParameterValue = aws.String("off")
		}
	}
	if s, err := fromParameters(params); err != nil || s.Generation {
		t.Errorf("Generation=off: %+v, %v", s, err)
	}
	if _, err := fromParameters(params[:0]); err == nil {
		t.Error("a stack without the parameters is read as one")
	}
}

// make preflight checks the stack that make deploy deploys, where it
// deploys it: samconfig.toml's stack_name and region.
func TestMakePreflightChecksTheDeployedStack(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command(makeBin, "--dry-run", "preflight")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make preflight: %v\n%s", err, out)
	}
	samconfig, err := os.ReadFile(filepath.Join("..", "..", "samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"stack_name", "region"} {
		m := regexp.MustCompile(`(?m)^` + key + ` = "([^"]+)"`).FindSubmatch(samconfig)
		flag := map[string]string{"stack_name": "--stack", "region": "--region"}[key]
		if m == nil || !strings.Contains(string(out), flag+" '"+string(m[1])+"'") {
			t.Errorf("make preflight runs %s; samconfig.toml's %s is %s", out, key, m)
		}
	}
}

// A page's sample report (docs/deploying.md has it) has the columns the
// command prints.
func TestDocsSampleReport(t *testing.T) {
	pages, err := doccheck.ReadPages(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printReports(&out, nil)
	header, _, _ := strings.Cut(out.String(), "\n")
	samples := 0
	for _, p := range pages {
		for line := range strings.Lines(p.Text) {
			if strings.HasPrefix(line, "KIND ") {
				samples++
				if !equal(strings.Fields(line), strings.Fields(header)) {
					t.Errorf("%s: the sample report has the columns %q, the command %q", p.Path, line, header)
				}
			}
		}
	}
	if samples == 0 {
		t.Error("no page has a sample report")
	}
}

func equal(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// signingScope is the region and service a SigV4 request was signed for.
var signingScope = regexp.MustCompile(`Credential=[^/]+/\d{8}/([a-z0-9-]+)/([a-z-]+)/aws4_request`)

// stackStandin answers CloudFormation's DescribeStacks (the Query
// protocol: a form POST, an XML answer) with one stack and its parameters,
// and records the region and service every call to it or to the Bedrock
// stand-in was signed for.
type stackStandin struct {
	name   string
	params map[string]string

	mu     sync.Mutex
	signed []string // "service region"
}

func (s *stackStandin) record(r *http.Request) {
	if m := signingScope.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		s.mu.Lock()
		s.signed = append(s.signed, m[2]+" "+m[1])
		s.mu.Unlock()
	}
}

func (s *stackStandin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.record(r)
	if err := r.ParseForm(); err != nil || r.Form.Get("Action") != "DescribeStacks" {
		http.Error(w, "the stand-in answers DescribeStacks only", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	if r.Form.Get("StackName") != s.name {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id %s does not exist</Message></Error><RequestId>1</RequestId></ErrorResponse>`,
			html.EscapeString(r.Form.Get("StackName")))
		return
	}
	var params strings.Builder
	for k, v := range s.params {
		fmt.Fprintf(&params, "<member><ParameterKey>%s</ParameterKey><ParameterValue>%s</ParameterValue></member>", html.EscapeString(k), html.EscapeString(v))
	}
	fmt.Fprintf(w, `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>`+
		`<StackName>%s</StackName><StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/%[1]s/1</StackId>`+
		`<CreationTime>2026-11-25T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus><Parameters>%s</Parameters>`+
		`</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></DescribeStacksResponse>`,
		html.EscapeString(s.name), params.String())
}

// The stack form, as make preflight runs it: the operator's credentials
// and configuration (here from the environment, with the SDK's
// AWS_ENDPOINT_URL_<SERVICE> pointing at stand-ins), the stack read in its
// region, and the models checked in BedrockRegion, whatever the stack's
// region. A stack without generation calls no model and is ready; a stack
// that does not exist is an error.
func TestStackForm(t *testing.T) {
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	stack := &stackStandin{name: "contentapi", params: map[string]string{}}
	for name, p := range tmpl.Parameters {
		stack.params[name] = fmt.Sprint(p.Default)
	}
	stack.params["TextModel"], stack.params["TextModelProfile"] = bedrockstandin.TextModel, ""
	stack.params["ImageModel"], stack.params["ImageModelProfile"] = bedrockstandin.ImageModel, ""
	models := bedrockstandin.New(bedrockstandin.Options{})
	bedrockSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stack.record(r)
		models.ServeHTTP(w, r)
	}))
	t.Cleanup(bedrockSrv.Close)
	cfnSrv := httptest.NewServer(stack)
	t.Cleanup(cfnSrv.Close)
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
		"AWS_ENDPOINT_URL":                 "",
		"AWS_ENDPOINT_URL_CLOUDFORMATION":  cfnSrv.URL,
		"AWS_ENDPOINT_URL_BEDROCK":         bedrockSrv.URL,
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": bedrockSrv.URL,
	} {
		t.Setenv(k, v)
	}
	runStack := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := runStack("--stack", "contentapi", "--region", "eu-central-1")
	if code != exitReady || errOut != "" {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	bedrockRegion := stack.params["BedrockRegion"]
	if got := row(t, out, "image"); got[2] != bedrockRegion {
		t.Errorf("image called in %s, want the stack's BedrockRegion %s", got[2], bedrockRegion)
	}
	stack.mu.Lock()
	signed := slices.Clone(stack.signed)
	stack.mu.Unlock()
	slices.Sort(signed)
	signed = slices.Compact(signed)
	if want := []string{"bedrock " + bedrockRegion, "cloudformation eu-central-1"}; !equal(signed, want) {
		t.Errorf("calls signed for %v, want %v", signed, want)
	}

	stack.params["Generation"] = "off"
	if code, out, _ := runStack("--stack", "contentapi", "--region", "eu-central-1"); code != exitReady || !strings.Contains(out, "Generation is off") {
		t.Errorf("Generation=off: exit %d:\n%s", code, out)
	}
	if code, _, errOut := runStack("--stack", "no-such-stack", "--region", "eu-central-1"); code != exitNotReady || !strings.Contains(errOut, "does not exist") {
		t.Errorf("a stack that does not exist: exit %d: %s", code, errOut)
	}
}
