// Package app wires configuration, AWS clients and the HTTP handlers into
// the Lambda entry points. The functions, the local gateway and the tests
// all build their handlers here, so there is one way to assemble the service.
package app

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"contentapi/shared/auth"
	"contentapi/shared/awsenv"
	"contentapi/shared/crud"
	"contentapi/shared/hookapi"
	"contentapi/shared/httpapi"
	"contentapi/shared/idempotency"
	"contentapi/shared/metrics"
	"contentapi/shared/quota"
	"contentapi/shared/ratelimit"
	"contentapi/shared/store"
)

// APIEntry is a resource's API function's entry point (DocumentsFunction,
// ImagesFunction): exactly what lambda.Start receives. Each function's entry
// point is named one way: its type <F>Entry, built by (*App).<F>Entry and
// started by functions/*/main.go as Must<F> (MustAPI, MustGenerator,
// MustTally, MustSender).
type APIEntry func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// App holds what a warm function reuses across invocations.
type App struct {
	cfg    Config
	db     *dynamodb.Client
	auth   *auth.Authenticator
	limits httpapi.Limiter    // nil when rate limiting is off
	idem   *idempotency.Store // nil without an idempotency table
	logger *slog.Logger
	// metrics go out with the logs, as EMF lines.
	metrics *metrics.Emitter
	// models are built on first use, where generation is on.
	models func() (models, error)
	parts  Parts
}

// FromEnv builds the app from the environment, with the parts its
// function calls.
func FromEnv(ctx context.Context, parts Parts) (*App, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	db, err := NewDynamoDB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return New(cfg, db, parts), nil
}

// New builds the app on a given DynamoDB client (tests and benchmarks pass
// their own), with the parts its functions call.
func New(cfg Config, db *dynamodb.Client, parts Parts) *App {
	out := cfg.LogOutput
	if out == nil {
		out = os.Stdout
	}
	logs := httpapi.NewLogHandler(out, cfg.LogLevel)
	a := &App{
		cfg:     cfg,
		db:      db,
		auth:    auth.NewAuthenticator(db, cfg.KeysTable, cfg.AuthCacheTTL, cfg.KeyChecksum),
		logger:  slog.New(logs),
		metrics: metrics.New(logs.Writer(), cfg.Stack),
		parts:   parts,
	}
	if cfg.IdempotencyTable != "" {
		a.idem = idempotency.New(db, cfg.IdempotencyTable, store.Classify)
		if cfg.Clock != nil {
			a.idem.Now = cfg.Clock
		}
	}
	if cfg.RateLimitPerMinute > 0 {
		a.limits = ratelimit.New(db, cfg.RateLimitTable, cfg.RateLimitPerMinute)
	}
	a.models = sync.OnceValues(a.newModels)
	return a
}

// NewDynamoDB is the DynamoDB client: built once per warm function, with a
// bounded retry budget and per-attempt timeouts so no call outlives the
// request's deadline.
//
// It is built on the SDK's default configuration for the environment
// Lambda provides (awsenv.Load).
func NewDynamoDB(ctx context.Context, cfg Config) (*dynamodb.Client, error) {
	awscfg, err := awsenv.Load(ctx, cfg.Region, cfg.DynamoDBEndpoint != "")
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(awscfg, func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(3 * time.Second)
		o.Retryer = retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.MaxBackoff = 500 * time.Millisecond
		})
		if cfg.DynamoDBEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.DynamoDBEndpoint)
		}
	}), nil
}

// ExtraRoutes are the template routes of a function beyond its resource's
// operations (keyed as "METHOD /path", or "$default"): the first
// resource's function also serves the OpenAPI document, the account's
// usage, the document templates and its webhook endpoints, and answers
// unknown paths (so a wrong method on a webhooks path gets its 405 there
// too).
func ExtraRoutes(function string) []string {
	if function != Resources[0].Function() {
		return nil
	}
	routes := []string{"GET " + OpenAPIPath, "GET " + UsagePath, "GET " + TemplatesPath, "$default"}
	for _, r := range (&hookapi.API{}).Routes() {
		routes = append(routes, r.Method+" "+r.Pattern)
	}
	return routes
}

