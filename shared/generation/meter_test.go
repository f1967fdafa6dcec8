package generation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"contentapi/shared/generation"
)

// textModel is a fake model for the meter's unit test: it answers with the
// tokens given, and err.
type textModel struct {
	in, out int64
	err     error
}

func (m textModel) Text(context.Context, generation.TextRequest) (generation.TextResult, error) {
	if m.in == 0 && m.out == 0 {
		return generation.TextResult{}, m.err
	}
	return generation.TextResult{Model: "us.amazon.nova-micro-v1:0", InputTokens: m.in, OutputTokens: m.out}, m.err
}

type imageModel struct{ model string }

func (m imageModel) Image(context.Context, generation.ImageRequest) (generation.ImageResult, error) {
	return generation.ImageResult{Model: m.model}, nil
}

func TestMeterPricesEveryCallThatReachedTheModel(t *testing.T) {
	ctx := context.Background()
	m := &generation.Meter{Prices: generation.DefaultPrices}
	models := m.Models(generation.Models{Text: textModel{in: 1000, out: 1000}})
	for range 3 { // three variants
		if _, err := models.Text.Text(ctx, generation.TextRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if want := 3 * (35_000 + 140_000); m.Cost() != generation.USD(want) {
		t.Errorf("three variants cost %d nano-dollars, want %d", m.Cost(), want)
	}
	filtered := generation.NewError(generation.ContentFiltered)
	m = &generation.Meter{Prices: generation.DefaultPrices}
	_, err := m.Models(generation.Models{Text: textModel{in: 1000, err: filtered}}).Text.Text(ctx, generation.TextRequest{})
	if !errors.Is(err, filtered) || m.Cost() != 35_000 {
		t.Errorf("an answer the filters stopped costs %d (%v), want its input tokens' 35,000", m.Cost(), err)
	}
	m = &generation.Meter{Prices: generation.DefaultPrices}
	_, _ = m.Models(generation.Models{Text: textModel{err: generation.NewError(generation.Throttled)}}).Text.Text(ctx, generation.TextRequest{})
	if m.Cost() != 0 {
		t.Errorf("a throttled call costs %d", m.Cost())
	}
	m = &generation.Meter{Prices: generation.DefaultPrices}
	pictures := m.Models(generation.Models{Image: imageModel{"stability.stable-image-core-v1:1"}})
	_, _ = pictures.Image.Image(ctx, generation.ImageRequest{Width: 1024, Height: 1024})
	if m.Cost() != 40_000_000 || m.Unpriced() != "" {
		t.Errorf("a picture costs %d", m.Cost())
	}
	m = &generation.Meter{Prices: generation.DefaultPrices}
	_, _ = m.Models(generation.Models{Image: imageModel{"amazon.titan-image-generator-v2:0"}}).Image.Image(ctx, generation.ImageRequest{})
	if m.Unpriced() != "amazon.titan-image-generator-v2:0" || m.Cost() != 0 {
		t.Errorf("a model without a price: unpriced %q, cost %d", m.Unpriced(), m.Cost())
	}
}

func TestStateSpendAddsEachTrysCost(t *testing.T) {
	s := generation.Request("m", time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)).Spend(100).Requeue(true).Spend(50)
	if s.CostUSD != 150 {
		t.Errorf("two tries cost %d", s.CostUSD)
	}
	if s = s.Spend(-5); s.CostUSD != 150 {
		t.Errorf("a negative spend took %d off", 150-s.CostUSD)
	}
}
