// Package hookapi serves the webhooks' endpoints API (/api/v1/webhooks):
// register, list, read, delete, test, and each endpoint's delivery log.
// An endpoint belongs to its account: another account's id is 404.
package hookapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"contentapi/shared/generation"
	"contentapi/shared/hooksender"
	"contentapi/shared/hookstore"
	"contentapi/shared/httpapi"
	"contentapi/shared/quota"
	"contentapi/shared/ratelimit"
	"contentapi/shared/records"
	"contentapi/shared/store"
	"contentapi/shared/webhook"
)

// Path is the collection's path.
const Path = "/api/v1/webhooks"

// Serves reports whether path is one of the API's (the collection or
// below it).
func Serves(path string) bool {
	return path == Path || strings.HasPrefix(path, Path+"/")
}

// TestsPerMinute is how many test events an endpoint takes a minute: past
// it, POST /webhooks/{id}/test is 429 with Retry-After.
const TestsPerMinute = 10

// The longest texts a registration takes, in characters: a description,
// and the comma-separated event types (the whole list is far shorter; the
// bound keeps an error that quotes an unknown type short).
const (
	MaxDescription = 256
	MaxEvents      = 1024
)

// API serves the endpoints of the principal's account.
type API struct {
	Store     *hookstore.Store
	Client    *webhook.Client // checks URLs at registration
	Publisher *hooksender.Publisher
	// Events are the event types an endpoint may subscribe to, each
	// generating resource's and webhook.Test (webhook.Types).
	Events []string
	// TestRate limits each endpoint's test events to TestsPerMinute; nil
	// limits none (a stack without the rate limits' table).
	TestRate *ratelimit.Limiter
	// Now is time.Now when nil.
	Now func() time.Time
}

// Routes are the API's operations.
func (a *API) Routes() []httpapi.Route {
	item := Path + "/{id}"
	return []httpapi.Route{
		{Method: http.MethodPost, Pattern: Path, Handler: a.handle(a.create)},
		{Method: http.MethodGet, Pattern: Path, Handler: a.handle(a.list)},
		{Method: http.MethodGet, Pattern: item, Handler: a.handle(a.get)},
		{Method: http.MethodPatch, Pattern: item, Handler: a.handle(a.update)},
		{Method: http.MethodDelete, Pattern: item, Handler: a.handle(a.delete)},
		{Method: http.MethodPost, Pattern: item + "/rotate-secret", Handler: a.handle(a.rotateSecret)},
		{Method: http.MethodPost, Pattern: item + "/test", Handler: a.handle(a.test)},
		{Method: http.MethodGet, Pattern: item + "/deliveries", Handler: a.handle(a.deliveries)},
		{Method: http.MethodPost, Pattern: item + "/deliveries/{delivery_id}/retry", Handler: a.handle(a.retry)},
	}
}

// Replayable says whether a request to the webhooks' paths honours an
// Idempotency-Key, its answer kept and replayed: only a delivery's retry,
// whose 202 holds no secret and whose retried call must not send twice.
// The others do not, since a registration's or a rotation's answer holds a
// secret, shown once and never kept.
func Replayable(method, path string) bool {
	return method == http.MethodPost && Serves(path) && strings.HasSuffix(path, "/retry")
}

func (a *API) handle(op func(w http.ResponseWriter, r *http.Request, account string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, _ := httpapi.PrincipalFrom(r.Context())
		if err := op(w, r, p.Account); err != nil {
			if errors.Is(err, hookstore.ErrNotFound) {
				err = httpapi.NotFound()
			}
			// DynamoDB's failures become the domain's (503 when throttled).
			err = store.Classify(err)
			httpapi.WriteError(w, r, err)
		}
	}
}

func (a *API) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *API) create(w http.ResponseWriter, r *http.Request, account string) error {
	fields, err := httpapi.ParseBody(r)
	if err != nil {
		return err
	}
	e, err := a.endpoint(r, fields)
	if err != nil {
		return err
	}
	created, secret, err := a.Store.Create(r.Context(), account, e)
	if errors.Is(err, hookstore.ErrTooMany) {
		return httpapi.InvalidField("url", fmt.Sprintf("An account has at most %d webhook endpoints: delete one first.", hookstore.MaxEndpoints))
	}
	if err != nil {
		return err
	}
	writeWithSecret(w, http.StatusCreated, created, secret)
	return nil
}

// writeWithSecret answers an endpoint with its secret, the one answer
// that ever shows it (a registration's or a rotation's).
func writeWithSecret(w http.ResponseWriter, status int, e hookstore.Endpoint, secret string) {
	httpapi.WriteJSON(w, status, map[string]any{"data": struct {
		endpointView
		Secret string `json:"secret"`
	}{viewEndpoint(e), secret}, "status": status})
}

