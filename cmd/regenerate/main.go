// Command regenerate lists the records of one account whose generation
// failed and, with --apply, generates them again, through the API with a
// key of that account (the runbook, docs/operations.md):
//
//	API_URL=$(output ApiUrl) API_KEY=... go run ./cmd/regenerate [--apply]
//	    [--codes LIST] [--resources images,documents]
//
// It reads every page of the account's images, and of its documents under
// each template. A record is listed when its generation failed with one of
// the codes, by default every code but content_filtered, which is left out
// unless named, as the same input would be refused again. --apply regenerates each, answered at once
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

	"contentapi/client"
	"contentapi/shared/generation"
	"contentapi/shared/idempotency"
	"contentapi/shared/prompts"
)

const usageFormat = `usage: API_URL=<the stack's ApiUrl> API_KEY=<a key of the account> regenerate [flags]

Lists the account's records whose generation failed; --apply regenerates them.

flags:
  --apply             regenerate them (without it, only list)
  --codes LIST        failure codes to take (default %s;
                      content_filtered only if named: the same input would be refused again)
  --resources LIST    images, documents or both (default both)
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

// failure is a record whose generation failed.
type failure struct {
	resource   string
	id         int64
	code       string
	finishedAt time.Time
}

// runner lists and regenerates through one account's client.
type runner struct {
	api   *client.ClientWithResponses
	codes []string
}

// newRunner calls the API at base (the stack's ApiUrl) with key, and takes
// the failures of the codes.
func newRunner(base, key string, doer client.HttpRequestDoer, codes []string) (runner, error) {
	api, err := client.NewClientWithResponses(base, client.WithHTTPClient(doer),
		client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+key)
			return nil
		}))
	return runner{api: api, codes: codes}, err
}

func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer, doer client.HttpRequestDoer) int {
	fs := flag.NewFlagSet("regenerate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	usage := fmt.Sprintf(usageFormat, defaultCodes())
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	apply := fs.Bool("apply", false, "")
	codes := fs.String("codes", defaultCodes(), "")
	resources := fs.String("resources", "images,documents", "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	base, key := strings.TrimRight(env("API_URL"), "/"), env("API_KEY")
	if base == "" || key == "" {
		fmt.Fprint(stderr, "API_URL and API_KEY must be set\n\n"+usage)
		return 2
	}
	r, err := newRunner(base, key, doer, strings.Split(*codes, ","))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var failed []failure
	for _, resource := range strings.Split(*resources, ",") {
		var found []failure
		switch resource {
		case "images":
			found, err = r.images(ctx)
		case "documents":
			found, err = r.documents(ctx)
		default:
			err = fmt.Errorf("--resources: %q is neither images nor documents", resource)
		}
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
func (r runner) collect(out []failure, resource string, id int64, g *client.Generation) []failure {
	if g == nil || g.Status != "failed" || g.Error == nil || !slices.Contains(r.codes, string(g.Error.Code)) {
		return out
	}
	f := failure{resource: resource, id: id, code: string(g.Error.Code)}
	if g.FinishedAt != nil {
		f.finishedAt = *g.FinishedAt
	}
	return append(out, f)
}

func (r runner) images(ctx context.Context) ([]failure, error) {
	var out []failure
	err := pages(func(page *int64, cursor *string) (*string, error) {
		resp, err := r.api.ListImagesWithResponse(ctx, &client.ListImagesParams{PerPage: ptr(100), Page: page, Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("listing images: %w", err)
		}
		if resp.JSON200 == nil {
			return nil, fmt.Errorf("listing images: %s", resp.Status())
		}
		for _, img := range resp.JSON200.Data {
			out = r.collect(out, "images", img.Id, img.Generation)
		}
		return resp.JSON200.Links.Next, nil
	})
	return out, err
}

// documents are listed by template, as the API lists them.
func (r runner) documents(ctx context.Context) ([]failure, error) {
	var out []failure
	for _, t := range prompts.Templates() {
		err := pages(func(page *int64, cursor *string) (*string, error) {
			resp, err := r.api.ListDocumentsWithResponse(ctx, &client.ListDocumentsParams{
				PerPage: ptr(100), TemplateId: ptr(int(t.ID)), Page: page, Cursor: cursor})
			if err != nil {
				return nil, fmt.Errorf("listing documents: %w", err)
			}
			if resp.JSON200 == nil {
				return nil, fmt.Errorf("listing documents: %s", resp.Status())
			}
			for _, d := range resp.JSON200.Data {
				out = r.collect(out, "documents", d.Id, d.Generation)
			}
			return resp.JSON200.Links.Next, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
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
	prefer := "respond-async"
	// The failure it had names the request: a rerun sends the same key
	// and gets the first answer again; a later failure is a new request.
	key := fmt.Sprintf("regenerate-%s-%d-%d", f.resource, f.id, f.finishedAt.UnixMicro())
	var resp *http.Response
	if f.resource == "images" {
		var res *client.RegenerateImageResponse
		res, err = r.api.RegenerateImageWithResponse(ctx, f.id,
			&client.RegenerateImageParams{Prefer: &prefer, IdempotencyKey: &key}, client.RegenerateImageJSONRequestBody{})
		if err == nil {
			resp = res.HTTPResponse
		}
	} else {
		var res *client.RegenerateDocumentResponse
		res, err = r.api.RegenerateDocumentWithResponse(ctx, f.id,
			&client.RegenerateDocumentParams{Prefer: &prefer, IdempotencyKey: &key}, client.RegenerateDocumentJSONRequestBody{})
		if err == nil {
			resp = res.HTTPResponse
		}
	}
	if err != nil {
		return 0, false, fmt.Errorf("regenerating: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusConflict, http.StatusTooManyRequests:
		return resp.StatusCode, resp.Header.Get(idempotency.ReplayedHeader) == "true", nil
	}
	return 0, false, fmt.Errorf("regenerating: %s", resp.Status)
}

func ptr[T any](v T) *T { return &v }
