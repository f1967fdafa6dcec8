package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
	"contentapi/shared/webhook"
)

// thresholdsLogged waits until the generator has taken every stream record
// written so far (each crossing's outbox among them, so every
// usage.threshold it publishes is in the delivery log), then returns the
// log's usage.threshold deliveries, one per event told, as "kind
// threshold" (each once per event: the log records a delivery once
// however often it is published).
func (d *deliveryStack) thresholdsLogged(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	if err := d.poller.Drained(ctx); err != nil {
		t.Fatalf("the generator did not catch up with the streams: %v", err)
	}
	log, err := d.store.Deliveries(ctx, "acme", d.endpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	for _, dl := range log {
		if dl.Type == webhook.Threshold {
			told = append(told, dl.ID)
		}
	}
	var seen []string
	for _, b := range d.received(t, 0) {
		if b["type"] != webhook.Threshold {
			continue
		}
		data, _ := b["data"].(map[string]any)
		seen = append(seen, fmt.Sprint(data["kind"], " ", data["threshold"]))
	}
	if len(seen) > len(told) {
		t.Errorf("received %d usage.threshold deliveries (%v), the log records %d", len(seen), seen, len(told))
	}
	return told
}

// thresholdsReceived waits for n usage.threshold deliveries and returns
// their data.
func (d *deliveryStack) thresholdsReceived(t *testing.T, n int) []map[string]any {
	t.Helper()
	var got []map[string]any
	eventually(t, fmt.Sprintf("%d usage.threshold deliveries", n), func() (bool, string) {
		got = nil
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, b := range d.bodies {
			if b["type"] == webhook.Threshold {
				data, _ := b["data"].(map[string]any)
				got = append(got, data)
			}
		}
		return len(got) >= n, fmt.Sprint(got)
	})
	return got
}

// An account's images reaching 80% of its limit, and then 100%, are told
// to its endpoint once each, as the document says (the receiver checks
// every delivery against the webhooks section): the create that reached
// the share finds it, and the creates after it, which find it marked, do
// not tell it again; nor does the usage reaching it again after a delete
// (usage counts what was made, so it does not go down). Its attempts do
// not count against the deliveries limit: with none allowed, the
// generations' ends are skipped and the thresholds still sent.
func TestUsageThresholdIsToldOnce(t *testing.T) {
	d := newDeliveryStack(t, nil, func(int) int { return http.StatusNoContent })
	d.setLimits("acme", quota.Limits{quota.Images: quota.Max(5), quota.Deliveries: quota.Max(0)})
	create := func(name string) {
		t.Helper()
		expect(t, d.form("POST", "/api/v1/images", "name", name, "description", "A lighthouse", "resolution", "256x256"), 201)
	}
	for i := range 3 {
		create(fmt.Sprint("under ", i))
	}
	if told := d.thresholdsLogged(t); len(told) != 0 {
		t.Fatalf("at 60%% of the limit, told %v", told)
	}
	create("80%")
	got := d.thresholdsReceived(t, 1)[0]
	want := map[string]any{"kind": "images", "threshold": float64(80), "used": float64(4), "limit": float64(5),
		"period": quota.PeriodOf(time.Now()).String()}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the 80%% event's data = %v, want %v", got, want)
	}
	create("100%")
	got = d.thresholdsReceived(t, 2)[1]
	if got["threshold"] != float64(100) || got["used"] != float64(5) {
		t.Errorf("the 100%% event's data = %v", got)
	}
	if told := d.thresholdsLogged(t); len(told) != 2 {
		t.Fatalf("told %d usage.threshold events, want 2 (80%% and 100%%)", len(told))
	}
	// Past the limit, refused: nothing more is told.
	expect(t, d.form("POST", "/api/v1/images", "name", "over", "description", "A lighthouse", "resolution", "256x256"), 429)
	if told := d.thresholdsLogged(t); len(told) != 2 {
		t.Fatalf("after a refusal, told %d usage.threshold events, want 2", len(told))
	}
	for _, b := range d.received(t, 0) {
		if b["type"] != webhook.Threshold {
			t.Errorf("with no deliveries allowed, received %v", b["type"])
		}
	}
}

// Creates racing past the share at once each find it reached and unmarked
// (their counter writes' answers come back before any mark): one mark
// write lands, and one event is told.
func TestUsageThresholdRacedIsToldOnce(t *testing.T) {
	d := newDeliveryStack(t, nil, func(int) int { return http.StatusNoContent })
	d.setLimits("acme", quota.Limits{quota.Images: quota.Max(10)})
	for i := range 7 {
		expect(t, d.form("POST", "/api/v1/images", "name", fmt.Sprint("under ", i), "description", "A lighthouse", "resolution", "256x256"), 201)
	}
	var wg sync.WaitGroup
	statuses := make([]int, 3)
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = d.form("POST", "/api/v1/images", "name", fmt.Sprint("racing ", i), "description", "A lighthouse", "resolution", "256x256").Status
		})
	}
	wg.Wait()
	if !slices.Equal(statuses, []int{201, 201, 201}) {
		t.Fatalf("the racing creates answered %v", statuses)
	}
	d.wantBothSharesOnce(t)
}

// wantBothSharesOnce holds that the account was told of 80% and of 100%,
// once each: in the delivery log, and at the receiver.
func (d *deliveryStack) wantBothSharesOnce(t *testing.T) {
	t.Helper()
	d.thresholdsReceived(t, 2)
	if told := d.thresholdsLogged(t); len(told) != 2 {
		t.Fatalf("told %d usage.threshold events, want 2 (80%% and 100%%)", len(told))
	}
	var shares []string
	for _, data := range d.thresholdsReceived(t, 2) {
		shares = append(shares, fmt.Sprint(data["threshold"]))
	}
	if slices.Sort(shares); !slices.Equal(shares, []string{"100", "80"}) {
		t.Errorf("received %v, want one of each", shares)
	}
}

