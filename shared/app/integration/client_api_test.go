package integration_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"contentapi/client"
	"contentapi/shared/app"
	"contentapi/shared/local/doccheck"
)

// checkingDoer sends the generated client's requests to the stack and
// checks each exchange against the document: every request the service
// accepts must be one the document allows, and every answer must match
// it. It records which operations succeeded.
type checkingDoer struct {
	t         *testing.T
	v         *doccheck.OpenAPIValidator
	mu        sync.Mutex
	succeeded map[string]bool
}

func (d *checkingDoer) Do(req *http.Request) (*http.Response, error) {
	d.t.Helper()
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	answer, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(answer))
	target := req.URL.RequestURI()
	if err := d.v.ValidateResponse(req.Method, target, res.StatusCode, res.Header, answer); err != nil {
		d.t.Error(err)
	}
	if res.StatusCode < 300 {
		if err := d.v.ValidateRequest(req.Method, target, req.Header, body); err != nil {
			d.t.Errorf("the client sent a request the document does not allow: %v", err)
		}
		if op, err := d.v.Operation(req.Method, target); err == nil {
			d.mu.Lock()
			d.succeeded[op] = true
			d.mu.Unlock()
		}
	}
	return res, nil
}

// newClient is the generated client on the stack, with key (none if empty).
func newClient(t *testing.T, s *stack, doer *checkingDoer, key string) *client.ClientWithResponses {
	t.Helper()
	opts := []client.ClientOption{client.WithHTTPClient(doer)}
	if key != "" {
		opts = append(opts, client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+key)
			return nil
		}))
	}
	c, err := client.NewClientWithResponses(s.url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// status fails the test unless an exchange answered want.
func status(t *testing.T, what string, got *http.Response, err error, want int) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got.StatusCode != want {
		t.Fatalf("%s: status %d, want %d", what, got.StatusCode, want)
	}
}

