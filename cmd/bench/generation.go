package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/local/ddbmeter"
	"contentapi/shared/local/genstack"
	"contentapi/shared/local/runtimeapi"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/streams"
	"contentapi/shared/store"
)

// Generation's figures: create to done with the Bedrock stand-in, what a
// generation's writes cost, and the other functions' bootstraps.

// generationRuns are the creates each ms_generate_* figure is the median of.
const (
	documentRuns = 21
	imageRuns    = 11
)

// genBuilds are the images and generator functions' bootstraps.
type genBuilds struct {
	done                                        chan struct{}
	imagesARM64, generatorARM64, generatorAMD64 string
	errs                                        map[string]error
}

// startGenerationBuilds builds them in the background, one after another.
func startGenerationBuilds(ctx context.Context, root, work string) *genBuilds {
	g := &genBuilds{done: make(chan struct{}), errs: map[string]error{}}
	go func() {
		defer close(g.done)
		build := func(name, arch, pkg string) string {
			out := filepath.Join(work, name)
			if err := goBuild(ctx, root, out, []string{"GOOS=linux", "GOARCH=" + arch, "CGO_ENABLED=0"},
				append(append([]string{"build"}, lambdaBuildFlags...), pkg)...); err != nil {
				g.errs[name] = err
				return ""
			}
			return out
		}
		g.imagesARM64 = build("images-arm64", "arm64", "./functions/images")
		g.generatorARM64 = build("generator-arm64", "arm64", "./functions/generator")
		g.generatorAMD64 = build("generator-amd64", "amd64", "./functions/generator")
	}()
	return g
}

