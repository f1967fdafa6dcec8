package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"contentapi/shared/bedrock"
	"contentapi/shared/generation"
	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/picture"
	"contentapi/shared/prompts"
)

// This package's client, the SDK's bedrockruntime client inside, against
// the local stand-in of Bedrock Runtime.
func setup(t *testing.T, imageModel string) (*bedrock.Client, *bedrockstandin.Server) {
	t.Helper()
	standin, err := bedrockstandin.Start(bedrockstandin.Options{SlowDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { standin.Close() })
	return client(t, standin.URL(), imageModel), standin
}

func client(t *testing.T, endpoint, imageModel string) *bedrock.Client {
	t.Helper()
	c, err := bedrock.New(bedrock.Config{
		Region: "us-east-1", Endpoint: endpoint,
		TextModel: bedrock.DefaultTextModel, ImageModel: imageModel,
		MaxAttempts: 4, MaxBackoff: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func tweetRequest(t *testing.T, prompt string) generation.TextRequest {
	t.Helper()
	req, err := prompts.Document(33, prompt, 0.75, prompts.Controls{})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestText(t *testing.T) {
	c, standin := setup(t, "amazon.nova-canvas-v1:0")
	req := tweetRequest(t, "Our new espresso machine brews barista-quality coffee at home.")
	res, err := c.Text(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != bedrockstandin.Write(req.System, req.Prompt, 0.75) {
		t.Fatalf("the text did not come through Converse intact: %q", res.Text)
	}
	if res.Model != bedrock.DefaultTextModel || res.InputTokens == 0 || res.OutputTokens == 0 || res.Truncated {
		t.Fatalf("result = %+v", res)
	}
	if n := len([]rune(res.Text)); n > 280 {
		t.Fatalf("a tweet of %d characters", n)
	}
	if standin.Calls() != 1 {
		t.Fatalf("%d calls for one answer", standin.Calls())
	}

	req.MaxTokens = 5
	short, err := c.Text(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !short.Truncated || len([]rune(short.Text)) > 20 {
		t.Fatalf("with 5 tokens: %+v", short)
	}
}

func codeOf(t *testing.T, err error) generation.Code {
	t.Helper()
	var gerr *generation.Error
	if !errors.As(err, &gerr) {
		t.Fatalf("error %v (%T) is not a generation error", err, err)
	}
	// Clients read the code's own message, never the SDK's words.
	if gerr.Message != generation.NewError(gerr.Code).Message || strings.Contains(gerr.Message, "Exception") {
		t.Fatalf("public message %q is not the code's", gerr.Message)
	}
	return gerr.Code
}

func TestErrors(t *testing.T) {
	testCases := []struct {
		name      string
		faults    []bedrockstandin.Fault
		wantCode  generation.Code // "" for success
		wantCalls int
	}{
		{"throttled once, retried", []bedrockstandin.Fault{bedrockstandin.Throttle}, "", 2},
		{"throttled three times, retried", []bedrockstandin.Fault{bedrockstandin.Throttle, bedrockstandin.Throttle, bedrockstandin.Throttle}, "", 4},
		{"throttled past the retries", []bedrockstandin.Fault{bedrockstandin.Throttle, bedrockstandin.Throttle, bedrockstandin.Throttle, bedrockstandin.Throttle}, generation.Throttled, 4},
		{"blocked input", []bedrockstandin.Fault{bedrockstandin.BlockedInput}, generation.ContentFiltered, 1},
		{"blocked output", []bedrockstandin.Fault{bedrockstandin.BlockedOutput}, generation.ContentFiltered, 1},
		{"a 500, retried", []bedrockstandin.Fault{bedrockstandin.ServerError}, "", 2},
		{"500s past the retries", []bedrockstandin.Fault{bedrockstandin.ServerError, bedrockstandin.ServerError, bedrockstandin.ServerError, bedrockstandin.ServerError}, generation.ModelUnavailable, 4},
		{"503s past the retries", []bedrockstandin.Fault{bedrockstandin.Unavailable, bedrockstandin.Unavailable, bedrockstandin.Unavailable, bedrockstandin.Unavailable}, generation.ModelUnavailable, 4},
		{"model still loading, retried", []bedrockstandin.Fault{bedrockstandin.NotReady}, "", 2},
		{"no model access", []bedrockstandin.Fault{bedrockstandin.AccessDenied}, generation.ModelUnavailable, 1},
		{"model timeout", []bedrockstandin.Fault{bedrockstandin.ModelTimeout}, generation.Timeout, 1},
	}
	for _, tc := range testCases {
		for _, op := range []string{"text", "canvas image", "stability image"} {
			t.Run(tc.name+", "+op, func(t *testing.T) {
				imageModel := "amazon.nova-canvas-v1:0"
				if op == "stability image" {
					imageModel = bedrock.DefaultImageModel
				}
				c, standin := setup(t, imageModel)
				standin.Inject(tc.faults...)
				var err error
				if op == "text" {
					_, err = c.Text(context.Background(), tweetRequest(t, "Fresh beans"))
				} else {
					req, _ := prompts.Image("A lighthouse at dusk", "", "", "256x256", generation.NewAttempt())
					_, err = c.Image(context.Background(), req)
				}
				if tc.wantCode == "" {
					if err != nil {
						t.Fatalf("want success, got %v", err)
					}
				} else if got := codeOf(t, err); got != tc.wantCode {
					t.Fatalf("code = %s, want %s (%v)", got, tc.wantCode, err)
				}
				if standin.Calls() != tc.wantCalls {
					t.Fatalf("%d calls, want %d", standin.Calls(), tc.wantCalls)
				}
			})
		}
	}
}

func TestSlowModelTimesOut(t *testing.T) {
	c, standin := setup(t, "amazon.nova-canvas-v1:0")
	standin.Inject(bedrockstandin.Slow)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Text(ctx, tweetRequest(t, "Fresh beans"))
	if got := codeOf(t, err); got != generation.Timeout {
		t.Fatalf("code = %s, want timeout (%v)", got, err)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := client(t, "http://"+addr, "amazon.nova-canvas-v1:0")
	_, err = c.Text(context.Background(), tweetRequest(t, "Fresh beans"))
	if got := codeOf(t, err); got != generation.ModelUnavailable {
		t.Fatalf("code = %s, want model_unavailable (%v)", got, err)
	}
}

func TestModelsMustBeConfigured(t *testing.T) {
	for _, cfg := range []bedrock.Config{{TextModel: "t"}, {ImageModel: "i"}} {
		cfg.Endpoint = "http://127.0.0.1:1"
		if _, err := bedrock.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted a missing model", cfg)
		}
	}
}

func TestPromptMarkers(t *testing.T) {
	c, standin := setup(t, "amazon.nova-canvas-v1:0")
	_, err := c.Text(context.Background(), tweetRequest(t, "Fresh beans [standin:throttle]"))
	if got := codeOf(t, err); got != generation.Throttled || standin.Calls() != 4 {
		t.Fatalf("code = %s after %d calls, want throttled after 4", got, standin.Calls())
	}
	req, _ := prompts.Image("A lighthouse [standin:filter]", "", "", "512x512", "a")
	_, err = c.Image(context.Background(), req)
	if got := codeOf(t, err); got != generation.ContentFiltered {
		t.Fatalf("code = %s, want content_filtered", got)
	}
}

func decode(t *testing.T, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

func TestImage(t *testing.T) {
	testCases := []struct {
		model      string
		resolution string
		wantSide   int
	}{
		{"amazon.nova-canvas-v1:0", "256x256", 320},
		{"amazon.nova-canvas-v1:0", "1024x1024", 1024},
		{bedrock.DefaultImageModel, "256x256", 1024},
		{"us." + bedrock.DefaultImageModel, "512x512", 1024},
		{bedrockstandin.ImageModel, "512x512", 512},
	}
	for _, tc := range testCases {
		t.Run(tc.model+" "+tc.resolution, func(t *testing.T) {
			c, _ := setup(t, tc.model)
			attempt := generation.NewAttempt()
			req, err := prompts.Image("A red lighthouse on a cliff at dusk", "", "", tc.resolution, attempt)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Image(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Model != tc.model {
				t.Fatalf("model = %q", res.Model)
			}
			img := decode(t, res.Image)
			if b := img.Bounds(); b.Dx() != tc.wantSide || b.Dy() != tc.wantSide {
				t.Fatalf("drawn at %dx%d, want %d", b.Dx(), b.Dy(), tc.wantSide)
			}
			colours := map[color.Color]bool{}
			for y := 0; y < img.Bounds().Dy(); y += 7 {
				for x := 0; x < img.Bounds().Dx(); x += 7 {
					colours[img.At(x, y)] = true
				}
			}
			if len(colours) < 20 {
				t.Fatalf("a picture of %d colours is not a picture", len(colours))
			}

			// The record's picture: exactly its resolution.
			w, h, _ := picture.ParseResolution(tc.resolution)
			out, err := picture.Render(res.Image, w, h, picture.Sepia)
			if err != nil {
				t.Fatal(err)
			}
			if b := decode(t, out).Bounds(); b.Dx() != w || b.Dy() != h {
				t.Fatalf("stored at %dx%d, want %s", b.Dx(), b.Dy(), tc.resolution)
			}

			again, err := c.Image(context.Background(), req)
			if err != nil || !bytes.Equal(again.Image, res.Image) {
				t.Fatalf("the same attempt drew a different picture (%v)", err)
			}
			other, _ := prompts.Image("A red lighthouse on a cliff at dusk", "", "", tc.resolution, attempt+"x")
			if o, err := c.Image(context.Background(), other); err != nil || bytes.Equal(o.Image, res.Image) {
				t.Fatalf("another attempt drew the same picture (%v)", err)
			}
		})
	}
}

// The stand-in refuses what Bedrock refuses, so a request the real model
// would reject fails here too.
func TestUnsupportedSizeIsRefused(t *testing.T) {
	c, _ := setup(t, "amazon.nova-canvas-v1:0")
	_, err := c.Image(context.Background(), generation.ImageRequest{Prompt: "A lighthouse", Width: 256, Height: 256})
	if got := codeOf(t, err); got != generation.Internal {
		t.Fatalf("code = %s, want internal", got)
	}
}

// exchange is one request as the recorder saw it.
type exchange struct {
	method, path, contentType, accept, auth string
	body                                    map[string]any
}

// recorder forwards to the stand-in and keeps what it was sent.
func recorder(t *testing.T, target string) (*httptest.Server, *[]exchange) {
	t.Helper()
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(u)
	var mu sync.Mutex
	var seen []exchange
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("a body that is not a JSON object: %q", raw)
		}
		mu.Lock()
		seen = append(seen, exchange{r.Method, r.URL.EscapedPath(), r.Header.Get("Content-Type"), r.Header.Get("Accept"),
			r.Header.Get("Authorization"), body})
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

// What goes over the wire is Bedrock Runtime's protocol as the SDK's
// bedrockruntime client speaks it: Converse and InvokeModel at their
// paths, the model id escaped, signed for bedrock in the region, and the
// bodies this package means to send.
func TestWire(t *testing.T) {
	standin, err := bedrockstandin.Start(bedrockstandin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { standin.Close() })
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDWIRETEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	rec, seen := recorder(t, standin.URL())
	c := client(t, rec.URL, "amazon.nova-canvas-v1:0")
	ctx := context.Background()

	req := tweetRequest(t, "Our new espresso machine")
	if _, err := c.Text(ctx, req); err != nil {
		t.Fatal(err)
	}
	ireq, _ := prompts.Image("A lighthouse at dusk", "", "", "512x512", "a1")
	if _, err := c.Image(ctx, ireq); err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 2 {
		t.Fatalf("%d requests for two calls", len(*seen))
	}
	converse, invoke := (*seen)[0], (*seen)[1]
	for _, x := range []exchange{converse, invoke} {
		if x.method != http.MethodPost || !strings.HasPrefix(x.auth, "AWS4-HMAC-SHA256 Credential=AKIDWIRETEST/") ||
			!strings.Contains(x.auth, "/us-east-1/bedrock/aws4_request") {
			t.Errorf("%s %s not signed for bedrock in us-east-1: %q", x.method, x.path, x.auth)
		}
	}
	if converse.path != "/model/us.amazon.nova-micro-v1%3A0/converse" || converse.contentType != "application/json" {
		t.Errorf("Converse sent as %s (%s)", converse.path, converse.contentType)
	}
	wantBody := map[string]any{
		"system":          []any{map[string]any{"text": req.System}},
		"messages":        []any{map[string]any{"role": "user", "content": []any{map[string]any{"text": req.Prompt}}}},
		"inferenceConfig": map[string]any{"maxTokens": float64(req.MaxTokens), "temperature": float64(req.Temperature)},
	}
	if !reflect.DeepEqual(converse.body, wantBody) {
		t.Errorf("Converse body\n  %v\nwant\n  %v", converse.body, wantBody)
	}
	if invoke.path != "/model/amazon.nova-canvas-v1%3A0/invoke" || invoke.contentType != "application/json" || invoke.accept != "application/json" {
		t.Errorf("InvokeModel sent as %s (%s, accepting %s)", invoke.path, invoke.contentType, invoke.accept)
	}
	if invoke.body["taskType"] != "TEXT_IMAGE" || invoke.body["textToImageParams"].(map[string]any)["text"] != ireq.Prompt {
		t.Errorf("InvokeModel body %v is not Nova Canvas's text-to-image request", invoke.body)
	}
}
