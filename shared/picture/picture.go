// Package picture turns what an image model drew into the picture a record
// shows: it picks a size the model can draw, then decodes the model's PNG,
// scales it to exactly the record's resolution, applies the record's
// filter to the pixels and encodes the PNG that is stored.
package picture

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"math"
	"strconv"
	"strings"

	xdraw "golang.org/x/image/draw"
)

// The sides image models draw (Nova Canvas's rule, which the other models
// of the family share): 320 to 4,096 pixels, in steps of 16.
const (
	MinSide = 320
	MaxSide = 4096
	Step    = 16
)

// The filters of the image resource.
const (
	Grayscale = "grayscale"
	Sepia     = "sepia"
	Invert    = "invert"
)

// ErrFilter is an unknown filter.
var ErrFilter = errors.New("picture: unknown filter")

// ParseResolution reads a resolution such as "512x512".
func ParseResolution(s string) (width, height int, err error) {
	ws, hs, ok := strings.Cut(s, "x")
	w, werr := strconv.Atoi(ws)
	h, herr := strconv.Atoi(hs)
	if !ok || werr != nil || herr != nil || w <= 0 || h <= 0 || w > MaxSide || h > MaxSide {
		return 0, 0, fmt.Errorf("picture: resolution %q is not WIDTHxHEIGHT within %d pixels", s, MaxSide)
	}
	return w, h, nil
}

// ModelSize is the size to have a picture of width x height drawn at: each
// side rounded up to a step and raised to the minimum, so that scaling only
// ever shrinks (a shrunk picture stays sharp; an enlarged one blurs).
func ModelSize(width, height int) (int, int) {
	side := func(n int) int {
		n = (n + Step - 1) / Step * Step
		return min(max(n, MinSide), MaxSide)
	}
	return side(width), side(height)
}

// Render is the whole pipeline: the model's PNG in, the stored PNG out, of
// exactly width x height with the filter ("" for none) applied.
func Render(model []byte, width, height int, filter string) ([]byte, error) {
	img, err := Decode(model)
	if err != nil {
		return nil, err
	}
	out := Scale(img, width, height)
	if err := Apply(out, filter); err != nil {
		return nil, err
	}
	return Encode(out)
}

// Decode reads a PNG, refusing one larger than any model draws before
// spending memory on it.
func Decode(data []byte) (image.Image, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("picture: not a PNG: %w", err)
	}
	if cfg.Width > MaxSide || cfg.Height > MaxSide {
		return nil, fmt.Errorf("picture: %dx%d is larger than %d pixels a side", cfg.Width, cfg.Height, MaxSide)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("picture: %w", err)
	}
	return img, nil
}

// Scale returns img at exactly width x height, as non-premultiplied RGBA so
// that filters work on the colours as they are, alpha apart.
func Scale(img image.Image, width, height int) *image.NRGBA {
	dst := image.NewNRGBA(image.Rect(0, 0, width, height))
	if img.Bounds().Dx() == width && img.Bounds().Dy() == height {
		draw.Draw(dst, dst.Bounds(), img, img.Bounds().Min, draw.Src)
		return dst
	}
	// Catmull-Rom: the sharpest of x/image's kernels when shrinking, which
	// is all this pipeline does.
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, img.Bounds(), xdraw.Src, nil)
	return dst
}

// Apply applies a filter to the pixels in place; alpha is kept.
func Apply(img *image.NRGBA, filter string) error {
	var f func(r, g, b uint8) (uint8, uint8, uint8)
	switch filter {
	case "":
		return nil
	case Grayscale:
		f = gray
	case Sepia:
		f = sepia
	case Invert:
		f = invert
	default:
		return fmt.Errorf("%w %q", ErrFilter, filter)
	}
	for y := 0; y < img.Rect.Dy(); y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+img.Rect.Dx()*4]
		for i := 0; i < len(row); i += 4 {
			row[i], row[i+1], row[i+2] = f(row[i], row[i+1], row[i+2])
		}
	}
	return nil
}

// gray is the luma of ITU-R BT.601, the weights image tools use for
// "grayscale", rounded.
func gray(r, g, b uint8) (uint8, uint8, uint8) {
	y := uint8((299*uint32(r) + 587*uint32(g) + 114*uint32(b) + 500) / 1000)
	return y, y, y
}

// sepia is the standard sepia tone matrix, rounded and clamped to 255.
func sepia(r, g, b uint8) (uint8, uint8, uint8) {
	fr, fg, fb := float64(r), float64(g), float64(b)
	return clamp(0.393*fr + 0.769*fg + 0.189*fb),
		clamp(0.349*fr + 0.686*fg + 0.168*fb),
		clamp(0.272*fr + 0.534*fg + 0.131*fb)
}

func invert(r, g, b uint8) (uint8, uint8, uint8) { return 255 - r, 255 - g, 255 - b }

func clamp(v float64) uint8 { return uint8(math.Min(255, math.Round(v))) }

// Encode writes img as PNG.
func Encode(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("picture: %w", err)
	}
	return buf.Bytes(), nil
}
