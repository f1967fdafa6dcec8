package bedrockstandin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// invoke answers InvokeModel for the image shapes, Amazon's (taskType
// TEXT_IMAGE) and Stability AI's (a prompt and an aspect ratio), and for
// Titan Text Embeddings V2's (inputText).
func (s *Server) invoke(ctx context.Context, w http.ResponseWriter, model string, body []byte) {
	var probe struct {
		TaskType  *string `json:"taskType"`
		InputText *string `json:"inputText"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		sendError(w, http.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again.")
		return
	}
	if probe.InputText != nil {
		s.embed(ctx, w, model, body)
		return
	}
	if probe.TaskType != nil {
		s.canvas(ctx, w, model, body)
		return
	}
	s.stability(ctx, w, model, body)
}

func (s *Server) canvas(ctx context.Context, w http.ResponseWriter, model string, body []byte) {
	var req struct {
		TaskType          string `json:"taskType"`
		TextToImageParams struct {
			Text         string `json:"text"`
			NegativeText string `json:"negativeText"`
		} `json:"textToImageParams"`
		ImageGenerationConfig struct {
			Width          int    `json:"width"`
			Height         int    `json:"height"`
			NumberOfImages int    `json:"numberOfImages"`
			Seed           uint32 `json:"seed"`
		} `json:"imageGenerationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		sendError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: "+err.Error())
		return
	}
	cfg := req.ImageGenerationConfig
	text := req.TextToImageParams.Text
	side := func(n int) bool { return n >= 320 && n <= 4096 && n%16 == 0 }
	chars := utf8.RuneCountInString(text)
	switch {
	case req.TaskType != "TEXT_IMAGE":
		sendError(w, http.StatusBadRequest, "ValidationException", "The stand-in draws TEXT_IMAGE tasks only.")
		return
	case chars < 1 || chars > 1024:
		sendError(w, http.StatusBadRequest, "ValidationException", "textToImageParams.text must be 1 to 1024 characters.")
		return
	case utf8.RuneCountInString(req.TextToImageParams.NegativeText) > 1024:
		sendError(w, http.StatusBadRequest, "ValidationException", "textToImageParams.negativeText must be 1 to 1024 characters.")
		return
	case !side(cfg.Width) || !side(cfg.Height) || cfg.Width*cfg.Height > 4_194_304:
		sendError(w, http.StatusBadRequest, "ValidationException",
			fmt.Sprintf("%dx%d is not a supported size: sides are 320 to 4096 pixels in steps of 16.", cfg.Width, cfg.Height))
		return
	case cfg.NumberOfImages < 0 || cfg.NumberOfImages > 5 || cfg.Seed > 858_993_459:
		sendError(w, http.StatusBadRequest, "ValidationException", "numberOfImages must be 1 to 5 and seed 0 to 858993459.")
		return
	}
	f := s.next(Request{Model: model, Image: text, Negative: req.TextToImageParams.NegativeText})
	if s.fault(ctx, w, f) {
		return
	}
	if f == BlockedOutput {
		sendError(w, http.StatusBadRequest, "ValidationException", "The generated image has been blocked by our content filters.")
		return
	}
	n := max(cfg.NumberOfImages, 1)
	images := make([]string, n)
	for i := range n {
		images[i] = draw(text, cfg.Seed+uint32(i), cfg.Width, cfg.Height)
	}
	sendJSON(w, map[string]any{"images": images})
}

var ratios = map[string][2]int{"1:1": {1024, 1024}, "16:9": {1344, 768}, "21:9": {1536, 640}, "2:3": {832, 1216},
	"3:2": {1216, 832}, "4:5": {896, 1088}, "5:4": {1088, 896}, "9:16": {768, 1344}, "9:21": {640, 1536}}

