package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/generation"
	"contentapi/shared/generator"
	"contentapi/shared/hookapi"
	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
	"contentapi/shared/httpapi"
	"contentapi/shared/quota"
	"contentapi/shared/ratelimit"
	"contentapi/shared/records"
	"contentapi/shared/store"
	"contentapi/shared/webhook"
)

// SenderFunction is the logical ID in template.yaml of the webhook sender
// (functions/sender), fed by the WebhookDeliveries queue.
const SenderFunction = "SenderFunction"

// The webhooks' settings; make generate writes their names into template.yaml.
const (
	EnvWebhooksTable = "WEBHOOKS_TABLE"
	// EnvWebhookQueue is the fast lane's queue, EnvWebhookSlowQueue the
	// slow lane's (hooksender.Lanes).
	EnvWebhookQueue     = "WEBHOOK_QUEUE_URL"
	EnvWebhookSlowQueue = "WEBHOOK_SLOW_QUEUE_URL"
	EnvWebhookSeal      = "WEBHOOK_SEAL_SECRET"
	// EnvSQSEndpoint is the local SQS's URL (sqslocal); empty in AWS.
	EnvSQSEndpoint = "SQS_ENDPOINT"
)

// SenderEntry is the sender's entry point: exactly what lambda.Start
// receives.
type SenderEntry func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Webhooks is what the webhooks' parts share: the table (with the seal and
// the deliveries' quota) and the lanes' queues.
type Webhooks struct {
	Store *hookstore.Store
	Lanes hooksender.Lanes
}

// WebhooksConfig is where the webhooks live.
type WebhooksConfig struct {
	// QueueURL is the fast lane's, SlowQueueURL the slow lane's.
	Table, QueueURL, SlowQueueURL string
	// SQSEndpoint is the local SQS (sqslocal); empty in AWS.
	SQSEndpoint string
	// Seal is the secret the signing keys are sealed under (empty locally).
	Seal []byte
	// Client and Schedule are the zero value in a deployment (https to
	// public addresses, the contract's schedule). ConfigFromEnv never
	// sets them: only the local stack (WEBHOOKS_ALLOW_LOOPBACK=1) and
	// tests do, so no deployment can reach loopback or shorten retries.
	Client   webhook.Options
	Schedule webhook.Schedule
}