// MustAPI is what a function's main starts: the entry point of the
// named resource ("images"), configured from the environment, with the
// parts its function calls. A misconfigured function stops here, at init,
// with the error in its log.
func MustAPI(ctx context.Context, resource string, parts Parts) APIEntry {
	return must(ctx, parts, func(a *App) (APIEntry, error) { return a.APIEntry(resource) })
}

// APIEntries are the API functions' entry points by the function's logical ID in
// template.yaml, as functions/*/main.go start them. The local gateway and
// the tests route to these.
func (a *App) APIEntries() (map[string]APIEntry, error) {
	fns := map[string]APIEntry{}
	for _, r := range a.resources() {
		fn, err := a.APIEntry(r.Def.Name)
		if err != nil {
			return nil, err
		}
		fns[r.Function()] = fn
	}
	return fns, nil
}

// APIEntry is the entry point of the named resource's function.
func (a *App) APIEntry(resource string) (APIEntry, error) {
	h, err := a.Handler(resource)
	if err != nil {
		return nil, err
	}
	return lambdaFunction(h), nil
}

// Handler serves the named resource's function over plain HTTP: its
// operations under /api/v1/<resource>, and for the first resource the
// OpenAPI document and the usage too (the template's $default route goes
// there). Without its table, or for the first resource without any
// resource's table (the usage reads them all), the function is
// misconfigured, and that is an error naming the variable.
func (a *App) Handler(resource string) (http.Handler, error) {
	res, ok := a.lookupResource(resource)
	if !ok {
		return nil, fmt.Errorf("no resource %q", resource)
	}
	table, err := a.table(res)
	if err != nil {
		return nil, err
	}
	served := crud.New(res.Def, table)
	served.MaxAnswerBytes = a.cfg.MaxAnswerBytes
	served.Cursors = a.cfg.Cursors
	if served.Lookup, err = a.named(res); err != nil {
		return nil, err
	}
	if a.cfg.Generation.On && res.Def.Content != nil {
		m, err := a.generating(res)
		if err != nil {
			return nil, err
		}
		g := &crud.Generation{Generator: m.gen, Wait: a.cfg.Generation.Wait}
		if res.Def.Content.Picture {
			g.PictureURL = m.pics.URL
		}
		served.WithGeneration(g)
	}
	routes := served.Routes()
	if res.Function() == a.resources()[0].Function() {
		var tables []*store.Table
		for _, r := range a.resources() {
			t := table // this function's own resource: its store serves the usage route too
			if r.Table() != res.Table() {
				if t, err = a.table(r); err != nil {
					return nil, fmt.Errorf("%w (the usage route reads every resource's table)", err)
				}
			}
			tables = append(tables, t)
		}
		w, err := a.optionalWebhooks()
		if err != nil {
			return nil, err
		}
		var counters []Counter
		if w != nil {
			counters = append(counters, w.Store) // the deliveries
		}
		routes = append(routes,
			OpenAPIRoute(),
			UsageRoute(tables, tables[0].Now, counters...),
			TemplatesRoute())
		hooks, err := a.webhookRoutes(w)
		if err != nil {
			return nil, err
		}
		routes = append(routes, hooks...)
	}
	return a.handler(res.Def.Name, routes, served.Timeout), nil
}

// table is a resource's store: counting under the deployment's quota
// defaults, on the app's clock, settling what requests leave unfinished
// once it is older than any request can be.
func (a *App) table(res Resource) (*store.Table, error) {
	name := a.cfg.Tables[res.Table()]
	if name == "" {
		return nil, fmt.Errorf("%s is not set", res.TableEnv())
	}
	var err error
	t := store.New(a.db, name, res.Def)
	t.Quota = res.Policy(a.cfg.QuotaDefaults)
	t.Horizon = a.cfg.SettleHorizon()
	t.ReadBudget = a.cfg.listBudget()
	t.ReadsBatch = a.cfg.ReadsBatch
	if a.cfg.Generation.On {
		// Each create and regenerate starts a generation, which holds
		// what it may use until it ends (the tally gives back the rest).
		t.Quota.Reserve = res.Reserve
	}
	if a.cfg.Clock != nil {
		t.Now = a.cfg.Clock
	}
	if res.Def.Content == nil {
		return t, nil
	}
	// What every generated resource spends is summed, and held to the
	// monthly spend limit, on the account's spend ledger: the first
	// generated resource's spend item (shared/store, ledger.go).
	if ledger := a.ledgerResource(); ledger.Table() != res.Table() {
		if t.Ledger, err = a.table(ledger); err != nil {
			return nil, fmt.Errorf("%w (the account's spend ledger is in it)", err)
		}
	}
	t.Cap.Default = a.cfg.QuotaDefaults[quota.Spend]
	if a.cfg.Generation.On {
		t.Cap.Worst = a.cfg.Generation.worstCost(res.Def.Content)
	}
	return t, nil
}

