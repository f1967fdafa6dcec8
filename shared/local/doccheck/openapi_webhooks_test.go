package doccheck_test

import (
	"slices"
	"strings"
	"testing"

	"contentapi/shared/app"
)

// TestValidateWebhook: a delivery as the document declares it passes, and
// each way one can part from it fails: a header missing or malformed, a
// body field of another type or not declared, an event type the document
// does not have.
func TestValidateWebhook(t *testing.T) {
	v := validator(t)
	if got := v.Webhooks(); !slices.Equal(got, slices.Sorted(slices.Values(app.EventTypes))) {
		t.Errorf("the document's webhooks are %v, the event types %v", got, app.EventTypes)
	}
	good := header("webhook-id", "msg_2Ld6h0Qh5bbRB2Gi1CGbnw", "webhook-timestamp", "1795650011",
		"webhook-signature", "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=")
	test := `{"type":"webhook.test","timestamp":"2026-11-26T00:20:11.208473Z","data":{"webhook_id":"wh_5f0c2e9a7b3d41c8a6e2f901"}}`
	record := strings.TrimSuffix(strings.TrimPrefix(image, `{"data":`), `,"status":200}`)
	generated := `{"type":"image.generated","timestamp":"2026-11-26T00:20:11Z","data":` + record + `}`
	for _, body := range []string{test, generated} {
		if err := v.ValidateWebhook(good, []byte(body)); err != nil {
			t.Errorf("%.40s: %v", body, err)
		}
	}
	without := func(name string) map[string][]string {
		h := good.Clone()
		h.Del(name)
		return h
	}
	with := func(name, value string) map[string][]string {
		h := good.Clone()
		h.Set(name, value)
		return h
	}
	for name, c := range map[string]struct {
		header map[string][]string
		body   string
	}{
		"no signature":                      {without("webhook-signature"), test},
		"no id":                             {without("webhook-id"), test},
		"a timestamp in ms":                 {with("webhook-timestamp", "1795650011.5"), test},
		"a signature of v2":                 {with("webhook-signature", "v2,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="), test},
		"unknown type":                      {good, strings.Replace(test, "webhook.test", "webhook.tested", 1)},
		"data of another event":             {good, strings.Replace(generated, `"image.generated"`, `"webhook.test"`, 1)},
		"a field more":                      {good, strings.Replace(test, `"data"`, `"extra":1,"data"`, 1)},
		"a failed type on a record's event": {good, strings.Replace(generated, "image.generated", "image.finished", 1)},
		"a record without its id":           {good, strings.Replace(generated, `"id":1,`, ``, 1)},
	} {
		if err := v.ValidateWebhook(c.header, []byte(c.body)); err == nil {
			t.Errorf("%s: passes", name)
		}
	}
}