// webhooks builds the webhooks' parts; a table or queue missing is an
// error naming its variable.
func (a *App) webhooks() (*Webhooks, error) {
	c := a.cfg.Webhooks
	var errs []error
	for _, v := range []struct{ value, name string }{
		{c.Table, EnvWebhooksTable}, {c.QueueURL, EnvWebhookQueue}, {c.SlowQueueURL, EnvWebhookSlowQueue},
	} {
		if v.value == "" {
			errs = append(errs, fmt.Errorf("%s is not set", v.name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sealer, err := webhook.NewSealer(c.Seal)
	if err != nil {
		return nil, err
	}
	if a.parts.Queue == nil {
		return nil, errNoPart("Queue", "the webhooks are on")
	}
	queue, err := a.parts.Queue(a.cfg)
	if err != nil {
		return nil, err
	}
	deliveries := WebhooksQuota
	deliveries.Defaults = a.cfg.QuotaDefaults
	return &Webhooks{
		Store: &hookstore.Store{Client: a.db, Table: c.Table, Sealer: sealer, Quota: deliveries},
		Lanes: hooksender.Lanes{Queue: queue, Fast: c.QueueURL, Slow: c.SlowQueueURL},
	}, nil
}

// optionalWebhooks are the webhooks' parts where the environment names
// their table or queue, and nil where it names neither (a test stack
// without them: the local tables come from the template, the queue does
// not); one named without the other is an error.
func (a *App) optionalWebhooks() (*Webhooks, error) {
	if c := a.cfg.Webhooks; c.Table == "" && c.QueueURL == "" && c.SlowQueueURL == "" {
		return nil, nil
	}
	return a.webhooks()
}

// sealing are the webhooks' parts for what seals or opens signing keys
// (the endpoints API, the sender): in AWS without a seal secret the keys
// would be sealed under a key anyone can derive, so that is an error.
func (a *App) sealing() error {
	if len(a.cfg.Webhooks.Seal) == 0 && a.cfg.DynamoDBEndpoint == "" {
		return fmt.Errorf("%s is not set", EnvWebhookSeal)
	}
	return nil
}

// webhookRoutes are the endpoints API's routes where the function has the
// webhooks' settings (w, optionalWebhooks'), and none where it has neither
// table nor queue.
func (a *App) webhookRoutes(w *Webhooks) ([]httpapi.Route, error) {
	if w == nil {
		return nil, nil
	}
	if err := a.sealing(); err != nil {
		return nil, err
	}
	api := &hookapi.API{
		Store:     w.Store,
		Client:    webhook.NewClient(a.cfg.Webhooks.Client),
		Publisher: w.publisher(),
		Events:    EventTypesOf(a.resources()),
	}
	if a.cfg.RateLimitTable != "" {
		api.TestRate = ratelimit.New(a.db, a.cfg.RateLimitTable, hookapi.TestsPerMinute)
	}
	if a.cfg.Clock != nil {
		api.Now = a.cfg.Clock
		if api.TestRate != nil {
			api.TestRate.Now = a.cfg.Clock
		}
	}
	return api.Routes(), nil
}

func (w *Webhooks) publisher() *hooksender.Publisher {
	return &hooksender.Publisher{Store: w.Store, Lanes: w.Lanes}
}

// freshPictureURL puts into the record of an event of a resource that
// generates pictures (an image's) a url presigned for this attempt, as GET
// presigns one for each read: the queued body keeps the picture's name
// (result) and no url, since one made at the event would have expired
// (picturebucket.URLExpiry) before the later retries.
func freshPictureURL(pics Pictures, resources []Resource) func(context.Context, string, []byte) ([]byte, error) {
	pictured := generatingObjects(resources, func(c *generation.Content) bool { return c.Picture })
	return func(ctx context.Context, eventType string, body []byte) ([]byte, error) {
		if !slices.ContainsFunc(pictured, func(o string) bool { return eventType == webhook.Generated(o) || eventType == webhook.Failed(o) }) {
			return body, nil
		}
		var ev webhook.Envelope
		var shown struct {
			Result *string `json:"result"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			return nil, fmt.Errorf("webhooks: an image event's body: %w", err)
		}
		if err := json.Unmarshal(ev.Data, &shown); err != nil {
			return nil, fmt.Errorf("webhooks: an image event's record: %w", err)
		}
		if shown.Result == nil {
			return body, nil // no picture (a failure before the first): url stays null
		}
		u, err := pics.URL(ctx, *shown.Result)
		if err != nil {
			return nil, err
		}
		url, _ := json.Marshal(u) // a string always encodes
		if ev.Data, err = withField(ev.Data, "url", url); err != nil {
			return nil, fmt.Errorf("webhooks: an image event's record: %w", err)
		}
		return json.Marshal(ev)
	}
}

// withField is the JSON object obj with key's value set to value, its keys
// in the order they came (the record's, as GET shows it): in place where
// obj holds key, else last.
func withField(obj json.RawMessage, key string, value json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out bytes.Buffer
	put := func(name string, v json.RawMessage) {
		if out.Len() > 0 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(name) // a string always encodes
		out.Write(k)
		out.WriteByte(':')
		out.Write(v)
	}
	placed := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if name == key {
			v, placed = value, true
		}
		put(name, v)
	}
	if !placed {
		put(key, value)
	}
	return json.RawMessage("{" + out.String() + "}"), nil
}

// publishEnds turns the generations' ends the generator meets into their
// webhooks' deliveries: the record rendered as GET shows it, at the time
// the generation finished, identified by its table, account, id and the
// attempt that wrote it, so the same end met twice is published once.
// An image's url is left out (null): the sender presigns one for each
// attempt (freshPictureURL).
func (a *App) publishEnds(w *Webhooks) func(context.Context, generator.End) error {
	p := w.publisher()
	return func(ctx context.Context, e generator.End) error {
		res, ok := a.lookupResource(e.Resource)
		if !ok {
			return fmt.Errorf("webhooks: no resource %q", e.Resource)
		}
		shown, err := res.Def.Render.Render(store.Stored(e.Item), records.View{Now: time.Now(), Generation: true})
		if err != nil {
			return err
		}
		data, err := json.Marshal(shown)
		if err != nil {
			return err
		}
		return p.Publish(ctx, hooksender.Event{
			Account: e.Account, Type: e.Type, At: endedAt(e.State), Data: data,
			Identity: []string{e.Table, e.Account, strconv.FormatInt(e.ID, 10), e.State.Attempt},
		})
	}
}

// ThresholdData is a usage.threshold event's data: the limit reached (its
// kind, and for reads the resource whose reads they are), the share of it
// reached in percent, the usage then and the limit, both in the kind's unit
// (dollars for spend), and the month.
type ThresholdData struct {
	Kind      quota.Kind `json:"kind"`
	Resource  string     `json:"resource,omitempty"`
	Threshold int64      `json:"threshold"`
	Used      any        `json:"used"`
	Limit     any        `json:"limit"`
	Period    string     `json:"period"`
}

// thresholdData is the event's data of a crossing.
func thresholdData(c generator.Crossing) ThresholdData {
	th := c.Threshold
	d := ThresholdData{Kind: th.Kind, Threshold: th.Percent, Used: th.Used, Limit: th.Limit, Period: th.Period}
	switch th.Kind {
	case quota.Spend:
		d.Used, d.Limit = generation.USD(th.Used), generation.USD(th.Limit)
	case quota.Reads:
		d.Resource = c.Resource
	}
	return d
}

// publishCrossings turns the usage thresholds' crossings the generator
// meets into usage.threshold deliveries, identified by the crossing
// (store.ThresholdID), so the same crossing met twice is published once.
func publishCrossings(w *Webhooks) func(context.Context, generator.Crossing) error {
	p := w.publisher()
	return func(ctx context.Context, c generator.Crossing) error {
		data, err := json.Marshal(thresholdData(c))
		if err != nil {
			return err
		}
		return p.Publish(ctx, hooksender.Event{
			Account: c.Account, Type: webhook.Threshold, At: c.Threshold.At, Data: data,
			Identity: store.ThresholdID(c.Table, c.Account, c.Threshold),
		})
	}
}

// endedAt is when a generation ended, as its record says: the same
// however often its end is met, so its delivery's key is too.
func endedAt(s generation.State) time.Time {
	for _, v := range []*string{s.FinishedAt, &s.RequestedAt} {
		if v != nil {
			if t, err := generation.ParseTime(*v); err == nil {
				return t
			}
		}
	}
	return time.Unix(0, 0)
}

// SenderEntry is the webhook sender's handler: in a deployment https to public
// addresses only, on the contract's schedule (WebhooksConfig says who may
// set otherwise).
func (a *App) SenderEntry() (SenderEntry, error) {
	w, err := a.webhooks()
	if err != nil {
		return nil, err
	}
	if err := a.sealing(); err != nil {
		return nil, err
	}
	pics, err := a.pictures()
	if err != nil {
		return nil, err
	}
	if pics == nil && a.cfg.Generation.Bucket != "" {
		return nil, a.noPictures("image events get fresh URLs")
	}
	c := a.cfg.Webhooks
	s := &hooksender.Sender{
		Store: w.Store, Client: webhook.NewClient(c.Client), Lanes: w.Lanes,
		Schedule: c.Schedule, Logger: a.logger,
	}
	if a.cfg.Clock != nil {
		s.Now, w.Store.Now = a.cfg.Clock, a.cfg.Clock
	}
	if pics != nil {
		s.Fresh = freshPictureURL(pics, a.resources())
	}
	// The deliveries limit's thresholds, told by the sender that counts
	// them: the webhooks table has no stream for the generator to read.
	publish := publishCrossings(w)
	s.Crossed = func(ctx context.Context, account string, c quota.Crossing, at time.Time) error {
		return publish(ctx, generator.Crossing{Table: w.Store.Table, Account: account, Threshold: store.ThresholdFrom(c, at)})
	}
	return s.Handle, nil
}

// MustSender is what the sender function's main starts.
func MustSender(ctx context.Context, parts Parts) SenderEntry {
	return must(ctx, parts, (*App).SenderEntry)
}
