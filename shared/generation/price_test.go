package generation_test

import (
	"encoding/json"
	"testing"

	"contentapi/shared/generation"
)

func TestUSDIsExactInNanoDollars(t *testing.T) {
	for s, want := range map[string]generation.USD{"0.035": 35_000_000, "0.04": 40_000_000, "1": 1_000_000_000, "0.000000001": 1, "12.5": 12_500_000_000} {
		got, err := generation.ParseUSD(s)
		if err != nil || got != want {
			t.Errorf("ParseUSD(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, bad := range []string{"", ".5", "-1", "1e3", "0.0000000001", "abc", "1.2.3"} {
		if _, err := generation.ParseUSD(bad); err == nil {
			t.Errorf("ParseUSD(%q) took it", bad)
		}
	}
	b, _ := json.Marshal(struct{ C generation.USD }{15_750})
	if string(b) != `{"C":0.000015750}` {
		t.Errorf("15,750 nano-dollars marshal as %s", b)
	}
	if s := generation.USD(17_500_000).String(); s != "$0.0175" {
		t.Errorf("String() = %s", s)
	}
}

func TestPricesOfTheDefaultModels(t *testing.T) {
	text, ok := generation.DefaultPrices.Of("us.amazon.nova-micro-v1:0")
	if !ok {
		t.Fatal("the default text model, called through its profile, has no price")
	}
	// 450 tokens in at $0.035 per million, 1,300 out at $0.14: $0.00001575 + $0.000182.
	if got := text.Text(450, 1300); got != 15_750+182_000 {
		t.Errorf("a blog post costs %s", got)
	}
	// Rounded up to the nano-dollar, never under what AWS bills.
	if got := (generation.Price{InputTokens: 1_500}).Text(1, 0); got != 1 {
		t.Errorf("one token at $0.0000015 per million costs %d nano-dollars, want 1", got)
	}
	image, ok := generation.DefaultPrices.Of("stability.stable-image-core-v1:1")
	if !ok || image.Picture(1024, 1024) != 40_000_000 || image.Picture(1536, 640) != 40_000_000 {
		t.Errorf("a Stable Image Core picture costs %s (%v)", image.Picture(1024, 1024), ok)
	}
	for _, p := range generation.DefaultPrices {
		if p.Taken == "" {
			t.Errorf("%s's price says not when it was taken", p.Model)
		}
	}
	if _, ok := generation.DefaultPrices.Of("us.amazon.nova-lite-v1:0"); ok {
		t.Error("a model not declared has a price")
	}
}

func TestPricesWithADeploymentsOwn(t *testing.T) {
	ps, err := generation.DefaultPrices.With(`[{"model": "amazon.nova-micro-v1:0", "input_tokens": 0.04, "output_tokens": 0.16, "taken": "2026-11-28"},
		{"model": "amazon.nova-canvas-v1:0", "pictures": [{"max_pixels": 1048576, "price": 0.04}, {"price": 0.06}], "taken": "2026-11-28"}]`)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := ps.Of("amazon.nova-micro-v1:0"); p.Text(1_000_000, 0) != 40_000_000 {
		t.Errorf("the deployment's price did not replace the declared one: %+v", p)
	}
	canvas, ok := ps.Of("us.amazon.nova-canvas-v1:0")
	if !ok || canvas.Picture(1024, 1024) != 40_000_000 || canvas.Picture(2048, 1024) != 60_000_000 {
		t.Errorf("the added model prices a picture at %s and %s", canvas.Picture(1024, 1024), canvas.Picture(2048, 1024))
	}
	if _, ok := ps.Of("stability.stable-image-core-v1:1"); !ok {
		t.Error("a declared price the deployment left alone is gone")
	}
	if p, _ := generation.DefaultPrices.Of("amazon.nova-micro-v1:0"); p.InputTokens != 35_000_000 {
		t.Error("With changed the declaration itself")
	}
	for _, bad := range []string{`{}`, `[{"model": "m.x", "input_tokens": 0.1}]`, `[{"model": "m.x", "taken": "2026-11-28", "per_token": 1}]`,
		`[{"model": "m.x", "taken": "2026-11-28", "input_tokens": "0.1"}]`, `[{"model": "m.x", "taken": "2026-11-28", "input_tokens": -1}]`} {
		if _, err := generation.DefaultPrices.With(bad); err == nil {
			t.Errorf("With(%s) took it", bad)
		}
	}
}