// TestGeneratedClient drives every operation the service serves through
// the client generated from openapi.yaml, against the local stack: its
// successes, with every list parameter, and the errors a client meets.
func TestGeneratedClient(t *testing.T) {
	s := newStackWith(t, func(cfg *app.Config) { withWebhooks(t)(cfg) })
	v := contractValidator(t)
	doer := &checkingDoer{t: t, v: v, succeeded: map[string]bool{}}
	c := newClient(t, s, doer, s.writeKey)
	ctx := context.Background()

	// Images: create in JSON and as a form, idempotently.
	created, err := c.CreateImageWithResponse(ctx, &client.CreateImageParams{IdempotencyKey: ptr("client-1")}, client.ImageCreate{
		Name: "Sunset", Description: "A red sky", Resolution: client.N1024x1024, Style: ptr(client.StyleDigitalArt)})
	status(t, "create image", created.HTTPResponse, err, 201)
	img := created.JSON201.Data
	if img.Id != 1 || img.Name != "Sunset" || *img.Style != client.ImageStyleDigitalArt || img.Favorite || img.Medium != nil {
		t.Fatalf("created image: %+v", img)
	}
	if !strings.HasSuffix(created.Headers201.Location, "/api/v1/images/1") || created.Headers201.ETag == "" {
		t.Errorf("create headers: %+v", created.Headers201)
	}
	replayed, err := c.CreateImageWithResponse(ctx, &client.CreateImageParams{IdempotencyKey: ptr("client-1")}, client.ImageCreate{
		Name: "Sunset", Description: "A red sky", Resolution: client.N1024x1024, Style: ptr(client.StyleDigitalArt)})
	status(t, "replayed create", replayed.HTTPResponse, err, 201)
	if replayed.Headers201.IdempotentReplayed == nil || *replayed.Headers201.IdempotentReplayed != "true" || replayed.JSON201.Data.Id != 1 {
		t.Errorf("replay: %+v %+v", replayed.Headers201, replayed.JSON201)
	}
	form, err := c.CreateImageWithFormdataBodyWithResponse(ctx, nil, client.ImageCreate{
		Name: "Café au lait", Description: "A cup", Resolution: client.N512x512, Medium: ptr(client.MediumWatercolor), Filter: ptr(client.FilterSepia)})
	status(t, "create image from a form", form.HTTPResponse, err, 201)
	if d := form.JSON201.Data; d.Id != 2 || *d.Medium != client.ImageMediumWatercolor || *d.Filter != client.ImageFilterSepia {
		t.Errorf("form create: %+v", d)
	}

	// Lists, with every parameter.
	list, err := c.ListImagesWithResponse(ctx, &client.ListImagesParams{
		Search: ptr("CAFE"), SearchBy: ptr("name"), Resolution: ptr(client.N512x512), Style: nil, Medium: ptr(client.MediumWatercolor),
		Filter: ptr(client.FilterSepia), Favorite: ptr(false), SortBy: ptr("name"), Sort: ptr("asc"), PerPage: ptr(25), Page: ptr(int64(1))})
	status(t, "list images", list.HTTPResponse, err, 200)
	if len(list.JSON200.Data) != 1 || list.JSON200.Data[0].Id != 2 || list.JSON200.Meta.Total != 1 || list.JSON200.Meta.PerPage != 25 {
		t.Errorf("filtered list: %+v", list.JSON200)
	}
	styled, err := c.ListImagesWithResponse(ctx, &client.ListImagesParams{Style: ptr(client.StyleDigitalArt), Page: ptr(int64(2))})
	status(t, "list images by style", styled.HTTPResponse, err, 200)
	if m := styled.JSON200.Meta; len(styled.JSON200.Data) != 0 || m.Total != 1 || m.CurrentPage != 2 || m.From != nil || styled.JSON200.Links.Prev == nil {
		t.Errorf("a page past the end: %+v", styled.JSON200)
	}
	head, err := c.HeadImagesWithResponse(ctx, &client.HeadImagesParams{PerPage: ptr(10)})
	status(t, "HEAD images", head.HTTPResponse, err, 200)
	// HEAD of a list reads nothing, so it has no Link to send.
	if len(head.Body) != 0 || head.HTTPResponse.Header.Get("Link") != "" {
		t.Errorf("HEAD: %q %v", head.Body, head.HTTPResponse.Header)
	}

	// One image: read, conditional read, HEAD, updates, conditional writes.
	got, err := c.GetImageWithResponse(ctx, 1, nil)
	status(t, "get image", got.HTTPResponse, err, 200)
	tag := got.Headers200.ETag
	if got.JSON200.Data.Description != "A red sky" || tag != created.Headers201.ETag {
		t.Errorf("get: %+v %q", got.JSON200.Data, tag)
	}
	notModified, err := c.GetImageWithResponse(ctx, 1, &client.GetImageParams{IfNoneMatch: &tag})
	status(t, "conditional get", notModified.HTTPResponse, err, 304)
	headOne, err := c.HeadImageWithResponse(ctx, 1, nil)
	status(t, "HEAD image", headOne.HTTPResponse, err, 200)
	if headOne.HTTPResponse.Header.Get("ETag") != tag {
		t.Errorf("HEAD ETag %q, want %q", headOne.HTTPResponse.Header.Get("ETag"), tag)
	}
	updated, err := c.UpdateImageWithResponse(ctx, 1, &client.UpdateImageParams{IfMatch: &tag}, client.ImageUpdate{Favorite: ptr(true)})
	status(t, "update image", updated.HTTPResponse, err, 200)
	if !updated.JSON200.Data.Favorite || updated.Headers200.ETag == tag {
		t.Errorf("update: %+v %+v", updated.JSON200.Data, updated.Headers200)
	}
	patched, err := c.PatchImageWithFormdataBodyWithResponse(ctx, 1, nil, client.ImageUpdate{Name: ptr("Dusk")})
	status(t, "patch image from a form", patched.HTTPResponse, err, 200)
	if d := patched.JSON200.Data; d.Name != "Dusk" || !d.Favorite {
		t.Errorf("patch: %+v", d)
	}
	stale, err := c.PatchImageWithResponse(ctx, 1, &client.PatchImageParams{IfMatch: &tag}, client.ImageUpdate{Favorite: ptr(false)})
	status(t, "stale patch", stale.HTTPResponse, err, 412)
	if stale.JSON412 == nil || stale.JSON412.Status != 412 {
		t.Errorf("412: %s", stale.Body)
	}
	deleted, err := c.DeleteImageWithResponse(ctx, 2, nil)
	status(t, "delete image", deleted.HTTPResponse, err, 200)
	if d := deleted.JSON200; d.Id != 2 || !bool(d.Deleted) || d.Object != client.ImageDeletedObjectImage {
		t.Errorf("delete: %+v", d)
	}
	gone, err := c.GetImageWithResponse(ctx, 2, nil)
	status(t, "get a deleted image", gone.HTTPResponse, err, 404)
	if gone.JSON404 == nil || gone.JSON404.Message != client.NotFoundMessageResourceNotFound {
		t.Errorf("404: %s", gone.Body)
	}

	// Voices: created in JSON and as a form, listed, read, updated,
	// patched, one deleted.
	voice, err := c.CreateVoiceWithResponse(ctx, &client.CreateVoiceParams{IdempotencyKey: ptr("voice-1")}, client.VoiceCreate{
		Name: "Barista", Guide: "Warm and short.", Language: ptr(client.LanguagePtBR), Tone: ptr(client.Tone("witty"))})
	status(t, "create voice", voice.HTTPResponse, err, 201)
	if v := voice.JSON201.Data; v.Id != 1 || v.Guide != "Warm and short." || v.Language == nil || *v.Language != "pt-BR" || v.Tone == nil || *v.Tone != "witty" {
		t.Errorf("created voice: %+v", v)
	}
	formVoice, err := c.CreateVoiceWithFormdataBodyWithResponse(ctx, nil, client.VoiceCreate{Name: "Plain", Guide: "Say it once."})
	status(t, "create voice from a form", formVoice.HTTPResponse, err, 201)
	voices, err := c.ListVoicesWithResponse(ctx, &client.ListVoicesParams{Search: ptr("barista"), PerPage: ptr(10)})
	status(t, "list voices", voices.HTTPResponse, err, 200)
	if len(voices.JSON200.Data) != 1 || voices.JSON200.Data[0].Id != 1 {
		t.Errorf("voice list: %+v", voices.JSON200)
	}
	headVoices, err := c.HeadVoicesWithResponse(ctx, nil)
	status(t, "HEAD voices", headVoices.HTTPResponse, err, 200)
	gotVoice, err := c.GetVoiceWithResponse(ctx, 1, nil)
	status(t, "get voice", gotVoice.HTTPResponse, err, 200)
	headVoice, err := c.HeadVoiceWithResponse(ctx, 1, nil)
	status(t, "HEAD voice", headVoice.HTTPResponse, err, 200)
	retoned, err := c.UpdateVoiceWithResponse(ctx, 1, nil, client.VoiceUpdate{Tone: ptr(client.Tone("friendly"))})
	status(t, "update voice", retoned.HTTPResponse, err, 200)
	if v := retoned.JSON200.Data; v.Tone == nil || *v.Tone != "friendly" || v.Name != "Barista" {
		t.Errorf("voice update: %+v", v)
	}
	reguided, err := c.PatchVoiceWithResponse(ctx, 1, nil, client.VoiceUpdate{Guide: ptr("Warm, short, never pushy.")})
	status(t, "patch voice", reguided.HTTPResponse, err, 200)
	droppedVoice, err := c.DeleteVoiceWithResponse(ctx, 2, nil)
	status(t, "delete voice", droppedVoice.HTTPResponse, err, 200)
	if d := droppedVoice.JSON200; d.Id != 2 || d.Object != client.VoiceDeletedObjectVoice {
		t.Errorf("delete voice: %+v", d)
	}

	// Documents.
	doc, err := c.CreateDocumentWithResponse(ctx, nil, client.DocumentCreate{
		Name: "Launch post", Prompt: "Announce it", Creativity: ptr(0.75), TemplateId: ptr(9)})
	status(t, "create document", doc.HTTPResponse, err, 201)
	if d := doc.JSON201.Data; d.Id != 1 || d.Creativity != 0.75 || d.TemplateId != 9 || d.Template.Name != client.BlogPost || d.Result != nil || d.Words != 0 {
		t.Errorf("created document: %+v", d)
	}
	plain, err := c.CreateDocumentWithFormdataBodyWithResponse(ctx, nil, client.DocumentCreate{Name: "Free", Prompt: "p"})
	status(t, "create document from a form", plain.HTTPResponse, err, 201)
	if d := plain.JSON201.Data; d.Creativity != 0.5 || d.TemplateId != 1 {
		t.Errorf("defaults: %+v", d)
	}
	docs, err := c.ListDocumentsWithResponse(ctx, &client.ListDocumentsParams{
		Search: ptr("launch"), SearchBy: ptr("name"), TemplateId: ptr(client.TemplateScope(9)), Favorite: ptr(false), SortBy: ptr("id"), Sort: ptr("desc"),
		PerPage: ptr(10), Page: ptr(int64(1))})
	status(t, "list documents", docs.HTTPResponse, err, 200)
	if len(docs.JSON200.Data) != 1 || docs.JSON200.Data[0].Id != 1 {
		t.Errorf("document list: %+v", docs.JSON200)
	}
	everyTemplate, err := c.ListDocumentsWithResponse(ctx, &client.ListDocumentsParams{TemplateId: ptr(client.AllTemplates)})
	status(t, "list every template's documents", everyTemplate.HTTPResponse, err, 200)
	if l := everyTemplate.JSON200; len(l.Data) != 2 || l.Data[0].Id != 2 || l.Data[1].Id != 1 || l.Meta.Total != 2 {
		t.Errorf("every template's documents: %+v", l)
	}
	headDocs, err := c.HeadDocumentsWithResponse(ctx, &client.HeadDocumentsParams{TemplateId: ptr(client.TemplateScope(9))})
	status(t, "HEAD documents", headDocs.HTTPResponse, err, 200)
	gotDoc, err := c.GetDocumentWithResponse(ctx, 1, nil)
	status(t, "get document", gotDoc.HTTPResponse, err, 200)
	headDoc, err := c.HeadDocumentWithResponse(ctx, 1, nil)
	status(t, "HEAD document", headDoc.HTTPResponse, err, 200)
	edited, err := c.UpdateDocumentWithResponse(ctx, 1, nil, client.DocumentUpdate{Result: ptr("Our new espresso machine is here.")})
	status(t, "update document", edited.HTTPResponse, err, 200)
	if d := edited.JSON200.Data; d.Words != 6 || d.Result == nil {
		t.Errorf("result edit: %+v", d)
	}
	favorite, err := c.PatchDocumentWithResponse(ctx, 1, &client.PatchDocumentParams{IfMatch: ptr("*")}, client.DocumentUpdate{Favorite: ptr(true)})
	status(t, "patch document", favorite.HTTPResponse, err, 200)
	renamed, err := c.UpdateDocumentWithFormdataBodyWithResponse(ctx, 1, nil, client.DocumentUpdate{Name: ptr("Launch")})
	status(t, "update document from a form", renamed.HTTPResponse, err, 200)
	if d := renamed.JSON200.Data; d.Name != "Launch" || !d.Favorite || d.Words != 6 {
		t.Errorf("form update: %+v", d)
	}
	patchedForm, err := c.PatchDocumentWithFormdataBodyWithResponse(ctx, 1, nil, client.DocumentUpdate{Favorite: ptr(false)})
	status(t, "patch document from a form", patchedForm.HTTPResponse, err, 200)
	removed, err := c.DeleteDocumentWithResponse(ctx, 2, nil)
	status(t, "delete document", removed.HTTPResponse, err, 200)
	if removed.JSON200.Object != client.DocumentDeletedObjectDocument {
		t.Errorf("delete document: %+v", removed.JSON200)
	}

	// The month's usage, with a read key: the two images and two
	// documents created above, no limits.
	reader := newClient(t, s, doer, s.readKey)
	used, err := reader.GetUsageWithResponse(ctx, nil)
	status(t, "usage", used.HTTPResponse, err, 200)
	if u := used.JSON200.Data; u.Images.Used != 2 || u.Documents.Used != 2 || u.Words.Used != 0 || u.Images.Limit != nil || u.Period == "" {
		t.Errorf("usage: %+v", u)
	}
	// The same month by its period; an earlier one, unused, all zeros.
	period := used.JSON200.Data.Period
	same, err := reader.GetUsageWithResponse(ctx, &client.GetUsageParams{Period: &period})
	status(t, "usage by period", same.HTTPResponse, err, 200)
	if u := same.JSON200.Data; u.Period != period || u.Images.Used != 2 || u.Documents.Used != 2 {
		t.Errorf("usage of %s: %+v", period, u)
	}
	earlier := "2000-01"
	refused, err := reader.GetUsageWithResponse(ctx, &client.GetUsageParams{Period: &earlier})
	status(t, "usage of a month not kept", refused.HTTPResponse, err, 422)
	headUsage, err := c.HeadUsageWithResponse(ctx)
	status(t, "HEAD usage", headUsage.HTTPResponse, err, 200)
	templates, err := c.ListTemplatesWithResponse(ctx)
	status(t, "templates", templates.HTTPResponse, err, 200)
	if l := templates.JSON200.Data; len(l) != 52 || l[8].Id != 9 || l[8].Name != "Blog post" {
		t.Errorf("templates: %+v", l)
	}
	headTemplates, err := c.HeadTemplatesWithResponse(ctx)
	status(t, "HEAD templates", headTemplates.HTTPResponse, err, 200)

	// A document written in the voice, in another language and three
	// variants: its tone is the voice's.
	inVoice, err := c.CreateDocumentWithResponse(ctx, nil, client.DocumentCreate{
		Name: "In a voice", Prompt: "Announce it", VoiceId: ptr(int64(1)), Language: ptr(client.Language("fr")), Variants: ptr(3)})
	status(t, "create document in a voice", inVoice.HTTPResponse, err, 201)
	if d := inVoice.JSON201.Data; d.Voice == nil || d.Voice.Name != "Barista" || d.VoiceId == nil || *d.VoiceId != 1 ||
		d.Language == nil || *d.Language != "fr" || d.Tone == nil || *d.Tone != "friendly" || d.Variants != 3 {
		t.Errorf("document in a voice: %+v", d)
	}

	// Webhooks: registered as JSON and as a form (the secret shown
	// then only), listed, read, tested, its log read, deleted.
	hook, err := c.CreateWebhookWithResponse(ctx, client.WebhookCreate{Url: "https://hooks.example.com/a",
		Events: ptr("document.generated"), Description: ptr("CMS")})
	status(t, "register a webhook", hook.HTTPResponse, err, 201)
	h := hook.JSON201.Data
	if !strings.HasPrefix(h.Secret, "whsec_") || len(h.Events) != 1 || h.Events[0] != client.DocumentGenerated || !h.Enabled {
		t.Errorf("registered: %+v", h)
	}
	formHook, err := c.CreateWebhookWithFormdataBodyWithResponse(ctx, client.WebhookCreate{Url: "https://hooks.example.com/b"})
	status(t, "register a webhook from a form", formHook.HTTPResponse, err, 201)
	hooks, err := newClient(t, s, doer, s.readKey).ListWebhooksWithResponse(ctx)
	status(t, "list webhooks", hooks.HTTPResponse, err, 200)
	if n := len(hooks.JSON200.Data); n != 2 || strings.Contains(string(hooks.Body), h.Secret) {
		t.Errorf("list: %s", hooks.Body)
	}
	headHooks, err := c.HeadWebhooksWithResponse(ctx)
	status(t, "HEAD webhooks", headHooks.HTTPResponse, err, 200)
	gotHook, err := c.GetWebhookWithResponse(ctx, h.Id)
	status(t, "get webhook", gotHook.HTTPResponse, err, 200)
	if gotHook.JSON200.Data.Description != "CMS" {
		t.Errorf("get webhook: %s", gotHook.Body)
	}
	off := false
	disabled, err := c.UpdateWebhookWithResponse(ctx, h.Id, client.WebhookUpdate{Enabled: &off, Description: ptr("CMS, paused")})
	status(t, "update webhook", disabled.HTTPResponse, err, 200)
	if d := disabled.JSON200.Data; d.Enabled || d.Description != "CMS, paused" || d.DisabledReason == nil {
		t.Errorf("updated webhook: %s", disabled.Body)
	}
	on := true
	enabled, err := c.UpdateWebhookWithResponse(ctx, h.Id, client.WebhookUpdate{Enabled: &on})
	status(t, "enable webhook", enabled.HTTPResponse, err, 200)
	headHook, err := c.HeadWebhookWithResponse(ctx, h.Id)
	status(t, "HEAD webhook", headHook.HTTPResponse, err, 200)
	rotated, err := c.RotateWebhookSecretWithResponse(ctx, h.Id)
	status(t, "rotate a webhook's secret", rotated.HTTPResponse, err, 200)
	if r := rotated.JSON200.Data; r.Id != h.Id || !strings.HasPrefix(r.Secret, "whsec_") || r.Secret == h.Secret {
		t.Errorf("rotated: %s", rotated.Body)
	}
	tested, err := c.TestWebhookWithResponse(ctx, h.Id)
	status(t, "test webhook", tested.HTTPResponse, err, 202)
	hookLog, err := c.ListWebhookDeliveriesWithResponse(ctx, h.Id, nil)
	status(t, "webhook deliveries", hookLog.HTTPResponse, err, 200)
	if l := hookLog.JSON200.Data; len(l) != 1 || l[0].Type != client.WebhookTest || l[0].Status != client.DeliveryPending {
		t.Errorf("deliveries: %s", hookLog.Body)
	}
	// Pending: not retried; once it has failed, it is.
	notRetried, err := c.RetryWebhookDeliveryWithResponse(ctx, h.Id, hookLog.JSON200.Data[0].Id, nil)
	status(t, "retry a pending delivery", notRetried.HTTPResponse, err, 409)
	failDelivery(t, s, "acme", h.Id, hookLog.JSON200.Data[0].Id)
	retried, err := c.RetryWebhookDeliveryWithResponse(ctx, h.Id, hookLog.JSON200.Data[0].Id, &client.RetryWebhookDeliveryParams{IdempotencyKey: ptr("retry-1")})
	status(t, "retry a failed delivery", retried.HTTPResponse, err, 202)
	if d := retried.JSON202.Data; d.Status != client.DeliveryPending || d.Attempts != 1 {
		t.Errorf("retried: %s", retried.Body)
	}
	headLog, err := c.HeadWebhookDeliveriesWithResponse(ctx, h.Id)
	status(t, "HEAD webhook deliveries", headLog.HTTPResponse, err, 200)
	unhooked, err := c.DeleteWebhookWithResponse(ctx, formHook.JSON201.Data.Id)
	status(t, "delete webhook", unhooked.HTTPResponse, err, 200)

	regenerateThroughTheClient(t, doer)

	// The document, without a key.
	anonymous := newClient(t, s, doer, "")
	spec, err := anonymous.GetOpenAPIDocumentWithResponse(ctx, nil)
	status(t, "get the document", spec.HTTPResponse, err, 200)
	if spec.JSON200.Openapi != "3.1.0" {
		t.Errorf("document: %.80s", spec.Body)
	}
	specHead, err := anonymous.HeadOpenAPIDocumentWithResponse(ctx, &client.HeadOpenAPIDocumentParams{IfNoneMatch: ptr(spec.Headers200.ETag)})
	status(t, "HEAD the document", specHead.HTTPResponse, err, 304)
	specHead, err = anonymous.HeadOpenAPIDocumentWithResponse(ctx, nil)
	status(t, "HEAD the document", specHead.HTTPResponse, err, 200)

	// The errors a client meets, decoded as the document says.
	unauthenticated, err := anonymous.ListImagesWithResponse(ctx, nil)
	status(t, "no key", unauthenticated.HTTPResponse, err, 401)
	if unauthenticated.JSON401 == nil || unauthenticated.Headers401.WWWAuthenticate != "Bearer" {
		t.Errorf("401: %s %+v", unauthenticated.Body, unauthenticated.Headers401)
	}
	readOnly := newClient(t, s, doer, s.readKey)
	forbidden, err := readOnly.DeleteImageWithResponse(ctx, 1, nil)
	status(t, "a read-only key", forbidden.HTTPResponse, err, 403)
	if forbidden.JSON403 == nil || forbidden.JSON403.Message == "" {
		t.Errorf("403: %s", forbidden.Body)
	}
	other := newClient(t, s, doer, s.otherKey)
	hidden, err := other.GetDocumentWithResponse(ctx, 1, nil)
	status(t, "another account's record", hidden.HTTPResponse, err, 404)
	invalid, err := c.CreateImageWithResponse(ctx, nil, client.ImageCreate{Name: "x", Description: "d", Resolution: "2048x2048", Style: ptr(client.Style("oil"))})
	status(t, "invalid values", invalid.HTTPResponse, err, 422)
	if v := invalid.JSON422; v == nil || len(v.Errors["resolution"]) == 0 || len(v.Message["style"]) == 0 || v.Status != 422 {
		t.Errorf("422: %s", invalid.Body)
	}
	badJSON, err := c.CreateDocumentWithBodyWithResponse(ctx, nil, "application/json", strings.NewReader(`{"name":`))
	status(t, "broken JSON", badJSON.HTTPResponse, err, 400)
	if badJSON.JSON400 == nil {
		t.Errorf("400: %s", badJSON.Body)
	}
	unsupported, err := c.UpdateDocumentWithBodyWithResponse(ctx, 1, nil, "text/plain", strings.NewReader("name=x"))
	status(t, "text/plain", unsupported.HTTPResponse, err, 415)
	if unsupported.JSON415 == nil {
		t.Errorf("415: %s", unsupported.Body)
	}
	reused, err := c.CreateImageWithResponse(ctx, &client.CreateImageParams{IdempotencyKey: ptr("client-1")}, client.ImageCreate{
		Name: "Another", Description: "d", Resolution: client.N256x256})
	status(t, "a key reused with another body", reused.HTTPResponse, err, 422)
	if reused.JSON422 == nil || len(reused.JSON422.Errors["Idempotency-Key"]) == 0 {
		t.Errorf("422 for the key: %s", reused.Body)
	}

	// Every operation the service serves went through the client; the
	// preflights are left out of it, and the planned ones are not served.
	for _, op := range v.Operations() {
		if !strings.HasPrefix(op, "OPTIONS ") && !doer.succeeded[op] {
			t.Errorf("%s never succeeded through the client", op)
		}
	}
	if planned := v.PlannedOperations(); len(planned) > 0 {
		t.Logf("not served yet, so not driven: %v", planned)
	}
}
