package generation

import (
	"context"
	"sync"
)

// Meter prices a generation's calls of the models as they are made: every
// call that reached the model and came back with what it used (a text
// model's tokens, including those of an answer its content filters
// stopped; a picture drawn), whatever became of the generation after.
// A call that never reached the model (throttled, unreachable) costs
// nothing, as AWS bills it. A model without a declared price costs 0 and
// is named by Unpriced.
type Meter struct {
	Prices Prices

	mu       sync.Mutex
	cost     USD
	unpriced string
}

// Models are ms with their calls priced on the meter.
func (m *Meter) Models(ms Models) Models {
	if ms.Text != nil {
		ms.Text = meteredText{ms.Text, m}
	}
	if ms.Image != nil {
		ms.Image = meteredImage{ms.Image, m}
	}
	return ms
}

// Cost is what the calls priced so far cost.
func (m *Meter) Cost() USD {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cost
}

// Unpriced names a model called without a declared price ("" for none).
func (m *Meter) Unpriced() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unpriced
}

func (m *Meter) add(model string, cost func(Price) USD) {
	p, ok := m.Prices.Of(model)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !ok {
		m.unpriced = model
		return
	}
	m.cost += cost(p)
}

type meteredText struct {
	TextModel
	m *Meter
}

func (t meteredText) Text(ctx context.Context, req TextRequest) (TextResult, error) {
	res, err := t.TextModel.Text(ctx, req)
	if res.InputTokens > 0 || res.OutputTokens > 0 {
		t.m.add(res.Model, func(p Price) USD { return p.Text(res.InputTokens, res.OutputTokens) })
	}
	return res, err
}

type meteredImage struct {
	ImageModel
	m *Meter
}

func (i meteredImage) Image(ctx context.Context, req ImageRequest) (ImageResult, error) {
	res, err := i.ImageModel.Image(ctx, req)
	if err == nil {
		i.m.add(res.Model, func(p Price) USD { return p.Picture(req.Width, req.Height) })
	}
	return res, err
}
