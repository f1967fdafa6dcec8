// Package generator makes a record's content and writes it back: each
// resource declares what its content is (generation.Content: a document's
// text from the text model, an image's picture from the image model), and
// the generator runs it, claims, and writes back, knowing no resource. Both
// places that generate run it: the API functions within a request that
// waits, and the generator function on the tables' streams (stream.go).
//
// Exactly one attempt writes a record: whoever generates holds the
// record's current attempt (running), and every write-back is conditional
// on it (store.Table.Transition). A write that lost (the record was
// deleted, regenerated, or taken over) throws away what it made.
package generator

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"contentapi/shared/generation"
	"contentapi/shared/metrics"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// Pictures is where pictures are kept (picturebucket.Store).
type Pictures interface {
	Put(ctx context.Context, name string, png []byte) error
	Keep(ctx context.Context, name string) error
	Delete(ctx context.Context, name string) error
}

// Generator holds the models and the bucket; build it once per warm
// function.
type Generator struct {
	Text  generation.TextModel
	Image generation.ImageModel
	// TextModel and ImageModel are the configured model ids, recorded on a
	// record when its generation is requested.
	TextModel, ImageModel string
	Pictures              Pictures
	// MaxTries is how often a generation that failed for a reason that
	// may pass (throttling, an unavailable or slow model) goes back to the
	// queue before the record fails with that reason.
	MaxTries int
	// Backoff is how long a generator waits before it takes up a
	// generation that has failed tries times.
	Backoff func(tries int) time.Duration
	Logger  *slog.Logger
	// Metrics records each try's outcome, latency and tokens; nil
	// records none.
	Metrics *metrics.Emitter
	Now     func() time.Time
	// Lookup reads the records a record names (records.Ref: a document's
	// voice), as they are when its generation starts.
	Lookup store.Lookup
	// Prices price the models' calls, for each generation's cost.
	Prices generation.Prices
}

// DefaultMaxTries is MaxTries unless set.
const DefaultMaxTries = 3

// DefaultBackoff grows fourfold from 2 s, with jitter: 2, 8, 32 s. The
// model client has already retried each call a few times within seconds,
// so a try that still failed meets a model busy for longer.
func DefaultBackoff(tries int) time.Duration {
	if tries <= 0 {
		return 0
	}
	d := 2 * time.Second << (2 * min(tries-1, 4))
	return d/2 + rand.N(d/2)
}

func (g *Generator) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Generator) logger() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.Default()
}

func (g *Generator) maxTries() int {
	if g.MaxTries > 0 {
		return g.MaxTries
	}
	return DefaultMaxTries
}

func (g *Generator) backoff(tries int) time.Duration {
	if g.Backoff != nil {
		return g.Backoff(tries)
	}
	return DefaultBackoff(tries)
}

// Model is the id of the model that makes c's content.
func (g *Generator) Model(c *generation.Content) string {
	if c.Picture {
		return g.ImageModel
	}
	return g.TextModel
}

// Record is a record whose generation the caller holds.
type Record struct {
	// Resource names the record's resource ("images"), as picture names do.
	Resource string
	Account  string
	ID       int64
	// Item is the record as stored: the inputs of its generation.
	Item store.Item
	// State is the generation the caller holds: running, under its
	// attempt.
	State generation.State
}

// Job is one generation to run and write back.
type Job struct {
	Table   *store.Table
	Content *generation.Content
	Record
	// Deadline ends the generation itself; the write-back then has until
	// the context's own deadline.
	Deadline time.Time
	// HandOver: running out of time hands the generation to the queue as
	// it is (a request that waited as long as it would). Otherwise it
	// counts as a try that timed out.
	HandOver bool
	// Named are the records the record names (records.Ref), by field, as
	// the caller read them just before (nil: the record named is gone);
	// the generator reads those not given.
	Named map[string]store.Item
}

