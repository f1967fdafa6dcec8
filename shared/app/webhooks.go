package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// webhooks builds the webhooks' parts from the environment: every
// setting missing is an error naming it.
func (a *App) webhooks() (*Webhooks, error) {
	var errs []error
	get := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is not set", name))
		}
		return v
	}
	table, queueURL := get(EnvWebhooksTable), get(EnvWebhookQueue)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sealer, err := webhook.NewSealer([]byte(os.Getenv(EnvWebhookSeal)))
	if err != nil {
		return nil, err
	}
	endpoint := os.Getenv(EnvSQSEndpoint)
	creds, err := awsenv.Credentials(endpoint != "")
	if err != nil {
		return nil, err
	}
	opts := sqs.Options{
		Region: a.cfg.Region, Credentials: creds,
		HTTPClient: awshttp.NewBuildableClient().WithTimeout(3 * time.Second),
		Retryer:    awsenv.Retryer(3, 500*time.Millisecond),
	}
	if endpoint != "" {
		opts.BaseEndpoint = aws.String(endpoint)
	}
	return &Webhooks{
		Store: &hookstore.Store{Client: a.db, Table: table, Sealer: sealer},
		Queue: sqs.New(opts), QueueURL: queueURL,
	}, nil
}

// optionalWebhooks are the webhooks' parts where the environment names a
// queue, and nil where it names none (a local stack or test without one:
// the local tables come from the template, the queue does not).
func (a *App) optionalWebhooks() (*Webhooks, error) {
	if os.Getenv(EnvWebhookQueue) == "" {
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
	return a.sender(webhook.Options{}, nil)
}

// sender is the sender with a client's options and a schedule: only the
// local stack passes others (AllowLoopback, a shortened schedule).
func (a *App) sender(opts webhook.Options, schedule webhook.Schedule) (SenderHandler, error) {
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