// rotateSecret gives the endpoint a new secret, shown in this answer only:
// the key it replaces still signs deliveries for a day, after the new one
// (hookstore.RotateSecret). Past hookstore.MaxSigningKeys in force, 429
// with Retry-After until the oldest stops.
func (a *API) rotateSecret(w http.ResponseWriter, r *http.Request, account string) error {
	e, secret, err := a.Store.RotateSecret(r.Context(), account, r.PathValue("id"))
	var tooOften *hookstore.ErrRotatedTooOften
	if errors.As(err, &tooOften) {
		// The rate limit's answer, as the contract has one 429 body for
		// every rate: Retry-After says when the oldest key stops.
		return httpapi.Throttled(tooOften.RetryAfter)
	}
	if err != nil {
		return err
	}
	writeWithSecret(w, http.StatusOK, e, secret)
	return nil
}

// Registration declares the fields of an endpoint's registration, so that
// they are judged by the rules every resource's fields are (records): a
// field sent twice, one not taken, a value that is not a string, text
// with control characters or past its length, all 422 naming the field;
// text trimmed, and empty text or null as not given.
var Registration = &records.Resource{
	Name:   "webhooks",
	Object: "webhook",
	Fields: []records.Field{
		{Name: "url", Kind: records.Text{Min: 1, Max: webhook.MaxURLLength}, Required: true, Create: true},
		{Name: "events", Kind: records.Text{Min: 1, Max: MaxEvents}, Default: "", Create: true},
		{Name: "description", Kind: records.Text{Min: 1, Max: MaxDescription}, Default: "", Create: true},
	},
}

// endpoint judges a registration: its fields by their declaration
// (Registration) first, then what only webhooks know of them, the URL's
// host (CheckURL, a DNS lookup made only for a well-formed request) and
// the event types, each problem named by its field.
func (a *API) endpoint(r *http.Request, f records.Input) (hookstore.Endpoint, error) {
	if err := eventsAsText(f); err != nil {
		return hookstore.Endpoint{}, err
	}
	values, err := Registration.ValidateCreate(f)
	if err != nil {
		return hookstore.Endpoint{}, err
	}
	e := hookstore.Endpoint{URL: values["url"].(string), Description: values["description"].(string)}
	problems := map[string][]string{}
	if err := a.Client.CheckURL(r.Context(), e.URL); err != nil {
		problems["url"] = []string{"The url " + urlProblem(err) + "."}
	}
	if e.Events, err = webhook.ParseEvents(values["events"].(string), a.Events); err != nil {
		problems["events"] = []string{"The events field has an " + err.Error() + "."}
	}
	if len(problems) > 0 {
		return hookstore.Endpoint{}, httpapi.Invalid(problems)
	}
	return e, nil
}

// eventsAsText takes a registration's events sent as a JSON array of
// types, as the answer shows them, as the comma-separated text a form
// sends. An empty array subscribes to nothing, which no endpoint may: 422,
// where an absent or empty text means every type.
func eventsAsText(f records.Input) error {
	v, ok := f.Values["events"]
	if !ok || v.Type != records.InputList {
		return nil
	}
	if len(v.Items) == 0 {
		return httpapi.InvalidField("events", "The events field must list at least one event type.")
	}
	f.Values["events"] = records.InputValue{Text: strings.Join(v.Items, ","), Type: records.InputString}
	return nil
}

// urlProblem is why a URL was refused, in the words of webhook.CheckURL
// past its "webhook: URL refused: " prefix.
func urlProblem(err error) string {
	if why, ok := strings.CutPrefix(err.Error(), webhook.ErrURL.Error()+": "); ok && why != "" {
		return why
	}
	return "is refused"
}

