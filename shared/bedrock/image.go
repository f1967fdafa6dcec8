package bedrock

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"contentapi/shared/generation"
)

// family is the InvokeModel request and response shape of a group of image
// models.
type family struct {
	maxPrompt int
	request   func(generation.ImageRequest) ([]byte, error)
	response  func([]byte) ([]byte, error)
}

// familyOf picks the shape by model id, geography prefix ("us.") aside.
// Amazon's image models (Nova Canvas, Titan Image Generator) share one
// shape, which is also the default; Stability AI's have theirs.
func familyOf(model string) family {
	if strings.HasPrefix(model, "stability.") || strings.Contains(model, ".stability.") {
		return stability
	}
	if strings.Contains(model, "titan-image") {
		f := canvas
		f.maxPrompt = 512
		return f
	}
	return canvas
}

// canvas is Amazon Nova Canvas's text-to-image shape (Titan Image
// Generator's too).
var canvas = family{
	maxPrompt: 1024,
	request: func(r generation.ImageRequest) ([]byte, error) {
		type params struct {
			Text         string `json:"text"`
			NegativeText string `json:"negativeText,omitempty"`
		}
		type config struct {
			Width          int     `json:"width"`
			Height         int     `json:"height"`
			NumberOfImages int     `json:"numberOfImages"`
			Seed           uint32  `json:"seed"`
			Quality        string  `json:"quality"`
			CfgScale       float64 `json:"cfgScale"`
		}
		return json.Marshal(struct {
			TaskType              string `json:"taskType"`
			TextToImageParams     params `json:"textToImageParams"`
			ImageGenerationConfig config `json:"imageGenerationConfig"`
		}{
			TaskType:              "TEXT_IMAGE",
			TextToImageParams:     params{Text: r.Prompt, NegativeText: r.Negative},
			ImageGenerationConfig: config{Width: r.Width, Height: r.Height, NumberOfImages: 1, Seed: r.Seed, Quality: "standard", CfgScale: 6.5},
		})
	},
	response: func(body []byte) ([]byte, error) {
		var out struct {
			Images []string `json:"images"`
			Error  string   `json:"error"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			return nil, generation.Wrap(generation.Internal, fmt.Errorf("bedrock: image response: %w", err))
		}
		if out.Error != "" {
			if filtered(out.Error) {
				return nil, generation.Wrap(generation.ContentFiltered, errors.New(out.Error))
			}
			return nil, generation.Wrap(generation.Internal, fmt.Errorf("bedrock: image model: %s", out.Error))
		}
		return first(out.Images)
	},
}

// stability is Stability AI's text-to-image shape (Stable Image Core and
// Ultra, Stable Diffusion 3.5): an aspect ratio rather than a size.
var stability = family{
	maxPrompt: 10000,
	request: func(r generation.ImageRequest) ([]byte, error) {
		return json.Marshal(struct {
			Prompt         string `json:"prompt"`
			NegativePrompt string `json:"negative_prompt,omitempty"`
			AspectRatio    string `json:"aspect_ratio"`
			OutputFormat   string `json:"output_format"`
			Seed           uint32 `json:"seed"`
		}{r.Prompt, r.Negative, aspectRatio(r.Width, r.Height), "png", r.Seed})
	},
	response: func(body []byte) ([]byte, error) {
		var out struct {
			Images        []string  `json:"images"`
			FinishReasons []*string `json:"finish_reasons"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			return nil, generation.Wrap(generation.Internal, fmt.Errorf("bedrock: image response: %w", err))
		}
		for _, reason := range out.FinishReasons {
			switch {
			case reason == nil:
			case strings.HasPrefix(*reason, "Filter reason"):
				return nil, generation.Wrap(generation.ContentFiltered, errors.New(*reason))
			default:
				return nil, generation.Wrap(generation.ModelUnavailable, fmt.Errorf("bedrock: image model: %s", *reason))
			}
		}
		return first(out.Images)
	},
}

// stabilityRatios are the aspect ratios Stability's models take.
var stabilityRatios = []string{"1:1", "16:9", "21:9", "2:3", "3:2", "4:5", "5:4", "9:16", "9:21"}

// aspectRatio is the ratio nearest width:height.
func aspectRatio(width, height int) string {
	want := math.Log(float64(width) / float64(height))
	best, bestDiff := stabilityRatios[0], math.Inf(1)
	for _, r := range stabilityRatios {
		var w, h float64
		fmt.Sscanf(r, "%g:%g", &w, &h)
		if d := math.Abs(math.Log(w/h) - want); d < bestDiff {
			best, bestDiff = r, d
		}
	}
	return best
}

func first(images []string) ([]byte, error) {
	if len(images) == 0 {
		return nil, generation.Wrap(generation.Internal, errors.New("bedrock: the image model returned no image"))
	}
	img, err := base64.StdEncoding.DecodeString(images[0])
	if err != nil {
		return nil, generation.Wrap(generation.Internal, fmt.Errorf("bedrock: image: %w", err))
	}
	return img, nil
}

// filtered reports whether a model's message says its content filters
// (Bedrock's responsible-AI checks, a guardrail) stopped the request or
// its result.
func filtered(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"content filter", "blocked by", "moderation", "responsible ai", "guardrail"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// clip shortens a prompt to the family's limit, in characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
