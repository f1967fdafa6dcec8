package crud

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"contentapi/shared/generation"
	"contentapi/shared/generator"
	"contentapi/shared/httpapi"
	"contentapi/shared/quota"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// WriteBudget is what a request that waits for generation keeps of its
// time for the write-back, or the hand-over to the queue, and its answer.
const WriteBudget = 3 * time.Second

// Generation is how a resource's records get their content, where the
// deployment generates.
type Generation struct {
	Generator *generator.Generator
	// Wait is the deployment's wait: how long create and regenerate wait
	// for the content unless the request's Prefer says otherwise.
	Wait time.Duration
	// PictureURL presigns a stored picture's URL; nil for text.
	PictureURL func(ctx context.Context, name string) (string, error)
}

// WithGeneration makes the resource generate its records' content, as
// its declaration says (records.Resource.Content).
func (res *Resource) WithGeneration(g *Generation) *Resource {
	res.gen = g
	return res
}

// view is how the request's answer shows records.
func (res *Resource) view(r *http.Request) records.View {
	v := records.View{Now: time.Now(), Generation: res.gen != nil}
	if res.gen != nil && res.gen.PictureURL != nil {
		ctx := r.Context()
		v.PictureURL = func(name string) (string, error) { return res.gen.PictureURL(ctx, name) }
	}
	return v
}

// wait is how long a request waits for generation, and the preference it
// applied to get there ("" for the deployment's wait).
func (res *Resource) wait(r *http.Request) (time.Duration, string) {
	p := httpapi.ParsePrefer(r.Header)
	switch {
	case p.Async:
		return 0, p.Applied()
	case p.Wait > 0:
		return p.Wait, p.Applied()
	}
	return res.gen.Wait, ""
}

// Timeout is how long a request may take, when that is longer than the
// default: a create or regenerate that waits for generation gets its wait
// and the write budget.
func (res *Resource) Timeout(r *http.Request) time.Duration {
	if res.gen == nil || r.Method != http.MethodPost {
		return 0
	}
	collection := res.collection
	if p := r.URL.Path; p != collection && !(strings.HasPrefix(p, collection+"/") && strings.HasSuffix(p, "/regenerate")) {
		return 0
	}
	if wait, _ := res.wait(r); wait > 0 {
		return wait + WriteBudget
	}
	return 0
}

// plan is how a request that starts a generation goes about it.
type plan struct {
	// state is the generation requested; nil where generation is off.
	state *generation.State
	// wait is how long the request waits for it; 0 answers at once, and
	// leaves the record pending for the generator function.
	wait    time.Duration
	applied string
	start   time.Time
	// named are the records the record names, as the request read them
	// (Resource.named), which its generation takes as they are.
	named map[string]store.Item
}

// plan requests a generation: running, when the request will generate it
// itself, else pending.
func (res *Resource) plan(r *http.Request) plan {
	if res.gen == nil {
		return plan{}
	}
	now := time.Now()
	wait, applied := res.wait(r)
	s := generation.Request(res.gen.Generator.Model(res.def.Content), now)
	if wait > 0 {
		s = s.Start(now)
	}
	return plan{state: &s, wait: wait, applied: applied, start: now}
}

