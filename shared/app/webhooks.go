package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/awsenv"
	"contentapi/shared/generation"
	"contentapi/shared/generator"
	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
	"contentapi/shared/records"
	"contentapi/shared/webhook"
)

// SenderFunction is the logical ID in template.yaml of the webhook sender
// (functions/sender), fed by the WebhookDeliveries queue.
const SenderFunction = "SenderFunction"

// The webhooks' settings; template.yaml sets them.
const (
	EnvWebhooksTable = "WEBHOOKS_TABLE"
	EnvWebhookQueue  = "WEBHOOK_QUEUE_URL"
	EnvWebhookSeal   = "WEBHOOK_SEAL_SECRET"
	// EnvSQSEndpoint is the local SQS's URL (sqslocal); empty in AWS.
	EnvSQSEndpoint = "SQS_ENDPOINT"
)

// SenderHandler is the sender's entry point: exactly what lambda.Start
// receives.
type SenderHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Webhooks is what the webhooks' parts share: the table, the queue and the
// seal.
type Webhooks struct {
	Store    *hookstore.Store
	Queue    *sqs.Client
	QueueURL string
}

// WebhooksConfig is where the webhooks live.
type WebhooksConfig struct {
	Table, QueueURL string
	// SQSEndpoint is the local SQS (sqslocal); empty in AWS.
	SQSEndpoint string
	// Seal is the secret the signing keys are sealed under (empty locally).
	Seal []byte
}

// webhooks builds the webhooks' parts; a table or queue missing is an
// error naming its variable.
func (a *App) webhooks() (*Webhooks, error) {
	c := a.cfg.Webhooks
	var errs []error
	if c.Table == "" {
		errs = append(errs, fmt.Errorf("%s is not set", EnvWebhooksTable))
	}
	if c.QueueURL == "" {
		errs = append(errs, fmt.Errorf("%s is not set", EnvWebhookQueue))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sealer, err := webhook.NewSealer(c.Seal)
	if err != nil {
		return nil, err
	}
	creds, err := awsenv.Credentials(c.SQSEndpoint != "")
	if err != nil {
		return nil, err
	}
	opts := sqs.Options{
		Region: a.cfg.Region, Credentials: creds,
		HTTPClient: awshttp.NewBuildableClient().WithTimeout(3 * time.Second),
		Retryer:    awsenv.Retryer(3, 500*time.Millisecond),
	}
	if c.SQSEndpoint != "" {
		opts.BaseEndpoint = aws.String(c.SQSEndpoint)
	}
	return &Webhooks{
		Store: &hookstore.Store{Client: a.db, Table: c.Table, Sealer: sealer},
		Queue: sqs.New(opts), QueueURL: c.QueueURL,
	}, nil
}

// optionalWebhooks are the webhooks' parts where the environment names a
// queue, and nil where it names none (a local stack or test without one:
// the local tables come from the template, the queue does not).
func (a *App) optionalWebhooks() (*Webhooks, error) {
	if a.cfg.Webhooks.QueueURL == "" {
		return nil, nil
	}
	return a.webhooks()
}

// publishEnds turns the generations' ends the generator meets into their
// webhooks' deliveries: the record rendered as GET shows it, at the time
// the generation finished, identified by its table, account, id and the
// attempt that wrote it, so the same end met twice is published once.
// WIP: an image's url is left out here; a fresh one belongs in each
// attempt (the sender's), not in the stored payload.
func publishEnds(w *Webhooks) func(context.Context, generator.End) error {
	p := &hooksender.Publisher{Store: w.Store, Queue: w.Queue, QueueURL: w.QueueURL}
	return func(ctx context.Context, e generator.End) error {
		res, ok := lookupResource(e.Resource)
		if !ok {
			return fmt.Errorf("webhooks: no resource %q", e.Resource)
		}
		shown, err := res.Render(e.Item, records.View{Now: time.Now(), Generation: true})
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

// Sender is the webhook sender's handler: a deployment's client, https to
// public addresses only, on the contract's schedule.
func (a *App) Sender() (SenderHandler, error) {
	return a.SenderWith(webhook.Options{}, nil)
}

// SenderWith is the sender with a client's options and a schedule: only
// the local stack and its tests pass others (AllowLoopback, a shortened
// schedule); the function's main calls Sender.
func (a *App) SenderWith(opts webhook.Options, schedule webhook.Schedule) (SenderHandler, error) {
	w, err := a.webhooks()
	if err != nil {
		return nil, err
	}
	s := &hooksender.Sender{
		Store: w.Store, Client: webhook.NewClient(opts), Queue: w.Queue, QueueURL: w.QueueURL,
		Schedule: schedule, Logger: a.logger,
	}
	return s.Handle, nil
}

// MustSender is what the sender function's main starts.
func MustSender(ctx context.Context) SenderHandler { return must(ctx, (*App).Sender) }
