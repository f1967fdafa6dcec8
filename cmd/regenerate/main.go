// Command regenerate lists the records of one account whose generation
// failed and, with --apply, generates them again, through the API with a
// key of that account (the runbook, docs/operations.md):
//
//	API_URL=$(output ApiUrl) API_KEY=... go run ./cmd/regenerate [--apply]
//	    [--codes LIST] [--resources images,documents]
//
// It reads every page of the account's records of each resource that
// generates (app.Resources), a scoped one's under each scope (documents:
// each template). A record is listed when its generation failed with one of
// the codes, by default every code but content_filtered, which is left out
// unless named, as the same input would be refused again. --apply
// regenerates each, answered at once
// (Prefer: respond-async), under an Idempotency-Key made of the record and
// the failure it had: run again within 24 hours, it regenerates nothing
// twice. Each regenerate counts against the account's monthly limit; the
// first one the limit refuses stops the run.
//
// The key is read from API_KEY, never a flag, so that it stays out of the
// shell's history and the process list.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/generation"
	"contentapi/shared/idempotency"
	"contentapi/shared/records"
)

const usageFormat = `usage: API_URL=<the stack's ApiUrl> API_KEY=<a key of the account> regenerate [flags]

Lists the account's records whose generation failed; --apply regenerates them.

flags:
  --apply             regenerate them (without it, only list)
  --codes LIST        failure codes to take (default %s;
                      content_filtered only if named: the same input would be refused again)
  --resources LIST    of %s (default all)
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr, http.DefaultClient))
}

// defaultCodes are the codes --codes takes unless told: every code but
// content_filtered, comma separated.
func defaultCodes() string {
	var codes []string
	for _, c := range generation.Codes {
		if c != generation.ContentFiltered {
			codes = append(codes, string(c))
		}
	}
	return strings.Join(codes, ",")
}

// generating are the resources whose records get content, in the order
// of app.Resources.
func generating() []*records.Resource {
	var out []*records.Resource
	for _, r := range app.Resources {
		if r.Def.Content != nil {
			out = append(out, r.Def)
		}
	}
	return out
}

// failure is a record whose generation failed.
type failure struct {
	resource   string
	id         int64
	code       string
	finishedAt time.Time
}

// doer sends a request (an *http.Client).
type doer interface {
	Do(*http.Request) (*http.Response, error)
}

// runner lists and regenerates through one account's key.
type runner struct {
	base, key string
	http      doer
	codes     []string
}

// newRunner calls the API at base (the stack's ApiUrl) with key, and takes
// the failures of the codes.
func newRunner(base, key string, d doer, codes []string) (runner, error) {
	if _, err := url.Parse(base); err != nil {
		return runner{}, err
	}
	return runner{base: base, key: key, http: d, codes: codes}, nil
}

func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer, d doer) int {
	var names []string
	for _, res := range generating() {
		names = append(names, res.Name)
	}
	fs := flag.NewFlagSet("regenerate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, usageFormat, defaultCodes(), strings.Join(names, ", ")) }
	apply := fs.Bool("apply", false, "")
	codes := fs.String("codes", defaultCodes(), "")
	resources := fs.String("resources", strings.Join(names, ","), "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	base, key := strings.TrimRight(env("API_URL"), "/"), env("API_KEY")
	if base == "" || key == "" {
		fmt.Fprint(stderr, "API_URL and API_KEY must be set\n\n")
		fs.Usage()
		return 2
	}
	r, err := newRunner(base, key, d, strings.Split(*codes, ","))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var failed []failure
	for _, name := range strings.Split(*resources, ",") {
		i := slices.Index(names, name)
		if i < 0 {
			fmt.Fprintf(stderr, "regenerate: --resources: %q is none of %s\n", name, strings.Join(names, ", "))
			return 1
		}
		found, err := r.failures(ctx, generating()[i])
		if err != nil {
			fmt.Fprintln(stderr, "regenerate:", err)
			return 1
		}
		failed = append(failed, found...)
	}
	for _, f := range failed {
		fmt.Fprintf(stdout, "%s\t%d\t%s\t%s\n", f.resource, f.id, f.code, f.finishedAt.Format(time.RFC3339))
	}
	fmt.Fprintf(stderr, "%d failed generations\n", len(failed))
	if !*apply {
		return 0
	}
	for _, f := range failed {
		status, replayed, err := r.regenerate(ctx, f)
		if err != nil {
			fmt.Fprintf(stderr, "%s %d: %v\n", f.resource, f.id, err)
			return 1
		}
		note := ""
		if replayed {
			note = " (asked for by an earlier run: not again)"
		}
		fmt.Fprintf(stdout, "%s\t%d\tregenerate: %d%s\n", f.resource, f.id, status, note)
		if status == http.StatusTooManyRequests {
			fmt.Fprintln(stderr, "regenerate: stopped: the account's monthly limit, or its rate limit, allows no more for now")
			return 1
		}
	}
	return 0
}

// collect adds the record to out if its generation failed with one of
// the codes.
func (r runner) collect(out []failure, resource string, id int64, g *generation.State) ([]failure, error) {
	if g == nil || g.Status != generation.Failed || g.Error == nil || !slices.Contains(r.codes, string(g.Error.Code)) {
		return out, nil
	}
	f := failure{resource: resource, id: id, code: string(g.Error.Code)}
	if g.FinishedAt != nil {
		at, err := time.Parse(time.RFC3339Nano, *g.FinishedAt)
		if err != nil {
			return nil, fmt.Errorf("%s %d: finished_at %q: %w", resource, id, *g.FinishedAt, err)
		}
		f.finishedAt = at
	}
	return append(out, f), nil
}

// page is one page of a list, as far as this command reads it.
type page struct {
	Data []struct {
		ID         int64             `json:"id"`
		Generation *generation.State `json:"generation"`
	} `json:"data"`
	Links struct {
		Next *string `json:"next"`
	} `json:"links"`
}

// failures lists the resource's records whose generation failed with one
// of the codes; a scoped resource's under each scope, as the API lists
// them (documents by template).
func (r runner) failures(ctx context.Context, res *records.Resource) ([]failure, error) {
	scopes := []url.Values{{}}
	if s := res.Scope; s != nil {
		scopes = nil
		for v := s.Kind.Min; v <= s.Kind.Max; v++ {
			scopes = append(scopes, url.Values{s.Field: {strconv.FormatInt(v, 10)}})
		}
	}
	var out []failure
	for _, scope := range scopes {
		err := pages(func(pageNo *int64, cursor *string) (*string, error) {
			q := url.Values{"per_page": {"100"}}
			for k, v := range scope {
				q[k] = v
			}
			if pageNo != nil {
				q.Set("page", strconv.FormatInt(*pageNo, 10))
			}
			if cursor != nil {
				q.Set("cursor", *cursor)
			}
			var p page
			if err := r.get(ctx, "/api/v1/"+res.Name+"?"+q.Encode(), &p); err != nil {
				return nil, fmt.Errorf("listing %s: %w", res.Name, err)
			}
			for _, rec := range p.Data {
				var err error
				if out, err = r.collect(out, res.Name, rec.ID, rec.Generation); err != nil {
					return nil, err
				}
			}
			return p.Links.Next, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// get reads path's JSON answer into out; an answer but 200 is an error
// naming its status.
func (r runner) get(ctx context.Context, path string, out any) error {
	resp, err := r.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s", resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// do sends a request of the account's key.
func (r runner) do(ctx context.Context, method, path string, header map[string]string) (*http.Response, error) {
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return r.http.Do(req)
}

// pages reads a list page by page, the first with no page and no cursor,
// each after it at the page (and cursor) the one before links as next.
func pages(read func(page *int64, cursor *string) (next *string, err error)) error {
	var page *int64
	var cursor *string
	for {
		link, err := read(page, cursor)
		if err != nil {
			return err
		}
		if page, cursor, err = next(link); err != nil || page == nil {
			return err
		}
	}
}

// next is the page, and the cursor of a page a bound cut short, that a
// list's next link names; no page at the end.
func next(link *string) (*int64, *string, error) {
	if link == nil {
		return nil, nil, nil
	}
	u, err := url.Parse(*link)
	if err != nil {
		return nil, nil, fmt.Errorf("a next link that does not parse: %w", err)
	}
	q := u.Query()
	page, err := strconv.ParseInt(q.Get("page"), 10, 64)
	if err != nil {
		return nil, nil, fmt.Errorf("a next link without its page: %s", *link)
	}
	var cursor *string
	if c := q.Get("cursor"); c != "" {
		cursor = &c
	}
	return &page, cursor, nil
}

// regenerate asks for f's generation again, answered at once; its status
// is 202 (or 200), 409 while a generation of it is under way, 429 once
// the monthly limit allows no more. Replayed: an earlier run asked for
// this one already, and the answer is that run's.
func (r runner) regenerate(ctx context.Context, f failure) (status int, replayed bool, err error) {
	// The failure it had names the request: a rerun sends the same key
	// and gets the first answer again; a later failure is a new request.
	key := fmt.Sprintf("regenerate-%s-%d-%d", f.resource, f.id, f.finishedAt.UnixMicro())
	resp, err := r.do(ctx, http.MethodPost, "/api/v1/"+f.resource+"/"+strconv.FormatInt(f.id, 10)+"/regenerate",
		map[string]string{"Prefer": "respond-async", idempotency.Header: key})
	if err != nil {
		return 0, false, fmt.Errorf("regenerating: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusConflict, http.StatusTooManyRequests:
		return resp.StatusCode, resp.Header.Get(idempotency.ReplayedHeader) == "true", nil
	}
	return 0, false, fmt.Errorf("regenerating: %s", resp.Status)
}