// goBuild runs go (args) with env added, writing out.
func goBuild(ctx context.Context, root, out string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", append(args[:1:1], append([]string{"-o", out}, args[1:]...)...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

// generationEnv is the functions' environment for generation's local
// parts, which lambdaEnv adds to the template's.
var generationEnv map[string]string

// measureGeneration reports generation's figures. parts are the local
// stand-ins the functions' environment (genEnv) points at.
func measureGeneration(ctx context.Context, b *board, meter *ddbmeter.Meter, db *dynamodb.Client, plain *dynamodb.Client, cfg app.Config,
	parts *genstack.Stack, tmpl *sam.Template, endpoint string, tables map[string]string, builds *genBuilds) error {
	logf("generation: creates to done with the Bedrock stand-in")
	cfg.Generation = parts.Generation()
	a := app.New(cfg, db)
	key, _, err := auth.NewKeys(plain, tables["ApiKeysTable"], auth.PublicChecksum).Create(ctx, "bench-generation",
		[]auth.Scope{auth.ScopeRead, auth.ScopeWrite}, time.Time{})
	if err != nil {
		return err
	}
	c := &client{key: key}
	if c.documents, err = a.Handler("documents"); err != nil {
		return err
	}
	if c.images, err = a.Handler("images"); err != nil {
		return err
	}
	document := url.Values{"name": {"Launch post"}, "prompt": {"Announce our new espresso machine, which brews barista-quality coffee at home."},
		"template_id": {"9"}, "creativity": {"0.75"}}
	picture := url.Values{"name": {"Lighthouse"}, "description": {"A red lighthouse on a cliff at dusk, waves below"},
		"resolution": {"512x512"}, "style": {"digital_art"}, "filter": {"sepia"}}

	for _, m := range []struct {
		figure, path string
		form         url.Values
		runs         int
	}{
		{"ms_generate_doc_local", "/api/v1/documents", document, documentRuns},
		{"ms_generate_image_local", "/api/v1/images", picture, imageRuns},
	} {
		var took []time.Duration
		for range m.runs {
			start := time.Now()
			ans := c.do("POST", m.path, m.form, nil)
			took = append(took, time.Since(start))
			if problem := generated(ans); problem != "" {
				b.missing(problem, m.figure)
				took = nil
				break
			}
		}
		if took != nil {
			b.add(Figure{Name: m.figure, Value: float64(percentile(took, 50).Microseconds()) / 1000, Unit: "ms"})
		}
	}

	// What a create that generates costs in DynamoDB: the create's own
	// writes, and the write-back of the content (the last call).
	for _, m := range []struct{ name, path string }{{"doc", "/api/v1/documents"}, {"image", "/api/v1/images"}} {
		form := document
		if m.name == "image" {
			form = picture
		}
		var ans answer
		calls := meter.Measure(func() { ans = c.do("POST", m.path, form, nil) })
		own := slices.DeleteFunc(calls, func(call ddbmeter.Call) bool { return call.Purpose != "" })
		if problem := generated(ans); problem != "" || len(own) == 0 {
			b.missing(problem, "calls_generate_"+m.name, "wru_writeback_"+m.name)
			continue
		}
		b.add(Figure{Name: "calls_generate_" + m.name, Value: float64(ddbmeter.Sum(own).RoundTrips), Unit: "calls"})
		b.add(Figure{Name: "wru_writeback_" + m.name, Value: own[len(own)-1].Units, Unit: "wru"})
	}

	// The generator function's path: a record left pending, claimed and
	// written back from its stream event.
	stream, err := a.Stream()
	if err != nil {
		return err
	}
	ev, err := pendingEvent(ctx, c, plain, tables["DocumentsTable"], document)
	if err != nil {
		return err
	}
	var resp events.DynamoDBEventResponse
	calls := meter.Measure(func() { resp, err = stream(ctx, ev) })
	if err != nil || len(resp.BatchItemFailures) != 0 {
		b.missing(fmt.Sprintf("the generator failed the event: %v %+v", err, resp), "calls_generator_doc", "wru_generator_doc")
	} else {
		t := ddbmeter.Sum(calls)
		b.add(Figure{Name: "calls_generator_doc", Value: float64(t.RoundTrips), Unit: "calls"})
		b.add(Figure{Name: "wru_generator_doc", Value: t.Writes, Unit: "wru"})
	}

	if builds == nil {
		return nil // -quick: nothing built
	}
	logf("waiting for the other bootstraps")
	select {
	case <-builds.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, x := range []struct{ figure, path, name string }{
		{"bytes_bootstrap_images", builds.imagesARM64, "images-arm64"},
		{"bytes_bootstrap_generator", builds.generatorARM64, "generator-arm64"},
	} {
		if err := builds.errs[x.name]; err != nil {
			b.missing(err.Error(), x.figure)
			continue
		}
		st, err := os.Stat(x.path)
		if err != nil {
			return err
		}
		b.add(Figure{Name: x.figure, Value: float64(st.Size()), Unit: "bytes"})
	}
	if err := builds.errs["generator-amd64"]; err != nil {
		b.missing(err.Error(), "ms_cold_start_generator")
		return nil
	}
	logf("generator cold start: %d runs", coldStartRuns)
	ev, err = pendingEvent(ctx, c, plain, tables["DocumentsTable"], document)
	if err != nil {
		return err
	}
	event, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	env := lambdaEnv(tmpl, endpoint, tables, filepath.Dir(builds.generatorAMD64))
	env = append(env, "AWS_LAMBDA_FUNCTION_NAME=contentapi-GeneratorFunction")
	runs, err := runtimeapi.ColdStarts(ctx, builds.generatorAMD64, env, event, coldStartRuns)
	if err != nil {
		b.missing(err.Error(), "ms_cold_start_generator")
		return nil
	}
	var total []time.Duration
	for _, r := range runs {
		var resp events.DynamoDBEventResponse
		if err := json.Unmarshal(r.Response, &resp); err != nil || len(resp.BatchItemFailures) != 0 {
			b.missing(fmt.Sprintf("unexpected response %.300s", r.Response), "ms_cold_start_generator")
			return nil
		}
		total = append(total, r.Total)
	}
	b.add(Figure{Name: "ms_cold_start_generator", Value: float64(percentile(total, 50).Microseconds()) / 1000, Unit: "ms"})
	return nil
}

// generated is what is wrong with a create's answer ("" when it holds its
// content).
func generated(a answer) string {
	var d struct {
		Generation struct{ Status string }
		Result     *string
	}
	if a.status != 201 || json.Unmarshal(a.body.Data, &d) != nil || d.Generation.Status != "done" || d.Result == nil {
		return fmt.Sprintf("create: %d %.300s", a.status, a.raw)
	}
	return ""
}

// pendingEvent creates a document left to the queue and returns the stream
// event that announces it, as its table's stream would.
func pendingEvent(ctx context.Context, c *client, db *dynamodb.Client, table string, form url.Values) (events.DynamoDBEvent, error) {
	ans := c.do("POST", "/api/v1/documents", form, map[string]string{"Prefer": "respond-async"})
	if ans.status != 201 {
		return events.DynamoDBEvent{}, fmt.Errorf("create: %d %.300s", ans.status, ans.raw)
	}
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: store.Item{store.AttrAccount: &types.AttributeValueMemberS{Value: "bench-generation"},
			store.AttrID: &types.AttributeValueMemberN{Value: strconv.FormatInt(ans.id(), 10)}}})
	if err != nil {
		return events.DynamoDBEvent{}, err
	}
	return events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
		EventID: "bench", EventName: "INSERT", EventSource: "aws:dynamodb", EventVersion: "1.1", AWSRegion: "us-east-1",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + table + "/stream/2026-01-01T00:00:00.000",
		Change:         events.DynamoDBStreamRecord{NewImage: streams.Image(out.Item), SequenceNumber: "1", StreamViewType: "NEW_AND_OLD_IMAGES"},
	}}}, nil
}