// Run generates the job's content and writes the outcome back: the
// content (done), a failure, or the generation handed back to the queue
// (pending under a new attempt) when it ran out of time or failed for a
// reason that may pass. It returns the record as written; nil, and no
// error, when the attempt had lost the record, and then whatever it made
// is deleted. An error is a write-back that failed: its outcome is
// unknown, and the 15-minute rule ends the record if nothing else does.
func (g *Generator) Run(ctx context.Context, job Job) (store.Item, error) {
	genCtx, cancel := context.WithDeadline(ctx, job.Deadline)
	started := time.Now()
	named, err := g.named(genCtx, job)
	var (
		out     generation.Output
		picture string
		meter   = &generation.Meter{Prices: g.Prices}
	)
	if err == nil {
		out, picture, err = g.make(genCtx, job, named, meter)
	}
	took := time.Since(started)
	outOfTime := genCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	cancel()

	s := job.State
	var to generation.State
	var cause *generation.Error
	switch {
	case err == nil:
		to = s.Finish(out.Model, out.Usage, g.now())
	case outOfTime && job.HandOver:
		to = s.Requeue(false).Keep(out)
	default:
		cause = generation.ErrorOf(err)
		if outOfTime {
			cause = generation.Wrap(generation.Timeout, err)
		}
		if cause.Code.Retryable() && s.Tries < g.maxTries() {
			to = s.Requeue(true).Keep(out)
		} else {
			to = s.FailAfter(cause, out, g.now())
		}
	}
	// Whatever the outcome, the try's calls of the models were paid for.
	to = to.Spend(meter.Cost())
	// What an unfinished try made is written only where it is part of its
	// content, kept for the next try or the failure (a document's variants).
	fields := out.Fields
	if err != nil && out.Parts == 0 {
		fields = nil
	}
	if fields != nil {
		// The content keeps what it was made with of the records named.
		fields = maps.Clone(fields)
		for _, f := range job.Table.Refs() {
			if n, ok := named[f.Name]; ok {
				maps.Copy(fields, store.Kept(f, n))
			}
		}
	}
	// A write that ends the generation settles its hold on the month's
	// quota (Finish, Fail): the tally function gives back what it did not
	// use when it reads that write from the table's stream, exactly once.
	item, werr := job.Table.Transition(ctx, job.Account, job.ID, s.Attempt, generation.Running, to, fields)
	// What the try cost is on its line by account, which the SpendUSD
	// metric leaves out (docs/operations.md, Spend per hour).
	log := g.logger().With("resource", job.Resource, "account", job.Account, "id", job.ID,
		"attempt", s.Attempt, "outcome", string(to.Status), "cost_usd", meter.Cost().Dollars())
	tried := metrics.Generation{Kind: job.Resource, Outcome: outcome(to, cause, werr), Took: took,
		InputTokens: out.Usage.InputTokens, OutputTokens: out.Usage.OutputTokens, CostUSD: meter.Cost().Dollars()}
	if cause != nil {
		log = log.With("code", string(cause.Code), "cause", cause.Error(), "tries", to.Tries)
		tried.Code = string(cause.Code)
	}
	g.Metrics.Generation(tried)
	switch {
	case errors.Is(werr, generation.ErrSuperseded):
		log.Info("generation lost its record; its content is thrown away")
		g.discard(ctx, picture)
		return nil, nil
	case werr != nil:
		// The write may have landed; a picture it names must stay (the
		// lifecycle rule takes it if it did not).
		log.Error("generation write-back failed", "error", werr.Error())
		return nil, werr
	}
	if to.Status == generation.Pending {
		log.Info("generation handed to the queue")
	} else {
		log.Info("generation ended")
	}
	return item, nil
}

// outcome is how a try that meant to write to ended, in the metrics'
// terms.
func outcome(to generation.State, cause *generation.Error, werr error) metrics.Outcome {
	switch {
	case errors.Is(werr, generation.ErrSuperseded):
		return metrics.Lost
	case werr != nil:
		return metrics.Unwritten
	case to.Status == generation.Done:
		return metrics.Done
	case to.Status == generation.Failed && to.Error != nil && to.Error.Code == generation.ContentFiltered:
		return metrics.Filtered
	case to.Status == generation.Failed:
		return metrics.Failed
	case cause != nil:
		return metrics.Retried
	}
	return metrics.HandedOver
}

// discard deletes a picture nobody will own.
func (g *Generator) discard(ctx context.Context, name string) {
	if name == "" || g.Pictures == nil {
		return
	}
	if err := g.Pictures.Delete(ctx, name); err != nil {
		// Still tagged unclaimed: the lifecycle rule takes it.
		g.logger().Warn("picture of a lost generation not deleted", "picture", name, "error", err.Error())
	}
}

// make runs the job's content with the models, on the record as stored,
// and names the picture it stored ("" for none).
func (g *Generator) make(ctx context.Context, job Job, named map[string]store.Item, meter *generation.Meter) (out generation.Output, picture string, err error) {
	models := generation.Models{Text: g.Text, Image: g.Image,
		PutPicture: func(ctx context.Context, png []byte) (string, error) {
			// Named after the attempt: a repeated delivery of it rewrites
			// this one object, and no other attempt's write-back can name it.
			name := generation.PictureName(job.Account, job.Resource, job.ID, job.State.Attempt)
			if err := g.Pictures.Put(ctx, name, png); err != nil {
				return "", generation.Wrap(generation.Internal, err)
			}
			picture = name
			return name, nil
		}}
	record := generation.Record{Attempt: job.State.Attempt, Decode: decoder(job.Item), Refs: map[string]func(any) error{}}
	for field, item := range named {
		if item != nil {
			record.Refs[field] = decoder(item)
		}
	}
	out, err = job.Content.Make(ctx, meter.Models(models), record)
	if model := meter.Unpriced(); model != "" {
		g.logger().Warn("no price declared for the model called: its calls count no cost (ModelPrices)", "model", model)
	}
	return out, picture, err
}

// decoder decodes item into a resource's own type.
func decoder(item store.Item) func(out any) error {
	return func(out any) error {
		if err := attributevalue.UnmarshalMap(item, out); err != nil {
			return generation.Wrap(generation.Internal, err)
		}
		return nil
	}
}

// named are the records the job's record names (records.Ref), as they are
// now: the job's own where given, else read. A field naming none is
// missing; one naming a record gone is nil. A read that fails fails the
// try as a throttled one, which the queue tries again.
func (g *Generator) named(ctx context.Context, job Job) (map[string]store.Item, error) {
	named := map[string]store.Item{}
	for _, f := range job.Table.Refs() {
		if item, given := job.Named[f.Name]; given {
			named[f.Name] = item
			continue
		}
		id, ok := store.IntAttr(job.Item, f.Name)
		if !ok {
			continue
		}
		if g.Lookup == nil {
			return nil, generation.Wrap(generation.Internal, errors.New("generator: no Lookup for the records "+f.Name+" names"))
		}
		ref, _ := f.Kind.(records.Ref)
		item, err := g.Lookup(ctx, job.Account, ref.Resource, id)
		if err != nil {
			return nil, generation.Wrap(generation.Throttled, err)
		}
		named[f.Name] = item
	}
	return named, nil
}