// newFaultyDeliveryStack is a delivery stack whose DynamoDB calls pass a
// fault proxy, and the proxy.
func newFaultyDeliveryStack(t *testing.T) (*deliveryStack, *ddblocal.FaultProxy) {
	var proxy *ddblocal.FaultProxy
	d := newDeliveryStackWith(t, nil, func(int) int { return http.StatusNoContent }, func(cfg *app.Config) {
		proxy = ddblocal.NewFaultProxy(cfg.DynamoDBEndpoint)
		t.Cleanup(proxy.Close)
		cfg.DynamoDBEndpoint = proxy.URL
	})
	return d, proxy
}

// The mark's write answered with its answer lost (the SDK retries it,
// and the retry finds the mark there), and then the generator's clearing
// of the outbox failing (the stream record comes again, and is published
// again): one event is told.
func TestUsageThresholdToldOnceThroughFaults(t *testing.T) {
	d, proxy := newFaultyDeliveryStack(t)
	d.setLimits("acme", quota.Limits{quota.Images: quota.Max(2)})
	// The mark's write sets; the outbox's clearing only removes.
	mark := func(c ddblocal.ProxiedCall) bool {
		return c.Op == "UpdateItem" && c.Has(`"th80_images_`) && c.Has("SET ")
	}
	clear := func(c ddblocal.ProxiedCall) bool {
		return c.Op == "UpdateItem" && c.Has(`"usage_threshold"`) && !c.Has("SET ")
	}
	proxy.Inject(mark, ddblocal.LoseAnswer, 1)
	// Past the SDK's three attempts: the generator fails the record, and
	// its mapping delivers it again.
	proxy.Inject(clear, ddblocal.FailCall, 4)
	expect(t, d.form("POST", "/api/v1/images", "name", "50%", "description", "A lighthouse", "resolution", "256x256"), 201)
	expect(t, d.form("POST", "/api/v1/images", "name", "100%", "description", "A lighthouse", "resolution", "256x256"), 201)
	d.wantBothSharesOnce(t)
}

// The deliveries limit's thresholds are told by the sender, which counts
// the attempts where the webhooks table has no stream: with 5 deliveries
// allowed, the 4th test event's attempt reaches 80% and the 5th 100%,
// each told once, as the document says, the 100% one although the limit
// is spent (its attempts are not metered); the next test event is
// refused and tells nothing. The 4th and 5th are sent at once, so their
// attempts race (one invocation attempts a batch's messages together),
// both finding 80% untold; the record of the crossing as first found has
// its answer lost, and the first mark of 80% told fails past the SDK's
// retries (so the next admission tells it again, as the same event), and
// the mark of 100% has its answer lost: one event each.
func TestDeliveriesThresholdIsToldOnce(t *testing.T) {
	d, proxy := newFaultyDeliveryStack(t)
	d.setLimits("acme", quota.Limits{quota.Deliveries: quota.Max(5)})
	told := func(share string) func(ddblocal.ProxiedCall) bool {
		return func(c ddblocal.ProxiedCall) bool {
			return c.Op == "UpdateItem" && c.Has(`"th`+share+`_deliveries_`) && c.Has("REMOVE ")
		}
	}
	proxy.Inject(ddblocal.MatchOp("UpdateItem", `"found_th80_deliveries_`, "if_not_exists("), ddblocal.LoseAnswer, 1)
	proxy.Inject(told("80"), ddblocal.FailCall, 3)
	proxy.Inject(told("100"), ddblocal.LoseAnswer, 1)
	test := request{method: "POST", path: "/api/v1/webhooks/" + d.endpoint.ID + "/test", key: d.writeKey}
	for range 3 {
		expect(t, d.do(test), 202)
	}
	d.received(t, 3)
	if told := d.thresholdsLogged(t); len(told) != 0 {
		t.Fatalf("at 60%% of the deliveries, told %v", told)
	}
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range statuses {
		wg.Go(func() { statuses[i] = d.do(test).Status })
	}
	wg.Wait()
	if !slices.Equal(statuses, []int{202, 202}) {
		t.Fatalf("the racing test events answered %v", statuses)
	}
	got := d.thresholdsReceived(t, 2)
	d.wantBothSharesOnce(t)
	period := quota.PeriodOf(time.Now()).String()
	for _, data := range got {
		share, used := data["threshold"], data["used"]
		// 80% is told with the usage its first finder saw: the 4th
		// attempt's, or the 5th's where it was admitted first.
		if data["kind"] != "deliveries" || data["limit"] != float64(5) || data["period"] != period ||
			!(share == float64(100) && used == float64(5) || share == float64(80) && (used == float64(4) || used == float64(5))) {
			t.Errorf("a deliveries threshold's data: %v", data)
		}
	}
	expect(t, d.do(test), 429)
	if told := d.thresholdsLogged(t); len(told) != 2 {
		t.Fatalf("after a refusal, told %d usage.threshold events, want 2", len(told))
	}
	if used, limit := meter(t, d.do(request{method: "GET", path: app.UsagePath, key: d.readKey}), "deliveries"); used != 5 || limit != 5 {
		t.Errorf("deliveries %d of %d, want 5 of 5: the thresholds' attempts are not counted", used, limit)
	}
}
