package generation

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// USD is an amount of money in nano-dollars (10^-9 dollars). Whole numbers
// keep every sum exact: a Nova Micro token costs 35 of them, and a year
// of any account's spend fits an int64 many times over.
type USD int64

// nanoPerDollar is how many nano-dollars make a dollar.
const nanoPerDollar = 1_000_000_000

// Dollars is n whole dollars.
func Dollars(n int64) USD { return USD(n * nanoPerDollar) }

// ParseUSD reads an amount in dollars written as a decimal ("0.035"), to
// at most 9 decimals.
func ParseUSD(s string) (USD, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 9 || strings.ContainsAny(s, "+-eE") {
		return 0, fmt.Errorf("%q is not an amount in dollars: want a decimal such as 0.035, at most 9 decimals", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > 9_000_000_000 {
		return 0, fmt.Errorf("%q is not an amount in dollars: want a decimal such as 0.035, at most 9 decimals", s)
	}
	var f int64
	if frac != "" {
		if f, err = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64); err != nil {
			return 0, fmt.Errorf("%q is not an amount in dollars: want a decimal such as 0.035, at most 9 decimals", s)
		}
	}
	return USD(w*nanoPerDollar + f), nil
}

// Decimal is the amount in dollars with all nine decimals
// ("0.000015750"), as the API shows it.
func (u USD) Decimal() string {
	sign := ""
	if u < 0 {
		sign, u = "-", -u
	}
	return fmt.Sprintf("%s%d.%09d", sign, int64(u)/nanoPerDollar, int64(u)%nanoPerDollar)
}

// Dollars is the amount in dollars, as a float: for metrics, never for
// sums.
func (u USD) Dollars() float64 { return float64(u) / nanoPerDollar }

// String is the amount as prices are written: "$0.035", no trailing zeros.
func (u USD) String() string {
	d := strings.TrimRight(u.Decimal(), "0")
	return "$" + strings.TrimSuffix(d, ".")
}

// MarshalJSON is the amount as a JSON number of dollars, to the
// nano-dollar (nine decimals).
func (u USD) MarshalJSON() ([]byte, error) { return []byte(u.Decimal()), nil }

// UnmarshalJSON reads an amount written by MarshalJSON.
func (u *USD) UnmarshalJSON(b []byte) error {
	v, err := ParseUSD(string(b))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// perMillion is price's share of n units priced per million: rounded up to
// the nano-dollar, so that a cost is never under what AWS bills.
func perMillion(price USD, n int64) USD {
	if n <= 0 || price <= 0 {
		return 0
	}
	return USD((int64(price)*n + 999_999) / 1_000_000)
}

// Price is what one model's calls cost, in AWS's list prices for the
// region the models are called in.
type Price struct {
	// Model is the foundation model's id, without an inference profile's
	// prefix (a geographic profile's calls cost the model's own price).
	Model string `json:"model"`
	// Name is the model as AWS's pricing page names it.
	Name string `json:"name,omitempty"`
	// InputTokens and OutputTokens are the on-demand price per million
	// tokens of a text model; BatchInputTokens and BatchOutputTokens the
	// batch inference price, 0 where the model has none.
	InputTokens       USD `json:"input_tokens,omitempty"`
	OutputTokens      USD `json:"output_tokens,omitempty"`
	BatchInputTokens  USD `json:"batch_input_tokens,omitempty"`
	BatchOutputTokens USD `json:"batch_output_tokens,omitempty"`
	// Pictures are an image model's prices per picture, by size: the first
	// whose MaxPixels holds the picture drawn prices it.
	Pictures []PicturePrice `json:"pictures,omitempty"`
	// Embeddings is an embedding model's price per million input tokens.
	Embeddings USD `json:"embeddings,omitempty"`
	// Taken is the day the price was read (YYYY-MM-DD), and Note what is
	// not confirmed of it, where something is not.
	Taken string `json:"taken"`
	Note  string `json:"note,omitempty"`
}

// PicturePrice is the price of a picture of at most MaxPixels (width ×
// height, as drawn); 0 is any size.
type PicturePrice struct {
	MaxPixels int `json:"max_pixels,omitempty"`
	Price     USD `json:"price"`
}

// Text is what a text call that read in and wrote out tokens costs on
// demand.
func (p Price) Text(in, out int64) USD {
	return perMillion(p.InputTokens, in) + perMillion(p.OutputTokens, out)
}

// Picture is what a picture drawn at width × height costs: the first size
// that holds it, else the largest (a model that draws a size the
// declaration misses is priced at its dearest, never under).
func (p Price) Picture(width, height int) USD {
	var dearest USD
	for _, pp := range p.Pictures {
		if pp.MaxPixels == 0 || width*height <= pp.MaxPixels {
			return pp.Price
		}
		dearest = max(dearest, pp.Price)
	}
	return dearest
}

// DefaultPrices are AWS's on-demand list prices of the template's default
// models (TextModel, ImageModel), in its Bedrock region (us-west-2), each
// with the day it was read from the Bedrock pricing page
// (https://aws.amazon.com/bedrock/pricing/). A deployment that calls other
// models, or pays other prices, declares them in ModelPrices (Prices.With).
// docs/generation.md's cost table is written from them (make generate).
var DefaultPrices = Prices{
	{
		Model: "amazon.nova-micro-v1:0", Name: "Nova Micro",
		InputTokens: 35_000_000, OutputTokens: 140_000_000, // $0.035 and $0.14 per million
		BatchInputTokens: 17_500_000, BatchOutputTokens: 70_000_000,
		Taken: "2026-11-23",
		Note:  "batch prices are half the on-demand ones, as AWS discounts batch inference; not read from AWS's page itself",
	},
	{
		Model: "stability.stable-image-core-v1:1", Name: "Stable Image Core",
		Pictures: []PicturePrice{{Price: 40_000_000}}, // $0.04 whatever the size
		Taken:    "2026-11-23",
	},
}

// Prices are the prices of the models a deployment calls, by model.
type Prices []Price

// profilePrefixes are the inference profiles' prefixes of a model id
// (us.amazon.nova-micro-v1:0).
var profilePrefixes = []string{"us.", "eu.", "apac.", "global.", "us-gov.", "jp.", "au.", "ca."}

// Of is the price of model, an id as called (a model's, or an inference
// profile's: its prefix is dropped); false when none is declared.
func (ps Prices) Of(model string) (Price, bool) {
	for _, prefix := range profilePrefixes {
		if rest, ok := strings.CutPrefix(model, prefix); ok && strings.Contains(rest, ".") {
			model = rest
			break
		}
	}
	for _, p := range ps {
		if p.Model == model {
			return p, true
		}
	}
	return Price{}, false
}

// With is ps with the prices of a deployment's declaration: a JSON list of
// Price, each replacing the declared price of its model or adding one
// ("" adds nothing). A price must name its model and the day it was taken.
func (ps Prices) With(declared string) (Prices, error) {
	if strings.TrimSpace(declared) == "" {
		return ps, nil
	}
	var more Prices
	dec := json.NewDecoder(strings.NewReader(declared))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&more); err != nil {
		return nil, fmt.Errorf("the model prices are not a JSON list of prices: %w", err)
	}
	out := append(Prices(nil), ps...)
	for _, p := range more {
		if p.Model == "" || p.Taken == "" {
			return nil, errors.New("each model price names its model and the day it was taken (taken: YYYY-MM-DD)")
		}
		if i := indexOf(out, p.Model); i >= 0 {
			out[i] = p
		} else {
			out = append(out, p)
		}
	}
	return out, nil
}

func indexOf(ps Prices, model string) int {
	for i, p := range ps {
		if p.Model == model {
			return i
		}
	}
	return -1
}
