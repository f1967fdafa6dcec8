package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/generation"
	"contentapi/shared/generator"
	"contentapi/shared/prompts"
)

// GeneratorFunction is the logical ID in template.yaml of the function fed
// by the record tables' streams (functions/generator).
const GeneratorFunction = "GeneratorFunction"

// GeneratorEntry is the generator function's entry point: exactly what
// lambda.Start receives.
type GeneratorEntry func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// streamWriteBudget is what the generator function keeps of an
// invocation's time for the write-back of a generation it runs.
const streamWriteBudget = 5 * time.Second

// models are what generation is made with, built once per warm function.
type models struct {
	gen  *generator.Generator
	pics Pictures
}

// newModels builds the models and the bucket of generation.
func (a *App) newModels() (models, error) {
	g := a.cfg.Generation
	if a.parts.Models == nil {
		return models{}, errNoPart("Models", EnvGeneration+" is on")
	}
	client, err := a.parts.Models(a.cfg)
	if err != nil {
		return models{}, err
	}
	pics, err := a.pictures()
	if err != nil {
		return models{}, err
	}
	gen := &generator.Generator{
		Text: client, Image: client,
		TextModel: client.TextModel(), ImageModel: client.ImageModel(),
		MaxTries: g.MaxTries, Backoff: g.Backoff,
		Prices:  g.Prices,
		Logger:  a.logger,
		Metrics: a.metrics,
	}
	if pics != nil {
		gen.Pictures = pics
	}
	return models{gen: gen, pics: pics}, nil
}

// pictures is the generated pictures' bucket, nil where none is set or
// the function was built without it (a function that keeps no pictures
// may still be given the bucket's name).
func (a *App) pictures() (Pictures, error) {
	if a.cfg.Generation.Bucket == "" || a.parts.Pictures == nil {
		return nil, nil
	}
	return a.parts.Pictures(a.cfg)
}

// noPictures is why a function that needs the bucket has none.
func (a *App) noPictures(why string) error {
	if a.cfg.Generation.Bucket == "" {
		return fmt.Errorf("%s is not set: %s", EnvPicturesBucket, why)
	}
	return errNoPart("Pictures", EnvPicturesBucket+" is set and "+why)
}

// generating is the generation of a resource's records, with the models
// built: a resource with pictures needs the bucket.
func (a *App) generating(r Resource) (models, error) {
	m, err := a.models()
	if err == nil && r.Def.Content.Picture && m.pics == nil {
		err = a.noPictures(r.Def.Name + " generate pictures")
	}
	return m, err
}

// GeneratorEntry is the generator function's entry point: every resource's table,
// by the name the configuration gives it.
func (a *App) GeneratorEntry() (GeneratorEntry, error) {
	if !a.cfg.Generation.On {
		return nil, errors.New(EnvGeneration + " is off: the generator function has nothing to do")
	}
	s := &generator.Stream{Targets: map[string]generator.Target{}, WriteBudget: streamWriteBudget}
	var generated []Resource
	for _, r := range a.resources() {
		if r.Def.Content == nil {
			continue // its records get no content
		}
		generated = append(generated, r)
		m, err := a.generating(r)
		if err != nil {
			return nil, err
		}
		s.Generator = m.gen
		table, err := a.table(r)
		if err != nil {
			return nil, err
		}
		s.Targets[table.Name()] = generator.Target{Resource: r.Def.Name, Object: r.Def.Object, Table: table, Content: r.Def.Content}
	}
	// What a generation reads of the records its record names (a
	// document's voice). A request that generates reads them itself
	// (crud.Resource.Lookup) and hands them over.
	lookup, err := a.named(generated...)
	if err != nil {
		return nil, err
	}
	if s.Generator != nil {
		s.Generator.Lookup = lookup
	}
	hooks, err := a.optionalWebhooks()
	if err != nil {
		return nil, err
	}
	if hooks != nil {
		s.Ended = a.publishEnds(hooks)
		s.Crossed = publishCrossings(hooks)
	}
	return s.Handle, nil
}

// MustGenerator is what the generator function's main starts, configured
// from the environment; a misconfigured function stops here, at init.
func MustGenerator(ctx context.Context, parts Parts) GeneratorEntry {
	return must(ctx, parts, (*App).GeneratorEntry)
}

// must is an entry point built by build from the environment, or the
// function's end at init, with the reason in its log.
func must[F any](ctx context.Context, parts Parts, build func(*App) (F, error)) F {
	a, err := FromEnv(ctx, parts)
	var fn F
	if err == nil {
		fn, err = build(a)
	}
	if err != nil {
		slog.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	return fn
}

// worstInputTokens bounds what a generation's text call reads: a prompt of
// at most 2,048 characters, a token each at worst, with the longest
// template's brief and a voice's instructions, which stay under 6,000.
const worstInputTokens = 8192

// worstCost is the most one generation of content may cost at the
// deployment's prices, for n variants: each variant's call of the model at
// its dearest (the longest answer a template allows, or the dearest
// picture), in each of the tries a generation may take (MaxTries). A call
// the model did not answer costs nothing, so the model client's own
// retries add none. An unpriced model costs 0 (generation.Meter).
func (g Generation) worstCost(content *generation.Content) func(n int64) generation.USD {
	tries := g.MaxTries
	if tries <= 0 {
		tries = generator.DefaultMaxTries
	}
	var call generation.USD
	if content.Picture {
		if p, ok := g.Prices.Of(g.ImageModel); ok {
			call = p.Picture(math.MaxInt32, math.MaxInt32)
		}
	} else if p, ok := g.Prices.Of(g.TextModel); ok {
		call = p.Text(worstInputTokens, prompts.MaxAnswerTokens)
	}
	return func(n int64) generation.USD { return call * generation.USD(max(n, 1)*int64(tries)) }
}
