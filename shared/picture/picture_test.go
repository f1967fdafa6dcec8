package picture_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"contentapi/shared/images"
	"contentapi/shared/picture"
)

func TestModelSize(t *testing.T) {
	testCases := []struct{ in, want int }{
		{256, 320}, {512, 512}, {1024, 1024}, {1, 320}, {320, 320}, {321, 336},
		{1000, 1008}, {4096, 4096}, {5000, 4096},
	}
	for _, tc := range testCases {
		w, h := picture.ModelSize(tc.in, tc.in)
		if w != tc.want || h != tc.want {
			t.Errorf("ModelSize(%d) = %dx%d, want %d", tc.in, w, h, tc.want)
		}
		if w%picture.Step != 0 || w < tc.in && tc.in <= picture.MaxSide {
			t.Errorf("ModelSize(%d) = %d: not a step, or would enlarge", tc.in, w)
		}
	}
}

func TestEveryResolutionParses(t *testing.T) {
	for _, r := range images.Resolutions {
		w, h, err := picture.ParseResolution(r)
		if err != nil || w == 0 || w != h {
			t.Errorf("ParseResolution(%q) = %d, %d, %v", r, w, h, err)
		}
	}
	for _, bad := range []string{"", "512", "512x", "x512", "0x0", "-1x5", "5000x5000", "axb"} {
		if _, _, err := picture.ParseResolution(bad); err == nil {
			t.Errorf("ParseResolution(%q) succeeded", bad)
		}
	}
}

func TestFilters(t *testing.T) {
	testCases := []struct {
		filter string
		in     color.NRGBA
		want   color.NRGBA
	}{
		{"", color.NRGBA{200, 100, 50, 128}, color.NRGBA{200, 100, 50, 128}},
		// BT.601 luma, rounded: 0.299*200 + 0.587*100 + 0.114*50 = 124.2.
		{picture.Grayscale, color.NRGBA{200, 100, 50, 128}, color.NRGBA{124, 124, 124, 128}},
		{picture.Grayscale, color.NRGBA{255, 0, 0, 255}, color.NRGBA{76, 76, 76, 255}},
		{picture.Grayscale, color.NRGBA{0, 255, 0, 255}, color.NRGBA{150, 150, 150, 255}},
		{picture.Grayscale, color.NRGBA{0, 0, 255, 255}, color.NRGBA{29, 29, 29, 255}},
		{picture.Grayscale, color.NRGBA{255, 255, 255, 0}, color.NRGBA{255, 255, 255, 0}},
		// Sepia: 164.95, 146.8, 114.35.
		{picture.Sepia, color.NRGBA{200, 100, 50, 128}, color.NRGBA{165, 147, 114, 128}},
		// White clamps red and green; blue is 0.937*255 = 238.9.
		{picture.Sepia, color.NRGBA{255, 255, 255, 255}, color.NRGBA{255, 255, 239, 255}},
		{picture.Sepia, color.NRGBA{0, 0, 0, 255}, color.NRGBA{0, 0, 0, 255}},
		{picture.Invert, color.NRGBA{200, 100, 50, 128}, color.NRGBA{55, 155, 205, 128}},
		{picture.Invert, color.NRGBA{0, 255, 7, 255}, color.NRGBA{255, 0, 248, 255}},
	}
	for _, tc := range testCases {
		t.Run(tc.filter, func(t *testing.T) {
			img := image.NewNRGBA(image.Rect(0, 0, 3, 2))
			for y := range 2 {
				for x := range 3 {
					img.SetNRGBA(x, y, tc.in)
				}
			}
			if err := picture.Apply(img, tc.filter); err != nil {
				t.Fatal(err)
			}
			for y := range 2 {
				for x := range 3 {
					if got := img.NRGBAAt(x, y); got != tc.want {
						t.Fatalf("%s(%v) at %d,%d = %v, want %v", tc.filter, tc.in, x, y, got, tc.want)
					}
				}
			}
		})
	}
	if err := picture.Apply(image.NewNRGBA(image.Rect(0, 0, 1, 1)), "oil"); !errors.Is(err, picture.ErrFilter) {
		t.Fatalf("unknown filter: %v", err)
	}
}

// halves is a PNG whose left half is left and right half right.
func halves(t *testing.T, w, h int, left, right color.NRGBA) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := left
			if x >= w/2 {
				c = right
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRender(t *testing.T) {
	red, blue := color.NRGBA{255, 0, 0, 255}, color.NRGBA{0, 0, 255, 255}
	testCases := []struct {
		name          string
		src           []byte
		width, height int
		filter        string
		left, right   color.NRGBA
	}{
		// 256x256 is drawn at 320x320 and shrunk.
		{"shrunk, inverted", halves(t, 320, 320, red, blue), 256, 256, picture.Invert,
			color.NRGBA{0, 255, 255, 255}, color.NRGBA{255, 255, 0, 255}},
		{"shrunk from a larger model size, grayscale", halves(t, 1024, 1024, red, blue), 512, 512, picture.Grayscale,
			color.NRGBA{76, 76, 76, 255}, color.NRGBA{29, 29, 29, 255}},
		{"same size, no filter", halves(t, 1024, 1024, red, blue), 1024, 1024, "", red, blue},
		{"same size, translucent, sepia", halves(t, 320, 320, color.NRGBA{200, 100, 50, 128}, color.NRGBA{0, 0, 0, 0}), 320, 320, picture.Sepia,
			color.NRGBA{165, 147, 114, 128}, color.NRGBA{0, 0, 0, 0}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := picture.Render(tc.src, tc.width, tc.height, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("output is not a PNG: %v", err)
			}
			if b := img.Bounds(); b.Dx() != tc.width || b.Dy() != tc.height {
				t.Fatalf("size = %dx%d, want %dx%d", b.Dx(), b.Dy(), tc.width, tc.height)
			}
			// Well inside each half, away from the seam the kernel blends.
			for _, p := range []struct {
				x    int
				want color.NRGBA
			}{{tc.width / 8, tc.left}, {tc.width - tc.width/8, tc.right}} {
				got := color.NRGBAModel.Convert(img.At(p.x, tc.height/2)).(color.NRGBA)
				if got != p.want {
					t.Errorf("pixel at x=%d = %v, want %v", p.x, got, p.want)
				}
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, image.NewRGBA(image.Rect(0, 0, 8, 8)), nil); err != nil {
		t.Fatal(err)
	}
	var huge bytes.Buffer
	if err := png.Encode(&huge, image.NewGray(image.Rect(0, 0, picture.MaxSide+1, 1))); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"empty": nil, "text": []byte("not a picture"), "jpeg": jpg.Bytes(), "too wide": huge.Bytes()} {
		if _, err := picture.Render(data, 256, 256, ""); err == nil {
			t.Errorf("%s: Render succeeded", name)
		}
	}
}