func (a *API) list(w http.ResponseWriter, r *http.Request, account string) error {
	es, err := a.Store.List(r.Context(), account)
	if err != nil {
		return err
	}
	views := make([]endpointView, len(es))
	for i, e := range es {
		views[i] = viewEndpoint(e)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": views, "status": http.StatusOK})
	return nil
}

func (a *API) get(w http.ResponseWriter, r *http.Request, account string) error {
	e, err := a.Store.Get(r.Context(), account, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": viewEndpoint(e), "status": http.StatusOK})
	return nil
}

// Changes declares the fields an endpoint's update takes, judged as a
// registration's are, each optional, at least one: enabled is a flag, as
// a record's favorite.
var Changes = &records.Resource{
	Name:   "webhooks",
	Object: "webhook",
	Fields: []records.Field{
		{Name: "url", Kind: records.Text{Min: 1, Max: webhook.MaxURLLength}, Update: true},
		{Name: "events", Kind: records.Text{Min: 1, Max: MaxEvents}, Update: true},
		{Name: "description", Kind: records.Text{Min: 1, Max: MaxDescription}, Update: true},
		{Name: "enabled", Kind: records.Bool{}, Update: true},
	},
}

// update changes an endpoint's url, events, description or enabled:
// enabling a disabled endpoint gives it a fresh start (hookstore.Update).
// The url and the event types are checked as at registration.
func (a *API) update(w http.ResponseWriter, r *http.Request, account string) error {
	fields, err := httpapi.ParseBody(r)
	if err != nil {
		return err
	}
	if err := eventsAsText(fields); err != nil {
		return err
	}
	values, err := Changes.ValidateUpdate(fields)
	if err != nil {
		return err
	}
	var c hookstore.Change
	problems := map[string][]string{}
	if u, ok := values["url"].(string); ok {
		if err := a.Client.CheckURL(r.Context(), u); err != nil {
			problems["url"] = []string{"The url " + urlProblem(err) + "."}
		}
		c.URL = &u
	}
	if ev, ok := values["events"].(string); ok {
		if c.Events, err = webhook.ParseEvents(ev, a.Events); err != nil {
			problems["events"] = []string{"The events field has an " + err.Error() + "."}
		}
	}
	if d, ok := values["description"].(string); ok {
		c.Description = &d
	}
	if on, ok := values["enabled"].(bool); ok {
		c.Enabled = &on
	}
	if len(problems) > 0 {
		return httpapi.Invalid(problems)
	}
	e, err := a.Store.Update(r.Context(), account, r.PathValue("id"), c)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": viewEndpoint(e), "status": http.StatusOK})
	return nil
}

func (a *API) delete(w http.ResponseWriter, r *http.Request, account string) error {
	id := r.PathValue("id")
	if err := a.Store.Delete(r.Context(), account, id); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "object": "webhook", "deleted": true, "status": http.StatusOK})
	return nil
}

// test sends a webhook.test event to the endpoint, whatever it subscribed
// to: 202, the delivery then shows in its log. Past the endpoint's
// TestsPerMinute it is 429 with Retry-After; past the account's monthly
// limit of deliveries, which its attempt would count against, 429
// quota_exceeded (the delivery would only be skipped).
func (a *API) test(w http.ResponseWriter, r *http.Request, account string) error {
	e, err := a.Store.Get(r.Context(), account, r.PathValue("id"))
	if err != nil {
		return err
	}
	if a.TestRate != nil {
		// Endpoint ids (wh_...) are never an API key's (key_...).
		if _, err := a.TestRate.AllowKey(r.Context(), e.ID); err != nil {
			return err
		}
	}
	now := a.now()
	if err := a.allowsAnAttempt(r, account, webhook.Test, now); err != nil {
		return err
	}
	ev := hooksender.Event{
		Account: account, Type: webhook.Test, At: now, Data: []byte(`{"webhook_id":"` + e.ID + `"}`),
		Identity: []string{"test", now.Format(time.RFC3339Nano)},
	}
	if err := a.Publisher.Publish(r.Context(), ev, e.ID); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusAccepted, map[string]any{"message": "Test event queued.", "status": http.StatusAccepted})
	return nil
}

// allowsAnAttempt refuses an attempt of an event of this type asked for
// now (a test event, a retry) when the account's monthly limit of
// deliveries, which it would count against, is reached: 429
// quota_exceeded, where the sender would only skip it.
func (a *API) allowsAnAttempt(r *http.Request, account, eventType string, now time.Time) error {
	if !webhook.Metered(eventType) {
		return nil
	}
	meters, err := a.Store.Usage(r.Context(), account, quota.PeriodOf(now))
	if err != nil {
		return err
	}
	if m, counted := meters[quota.Deliveries]; counted && !m.Limit.Allows(m.Used) {
		return quota.Exceeded(quota.Deliveries, m.Limit, now)
	}
	return nil
}

// retry asks for one more attempt of a delivery that ended failed or
// skipped, now: 202 with the delivery reopened (pending, due now), its
// attempt made by the sender as every attempt is (counted against the
// account's deliveries, in its endpoint's lane) and logged, never retried
// on the schedule. 409 while the endpoint is disabled, while the
// delivery's next attempt is scheduled, and for a delivery that succeeded
// or whose body is no longer kept; 429 quota_exceeded past the account's
// deliveries.
func (a *API) retry(w http.ResponseWriter, r *http.Request, account string) error {
	e, d, err := a.Store.FindDelivery(r.Context(), account, r.PathValue("id"), r.PathValue("delivery_id"))
	if err != nil {
		return err
	}
	if !e.Enabled {
		return httpapi.Conflict("The endpoint is disabled: enable it (PATCH with enabled=true) before retrying its deliveries.")
	}
	now := a.now()
	if err := a.allowsAnAttempt(r, account, d.Type, now); err != nil {
		return err
	}
	reopened, err := a.Store.Retry(r.Context(), d, now)
	switch {
	case errors.Is(err, hookstore.ErrRetryPending):
		return httpapi.Conflict("The delivery is pending: its next attempt is scheduled (next_attempt_at).")
	case errors.Is(err, hookstore.ErrNotKept) && d.Status == hookstore.Succeeded:
		return httpapi.Conflict("The delivery succeeded: its receiver has it.")
	case errors.Is(err, hookstore.ErrNotKept):
		return httpapi.Conflict("The delivery's body is no longer kept: it cannot be sent again.")
	case err != nil:
		return err
	}
	if err := a.Publisher.Redeliver(r.Context(), e, reopened); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusAccepted, map[string]any{"data": viewDelivery(reopened.Delivery), "status": http.StatusAccepted})
	return nil
}