func (s *Server) stability(ctx context.Context, w http.ResponseWriter, model string, body []byte) {
	var req struct {
		Prompt         string `json:"prompt"`
		NegativePrompt string `json:"negative_prompt"`
		AspectRatio    string `json:"aspect_ratio"`
		OutputFormat   string `json:"output_format"`
		Seed           uint32 `json:"seed"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		sendError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: "+err.Error())
		return
	}
	if req.AspectRatio == "" {
		req.AspectRatio = "1:1"
	}
	size, ok := ratios[req.AspectRatio]
	switch {
	case req.Prompt == "" || utf8.RuneCountInString(req.Prompt) > 10000:
		sendError(w, http.StatusBadRequest, "ValidationException", "prompt must be 1 to 10000 characters.")
		return
	case !ok:
		sendError(w, http.StatusBadRequest, "ValidationException", "aspect_ratio "+req.AspectRatio+" is not supported.")
		return
	case req.OutputFormat != "png":
		// Stability answers JPEG unless asked; the stand-in draws PNG only.
		sendError(w, http.StatusBadRequest, "ValidationException", "The stand-in answers output_format png only.")
		return
	}
	if utf8.RuneCountInString(req.NegativePrompt) > 10000 {
		sendError(w, http.StatusBadRequest, "ValidationException", "negative_prompt must be at most 10000 characters.")
		return
	}
	f := s.next(Request{Model: model, Image: req.Prompt, Negative: req.NegativePrompt})
	if s.fault(ctx, w, f) {
		return
	}
	if f == BlockedOutput {
		sendJSON(w, map[string]any{"seeds": []uint32{req.Seed}, "finish_reasons": []string{"Filter reason: output image"}, "images": []string{}})
		return
	}
	sendJSON(w, map[string]any{
		"seeds":          []uint32{req.Seed},
		"finish_reasons": []any{nil},
		"images":         []string{draw(req.Prompt, req.Seed, size[0], size[1])},
	})
}

// palettes are colours named in prompts; a prompt naming none gets hues
// from its hash.
var palettes = map[string][]color.NRGBA{
	"red":    {{200, 30, 40, 255}, {240, 90, 80, 255}},
	"orange": {{240, 130, 30, 255}, {255, 180, 90, 255}},
	"yellow": {{245, 210, 50, 255}, {255, 240, 150, 255}},
	"green":  {{40, 150, 70, 255}, {140, 210, 120, 255}},
	"blue":   {{30, 80, 200, 255}, {110, 170, 240, 255}},
	"purple": {{110, 50, 170, 255}, {180, 130, 230, 255}},
	"pink":   {{235, 110, 170, 255}, {250, 190, 215, 255}},
	"gold":   {{200, 160, 40, 255}, {240, 215, 120, 255}},
	"sunset": {{250, 120, 60, 255}, {120, 50, 130, 255}},
	"ocean":  {{20, 90, 150, 255}, {60, 180, 200, 255}},
	"sea":    {{20, 90, 150, 255}, {60, 180, 200, 255}},
	"forest": {{30, 90, 40, 255}, {120, 170, 80, 255}},
	"night":  {{15, 20, 60, 255}, {60, 70, 130, 255}},
	"snow":   {{230, 240, 250, 255}, {170, 190, 215, 255}},
}

// draw is a picture derived from the prompt and seed, as base64 PNG: a
// gradient sky and a scatter of translucent shapes in the prompt's colours.
func draw(prompt string, seed uint32, width, height int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", prompt, seed)
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(seed)))
	lower := strings.ToLower(prompt)

	var colours []color.NRGBA
	names := make([]string, 0, len(palettes))
	for name := range palettes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if strings.Contains(lower, name) {
			colours = append(colours, palettes[name]...)
		}
	}
	for len(colours) < 4 {
		colours = append(colours, hue(rng.Float64()*360, 0.45+rng.Float64()*0.4, 0.35+rng.Float64()*0.45))
	}

	// Pixel art is drawn small and enlarged, so it is blocky.
	scale := 1
	if strings.Contains(lower, "pixel") {
		scale = 16
	}
	img := image.NewNRGBA(image.Rect(0, 0, (width+scale-1)/scale, (height+scale-1)/scale))
	w, hgt := img.Rect.Dx(), img.Rect.Dy()
	top, bottom := colours[0], colours[1]
	for y := range hgt {
		c := mix(top, bottom, float64(y)/float64(max(hgt-1, 1)))
		row := img.Pix[y*img.Stride : y*img.Stride+w*4]
		for i := 0; i < len(row); i += 4 {
			row[i], row[i+1], row[i+2], row[i+3] = c.R, c.G, c.B, c.A
		}
	}
	for range 6 + rng.IntN(8) {
		c := colours[rng.IntN(len(colours))]
		c.A = uint8(140 + rng.IntN(100))
		cx, cy := rng.IntN(w), rng.IntN(hgt)
		r := (w + hgt) / (6 + rng.IntN(10))
		if rng.IntN(2) == 0 {
			fill(img, cx-r, cy-r, cx+r, cy+r, c, func(x, y int) bool { return (x-cx)*(x-cx)+(y-cy)*(y-cy) <= r*r })
		} else {
			rw, rh := r+rng.IntN(r+1), r/2+rng.IntN(r+1)
			fill(img, cx-rw, cy-rh, cx+rw, cy+rh, c, func(int, int) bool { return true })
		}
	}
	out := img
	if scale > 1 {
		out = image.NewNRGBA(image.Rect(0, 0, width, height))
		for y := range height {
			for x := range width {
				copy(out.Pix[y*out.Stride+x*4:y*out.Stride+x*4+4], img.Pix[y/scale*img.Stride+x/scale*4:])
			}
		}
	}
	var buf bytes.Buffer
	// Fast rather than small: these pictures travel on the loopback only.
	(&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, out)
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// fill blends c over the pixels of the box that in reports.
func fill(img *image.NRGBA, x0, y0, x1, y1 int, c color.NRGBA, in func(x, y int) bool) {
	b := img.Rect.Intersect(image.Rect(x0, y0, x1+1, y1+1))
	// Integer blending: a is the weight of c out of 256.
	a := uint32(c.A) + 1
	blend := func(p *uint8, v uint8) { *p = uint8((uint32(*p)*(256-a) + uint32(v)*a) >> 8) }
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if in(x, y) {
				i := img.PixOffset(x, y)
				blend(&img.Pix[i], c.R)
				blend(&img.Pix[i+1], c.G)
				blend(&img.Pix[i+2], c.B)
			}
		}
	}
}

func mix(a, b color.NRGBA, t float64) color.NRGBA {
	l := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*(1-t) + float64(y)*t)) }
	return color.NRGBA{l(a.R, b.R), l(a.G, b.G), l(a.B, b.B), 255}
}

// hue is an opaque colour from hue, saturation and lightness.
func hue(h, s, l float64) color.NRGBA {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - c/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g = c, x
	case h < 120:
		r, g = x, c
	case h < 180:
		g, b = c, x
	case h < 240:
		g, b = x, c
	case h < 300:
		r, b = x, c
	default:
		r, b = c, x
	}
	v := func(f float64) uint8 { return uint8(math.Round((f + m) * 255)) }
	return color.NRGBA{v(r), v(g), v(b), 255}
}