// await generates the record's content within the request, when it waits,
// and returns the record as it then is: done, failed, or handed to the
// queue when the wait ran out. There is one generation either way, never
// a poll: the request holds the attempt until it writes back or hands it
// over.
func (res *Resource) await(w http.ResponseWriter, r *http.Request, p plan, item store.Item) store.Item {
	if p.applied != "" {
		w.Header().Set("Preference-Applied", p.applied)
	}
	if p.state == nil || p.wait == 0 {
		return item
	}
	state := *p.state
	if s, _ := store.StateOf(item); s != nil && s.Attempt == state.Attempt {
		state = *s // as written: with what it holds of the month's quota
	}
	deadline := p.start.Add(p.wait)
	if d, ok := r.Context().Deadline(); ok && d.Add(-WriteBudget).Before(deadline) {
		deadline = d.Add(-WriteBudget)
	}
	id, _ := store.IntAttr(item, store.AttrID)
	out, err := res.gen.Generator.Run(r.Context(), generator.Job{
		Table:   res.table,
		Content: res.def.Content,
		Record: generator.Record{
			Resource: res.def.Name, Account: account(r), ID: id, Item: item, State: state,
		},
		Deadline: deadline,
		HandOver: true,
		Named:    p.named,
	})
	switch {
	case err != nil:
		// Logged by Run; the answer shows the record as last known.
		return item
	case out == nil:
		// Another request took the record over meanwhile (or deleted it).
		if now, err := res.table.Get(r.Context(), account(r), id); err == nil && now != nil {
			return now
		}
		return item
	}
	return out
}

// maxRegenerateTries bounds the reads and conditional writes of a
// regenerate that meets other writes of the record between the two.
const maxRegenerateTries = 3

// regenerate generates a record's content again, from new inputs where
// given: 200 when it waited to the end, 202 when it answers before; 409
// while the record's generation is under way.
func (res *Resource) regenerate(w http.ResponseWriter, r *http.Request) (err error) {
	if res.gen == nil {
		return httpapi.NotFound()
	}
	id, err := recordID(r)
	if err != nil {
		return err
	}
	in, err := httpapi.ParseBody(r)
	if err != nil {
		return err
	}
	v, err := res.def.ValidateRegenerate(in)
	if err != nil {
		return err
	}
	var (
		item   store.Item
		p      plan
		charge *quota.Charge
	)
	defer func() {
		if charge != nil && err != nil {
			res.table.RefundRegenerate(r.Context(), account(r), id, p.state.Attempt, *charge, err)
		}
	}()
	for try := 1; ; try++ {
		old, err := res.table.Get(r.Context(), account(r), id)
		if err != nil {
			return err
		}
		if old == nil {
			return records.ErrNotFound
		}
		if err := res.table.InFlight(old); err != nil {
			return err
		}
		named, err := res.named(r.Context(), account(r), v, old)
		if err != nil {
			return err
		}
		// The account's monthly quota is checked and counted here, once,
		// before the record is written: a regenerate it no longer allows
		// changes nothing, and one that fails from here on is given back
		// (the deferred refund). A move to another template counts it in
		// its own counter write, and gives it back with the count.
		moves := res.table.Moves(old, v)
		if charge == nil && !moves {
			c, err := res.table.Spend(r.Context(), account(r), res.table.Variants(old, v))
			if err != nil {
				return err
			}
			charge = &c
		}
		if charge != nil && moves {
			// Spent on an earlier try, when the record was still under
			// the template asked for (rare: a move raced this one). Given
			// back at most once: if that fails, one too many stays counted.
			spent := *charge
			charge = nil
			if err := res.table.Refund(r.Context(), account(r), spent); err != nil {
				return err
			}
		}
		// Each try plans a new attempt: only the try that is written
		// names its attempt on the record, and that is the one p keeps.
		p = res.plan(r)
		p.named = named
		if charge != nil {
			// The record holds what the charge held, until its generation
			// ends (a move's own counter write holds it itself).
			*p.state = res.table.Hold(*p.state, *charge)
		}
		item, err = res.table.Regenerate(r.Context(), account(r), old, v, *p.state)
		if errors.Is(err, records.ErrVersionMismatch) && try < maxRegenerateTries {
			continue // written meanwhile, by something other than a generation
		}
		if err != nil {
			return err
		}
		break
	}
	item = res.await(w, r, p, item)
	status := http.StatusAccepted
	if s, _ := store.StateOf(item); s != nil && s.At(time.Now()).Status.Ended() {
		status = http.StatusOK
	}
	return res.single(w, r, status, item)
}
