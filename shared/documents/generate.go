package documents

import (
	"context"
	"slices"
	"sync"

	"contentapi/shared/generation"
	"contentapi/shared/prompts"
)

// content writes a document's results with the text model: its template's
// brief with what its writing controls ask, its prompt, at temperature =
// creativity, one call per variant.
var content = &generation.Content{Make: generate}

// written is one variant's text and what writing it took.
type written struct {
	text          string
	model         string
	input, output int64
	err           error
}

// generate writes the variants an earlier try of the same request has not
// written (their number is the generation's Parts), each a call of its
// own, all at once: a generation of three takes about as long as one, and
// each answer keeps its template's token bound. A variant that fails
// leaves the others written; with the error, the output then holds those
// written, which the generator keeps for the next try or the failure.
func generate(ctx context.Context, m generation.Models, r generation.Record) (generation.Output, error) {
	var d Document
	if err := r.Decode(&d); err != nil {
		return generation.Output{}, err
	}
	variants := int(max(d.Variants, 1))
	kept, in, out := keptVariants(d, variants)
	controls := prompts.Controls{Language: deref(d.Language), Tone: deref(d.Tone), Variants: variants}

	var missing []int
	for v := 1; v <= variants; v++ {
		if !slices.ContainsFunc(kept, func(k Variant) bool { return k.Version == int64(v) }) {
			missing = append(missing, v)
		}
	}
	made := make([]written, len(missing))
	var wg sync.WaitGroup
	for i, version := range missing {
		c := controls
		c.Variant = version
		wg.Add(1)
		go func() {
			defer wg.Done()
			made[i] = write(ctx, m.Text, d, c)
		}()
	}
	wg.Wait()

	results, model := kept, ""
	var failure error
	for i, w := range made {
		if w.err != nil {
			if failure == nil {
				failure = w.err
			}
			continue
		}
		results = append(results, Variant{Result: w.text, Words: int64(Words(w.text)), Version: int64(missing[i])})
		model, in, out = w.model, in+w.input, out+w.output
	}
	slices.SortFunc(results, func(a, b Variant) int { return int(a.Version - b.Version) })
	if len(results) == 0 {
		return generation.Output{}, failure
	}
	if model == "" && d.Generation != nil {
		model = d.Generation.Model
	}
	return output(results, variants, d.Results != nil, model, in, out), failure
}

// keptVariants are the variants earlier tries of this request wrote, and
// the tokens they took.
func keptVariants(d Document, variants int) (kept []Variant, in, out int64) {
	g := d.Generation
	if g == nil || g.Parts == 0 {
		return nil, 0, 0
	}
	for _, v := range d.Results[:min(g.Parts, len(d.Results))] {
		if v.Version >= 1 && v.Version <= int64(variants) {
			kept = append(kept, v)
		}
	}
	if g.InputTokens != nil && g.OutputTokens != nil {
		in, out = *g.InputTokens, *g.OutputTokens
	}
	return kept, in, out
}

// write writes one variant.
func write(ctx context.Context, model generation.TextModel, d Document, c prompts.Controls) written {
	req, err := prompts.Document(d.TemplateID, d.Prompt, d.Creativity, c)
	if err != nil {
		return written{err: generation.Wrap(generation.Internal, err)}
	}
	res, err := model.Text(ctx, req)
	if err != nil {
		return written{err: err}
	}
	text, err := prompts.Result(d.TemplateID, res.Text, maxResult)
	if err != nil {
		return written{err: err}
	}
	return written{text: text, model: res.Model, input: res.InputTokens, output: res.OutputTokens}
}

// output is the fields a generation writes: the first variant as result
// and words, and where there are several, every one in results; what it
// counts against the month's words is every variant's. A document of one
// variant stores no copy of it in results: a copy would double what each
// of its writes, reads and answers costs; so a regenerate down to one
// variant takes away the results of before.
func output(results []Variant, variants int, hadResults bool, model string, in, out int64) generation.Output {
	fields := map[string]any{"result": results[0].Result, "words": results[0].Words}
	var counted int64
	list := make([]any, len(results))
	for i, v := range results {
		list[i] = map[string]any{"result": v.Result, "words": v.Words, "version": v.Version}
		counted += v.Words
	}
	switch {
	case variants > 1:
		fields["results"] = list
	case hadResults:
		fields["results"] = nil
	}
	usage := generation.Tokens(in, out)
	usage.Counted = counted
	return generation.Output{Fields: fields, Model: model, Usage: usage, Parts: len(results)}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
