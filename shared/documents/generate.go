package documents

import (
	"cmp"
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

// voice is what a generation reads of the document's voice, as it is when
// the generation starts: its guide, and the language and tone the
// document takes where it says none (shared/voices stores them so).
type voice struct {
	Guide    string  `dynamodbav:"guide"`
	Language *string `dynamodbav:"language"`
	Tone     *string `dynamodbav:"tone"`
}

// written is one variant's text and what writing it took.
type written struct {
	text          string
	model         string
	input, output int64
	err           error
}

// generate writes the variants an earlier try of the same request has not
// written (the generation's Parts), each a call of its own, all at once: a
// generation of three takes about as long as one, and each answer keeps
// its template's token bound. A variant that fails leaves the others
// written; with the error, the output then holds those written, which the
// generator keeps for the next try or the failure.
func generate(ctx context.Context, m generation.Models, r generation.Record) (generation.Output, error) {
	var d Document
	if err := r.Decode(&d); err != nil {
		return generation.Output{}, err
	}
	var v voice
	if decode := r.Refs["voice_id"]; decode != nil {
		if err := decode(&v); err != nil {
			return generation.Output{}, err
		}
	}
	variants := int(max(d.Variants, 1))
	kept, in, out := keptVariants(d, variants)
	controls := prompts.Controls{Language: deref(cmp.Or(d.Language, v.Language)), Tone: deref(cmp.Or(d.Tone, v.Tone)),
		Guide: v.Guide, Variants: variants}

	var missing []int
	for v := 1; v <= variants; v++ {
		if !slices.ContainsFunc(kept, func(k version) bool { return k.of == v }) {
			missing = append(missing, v)
		}
	}
	made := make([]written, len(missing))
	var wg sync.WaitGroup
	for i, v := range missing {
		c := controls
		c.Variant = v
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
		results = append(results, version{Variant{Result: w.text, Words: int64(Words(w.text))}, missing[i]})
		model, in, out = w.model, in+w.input, out+w.output
	}
	slices.SortFunc(results, func(a, b version) int { return a.of - b.of })
	if len(results) == 0 {
		return generation.Output{}, failure
	}
	if model == "" && d.Generation != nil {
		model = d.Generation.Model
	}
	return output(results, variants, model, in, out), failure
}

// version is a variant with which of them its brief asked for, from 1.
type version struct {
	Variant
	of int
}

// keptVariants are the variants earlier tries of this request wrote, and
// the tokens they took. (While a generation runs, no client's write
// changes its texts.)
func keptVariants(d Document, variants int) (kept []version, in, out int64) {
	g := d.Generation
	if g == nil || g.Parts == 0 {
		return nil, 0, 0
	}
	texts := d.texts()
	for v := 1; v <= variants && len(kept) < len(texts); v++ {
		if g.Parts.Has(v) {
			kept = append(kept, version{texts[len(kept)], v})
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
// and words, the others beside them, as a list (maybe empty) wherever
// several were asked for, which also marks the document as one whose
// first text a client's result leaves in results (records.Originals); for
// one variant, none (removed: a regenerate down to one leaves no texts of
// before). What it counts against the month's words is every variant's.
func output(results []version, variants int, model string, in, out int64) generation.Output {
	fields := map[string]any{"result": results[0].Result, "words": results[0].Words, "other_results": nil}
	counted := results[0].Words
	parts := generation.Parts(0).With(results[0].of)
	if variants > 1 {
		others := make([]any, len(results)-1)
		for i, v := range results[1:] {
			others[i] = map[string]any{"result": v.Result, "words": v.Words}
			counted += v.Words
			parts = parts.With(v.of)
		}
		fields["other_results"] = others
	}
	usage := generation.Tokens(in, out)
	usage.Counted = counted
	return generation.Output{Fields: fields, Model: model, Usage: usage, Parts: parts}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