// ledgerResource is the resource in whose table the accounts' spend
// ledgers are: the first generated one.
func (a *App) ledgerResource() Resource {
	i := slices.IndexFunc(a.resources(), func(r Resource) bool { return r.Def.Content != nil })
	return a.resources()[i]
}

// handler puts the routes of a function (named as its folder under
// functions/) behind the shared middleware.
func (a *App) handler(function string, routes []httpapi.Route, timeoutFor func(*http.Request) time.Duration) http.Handler {
	var h http.Handler = httpapi.NewMux(routes)
	if a.idem != nil {
		h = a.withIdempotency(h)
	}
	return httpapi.Wrap(h, httpapi.Config{
		Auth:        a.auth,
		Limiter:     a.limits,
		Public:      openAPIPublic,
		Classify:    store.Classify,
		AllowOrigin: a.cfg.AllowOrigin,
		Timeout:     a.cfg.RequestTimeout,
		TimeoutFor:  timeoutFor,
		Logger:      a.logger,
		Metrics:     a.metrics,
		Function:    function,
	})
}

// withIdempotency serves requests with an Idempotency-Key through the
// idempotency store, but for the webhooks' paths: a replayed registration
// or rotation would keep the endpoint's secret in that store and show it
// again, and the secret is shown once and kept only sealed. There a
// malformed key is still 400, as everywhere. A delivery's retry, whose
// answer holds no secret, is kept (hookapi.Replayable).
func (a *App) withIdempotency(h http.Handler) http.Handler {
	kept, unkept := a.idem.Wrap(h), idempotency.CheckOnly(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hookapi.Serves(r.URL.Path) && !hookapi.Replayable(r.Method, r.URL.Path) {
			unkept.ServeHTTP(w, r)
			return
		}
		kept.ServeHTTP(w, r)
	})
}

// lambdaFunction adapts an HTTP handler to the API Gateway v2 proxy event
// with aws-lambda-go-api-proxy's adapter, the gateway's request id where
// the middleware finds it. The adapter fails the whole invocation on an
// event it cannot turn into a request (bad base64 body, unparsable path,
// no method), logging its URL, query and all: those get a JSON 400
// instead, as does an answer without a status, which the adapter refuses.
func lambdaFunction(h http.Handler) APIEntry {
	adapter := httpadapter.NewV2(h)
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		if ev.IsBase64Encoded {
			// Decoded here, so that bad base64 is the handler's 400; the
			// adapter then takes the body as it is.
			body, err := base64.StdEncoding.DecodeString(ev.Body)
			if err != nil {
				body = nil
				ctx = httpapi.WithUndecodableBody(ctx)
			}
			ev.Body, ev.IsBase64Encoded = string(body), false
		}
		if !convertible(ev) {
			return badEvent(ev), nil
		}
		resp, err := adapter.ProxyWithContext(httpapi.WithGatewayRequestID(ctx, ev.RequestContext.RequestID), ev)
		if err != nil {
			return badEvent(ev), nil
		}
		return resp, nil
	}
}

// convertible reports whether the adapter can make a request of ev: its
// method given, and the URL it builds one that parses.
func convertible(ev events.APIGatewayV2HTTPRequest) bool {
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	_, err := http.NewRequest(ev.RequestContext.HTTP.Method, "https://"+ev.RequestContext.DomainName+path+"?"+ev.RawQueryString, nil)
	return ev.RequestContext.HTTP.Method != "" && err == nil
}

func badEvent(ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	return events.APIGatewayV2HTTPResponse{
		StatusCode: http.StatusBadRequest,
		Headers: map[string]string{
			"Content-Type":                httpapi.ContentType,
			"X-Request-Id":                ev.RequestContext.RequestID,
			"Access-Control-Allow-Origin": "*",
		},
		Body: `{"message":"The request could not be parsed.","status":400}` + "\n",
	}
}