// deliveries is a page of the endpoint's log, newest first: page and
// per_page as a list's (per_page one of records.PerPages, 100 by default:
// the first page is the latest 100, as the log was before it had pages),
// reaching back hookstore.MaxDeliveryLog deliveries. The answer is Laravel's simple
// paginator's: links to the previous and next pages, no total (counting a
// log would read all of it).
func (a *API) deliveries(w http.ResponseWriter, r *http.Request, account string) error {
	q, err := httpapi.ParseQuery(r)
	if err != nil {
		return err
	}
	page, perPage, err := logPage(q)
	if err != nil {
		return err
	}
	offset := int((page - 1) * int64(perPage))
	ds, more, err := a.Store.DeliveriesPage(r.Context(), account, r.PathValue("id"), offset, perPage)
	if err != nil {
		return err
	}
	views := make([]deliveryView, len(ds))
	for i, d := range ds {
		views[i] = viewDelivery(d)
	}
	path := httpapi.BaseURL(r) + r.URL.Path
	link := func(n int64, ok bool) *string {
		if !ok {
			return nil
		}
		u := path + "?" + httpapi.QueryWithPage(q, n)
		return &u
	}
	meta := map[string]any{"current_page": page, "per_page": perPage, "path": path, "from": nil, "to": nil}
	if len(ds) > 0 {
		meta["from"], meta["to"] = offset+1, offset+len(ds)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"data":   views,
		"links":  logLinks{link(1, true), link(page-1, page > 1), link(page+1, more)},
		"meta":   meta,
		"status": http.StatusOK,
	})
	return nil
}

// logLinks are a delivery log page's links, in the order a list's are.
type logLinks struct {
	First *string `json:"first"`
	Prev  *string `json:"prev"`
	Next  *string `json:"next"`
}

// logPage reads a delivery log's page and per_page, spelt as a list's,
// within the log's reach (hookstore.MaxDeliveryLog).
func logPage(q records.Query) (int64, int, error) {
	page, perPage, err := records.ParsePage(q, hookstore.MaxDeliveries)
	if err != nil {
		return 0, 0, err
	}
	if page > int64(hookstore.MaxDeliveryLog/perPage) {
		return 0, 0, httpapi.InvalidField("page", fmt.Sprintf("The delivery log's pages reach back %d deliveries: at most page %d of %d.",
			hookstore.MaxDeliveryLog, hookstore.MaxDeliveryLog/perPage, perPage))
	}
	return page, perPage, nil
}

// endpointView is an endpoint as the API shows it: its times written as
// the records' are (generation.FormatTime), never its key.
type endpointView struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	Description    string   `json:"description"`
	Enabled        bool     `json:"enabled"`
	DisabledReason *string  `json:"disabled_reason"`
	CreatedAt      string   `json:"created_at"`
}

func viewEndpoint(e hookstore.Endpoint) endpointView {
	return endpointView{ID: e.ID, URL: e.URL, Events: e.Events, Description: e.Description, Enabled: e.Enabled,
		DisabledReason: e.DisabledReason, CreatedAt: generation.FormatTime(e.CreatedAt)}
}

// deliveryView is a delivery's log entry as the API shows it.
type deliveryView struct {
	ID                 string  `json:"id"`
	Type               string  `json:"type"`
	Status             string  `json:"status"`
	Reason             *string `json:"reason"`
	Attempts           int     `json:"attempts"`
	LastResponseStatus *int    `json:"last_response_status"`
	LastAttemptAt      *string `json:"last_attempt_at"`
	NextAttemptAt      *string `json:"next_attempt_at"`
}

func viewDelivery(d hookstore.Delivery) deliveryView {
	return deliveryView{ID: d.ID, Type: d.Type, Status: d.Status, Reason: d.Reason, Attempts: d.Attempts,
		LastResponseStatus: d.LastResponseStatus, LastAttemptAt: timeView(d.LastAttemptAt), NextAttemptAt: timeView(d.NextAttemptAt)}
}

func timeView(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := generation.FormatTime(*t)
	return &s
}
