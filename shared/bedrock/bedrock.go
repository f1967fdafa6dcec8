// Package bedrock is the text and image models of generation on Amazon
// Bedrock Runtime: text through the Converse API, pictures through
// InvokeModel in the request shape of the configured model's family. Every
// failure comes back as a *generation.Error whose message is safe to show.
//
// It speaks Bedrock Runtime's REST protocol through awsenv.Service (the
// SDK's SigV4 signer and standard retryer over net/http) rather than
// through the SDK's bedrockruntime client: with its Converse and
// InvokeModel paths that client adds 1.2 MB to a bootstrap, and the API
// functions, which generate within the request, would pass their 10 MB
// with it (measured: 10.4 MB, 9.3 MB without). The two operations are a
// JSON body each way; the tests hold this client's requests to the SDK
// client's, byte for byte, and run both against the local stand-in.
package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/smithy-go/encoding/httpbinding"

	"contentapi/shared/awsenv"
	"contentapi/shared/generation"
)

// Default models: current, on-demand and not marked legacy when chosen.
// Nova Micro is the cheapest Amazon Nova text model; its "us." inference
// profile lets it run from any US region, including us-west-2 where the
// image model is. Stable Image Core is the cheapest Bedrock image model
// that is still active: Nova Canvas (end of life 2026-09-30) and Titan
// Image Generator v2 (2026-06-30) are retired. Both are configuration:
// a deployment names its own.
const (
	DefaultTextModel  = "us.amazon.nova-micro-v1:0"
	DefaultImageModel = "stability.stable-image-core-v1:1"
)

// Config is where the models are and which to call.
type Config struct {
	Region string
	// Endpoint is set only for a local stand-in of Bedrock Runtime.
	Endpoint string
	// TextModel and ImageModel are model or inference profile ids.
	TextModel, ImageModel string
	// MaxAttempts bounds the tries of one call (throttling and transient
	// errors are retried with exponential backoff); 0 means 4.
	MaxAttempts int
	// MaxBackoff bounds the wait between tries; 0 means 2 s.
	MaxBackoff time.Duration
}

// Client calls the configured models; it is safe for concurrent use and
// meant to be built once per warm function.
type Client struct {
	rt          *awsenv.Service
	endpoint    string
	text, image string
	family      family
}

// New builds the client from the function's environment (see awsenv).
func New(cfg Config) (*Client, error) {
	if cfg.TextModel == "" || cfg.ImageModel == "" {
		return nil, errors.New("bedrock: a text model and an image model must be configured")
	}
	creds, err := awsenv.Credentials(cfg.Endpoint != "")
	if err != nil {
		return nil, fmt.Errorf("bedrock: %w", err)
	}
	attempts, backoff := cfg.MaxAttempts, cfg.MaxBackoff
	if attempts == 0 {
		attempts = 4
	}
	if backoff == 0 {
		backoff = 2 * time.Second
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = "https://bedrock-runtime." + cfg.Region + ".amazonaws.com"
	}
	return &Client{
		rt: awsenv.NewService(awsenv.ServiceConfig{
			Name: "bedrock", Region: cfg.Region, Credentials: creds,
			// Bedrock asks callers to retry a model that is still loading.
			// No timeout per try: a picture may take tens of seconds, and
			// the caller's context bounds every call.
			Retryer: awsenv.Retryer(attempts, backoff, "ModelNotReadyException"),
		}),
		endpoint: endpoint,
		text:     cfg.TextModel,
		image:    cfg.ImageModel,
		family:   familyOf(cfg.ImageModel),
	}, nil
}

// TextModel is the configured text model id.
func (c *Client) TextModel() string { return c.text }

// ImageModel is the configured image model id.
func (c *Client) ImageModel() string { return c.image }

// call posts a JSON body to one of a model's operations ("converse",
// "invoke"), its id escaped in the path as the SDK escapes it.
func (c *Client) call(ctx context.Context, model, op string, body []byte) ([]byte, error) {
	url := c.endpoint + "/model/" + httpbinding.EscapePath(model, true) + "/" + op
	header := http.Header{"Content-Type": {"application/json"}}
	if op == "invoke" {
		header.Set("Accept", "application/json")
	}
	resp, err := c.rt.Do(ctx, http.MethodPost, url, header, body)
	if err != nil {
		return nil, classify(ctx, err)
	}
	return resp.Body, nil
}

// The Converse API's request and answer, as far as a one-turn text
// answer needs them.
type (
	converseText struct {
		Text string `json:"text"`
	}
	converseMessage struct {
		Role    string         `json:"role"`
		Content []converseText `json:"content"`
	}
	converseInput struct {
		Messages        []converseMessage `json:"messages"`
		System          []converseText    `json:"system"`
		InferenceConfig struct {
			MaxTokens   int32   `json:"maxTokens"`
			Temperature float32 `json:"temperature"`
		} `json:"inferenceConfig"`
	}
	converseOutput struct {
		Output struct {
			Message *struct {
				Content []struct {
					Text *string `json:"text"`
				} `json:"content"`
			} `json:"message"`
		} `json:"output"`
		StopReason string `json:"stopReason"`
		Usage      *struct {
			InputTokens  int64 `json:"inputTokens"`
			OutputTokens int64 `json:"outputTokens"`
		} `json:"usage"`
	}
)

// Converse's stop reasons this client reads.
const (
	stopMaxTokens       = "max_tokens"
	stopContentFiltered = "content_filtered"
	stopGuardrail       = "guardrail_intervened"
)

// Text asks the text model through Converse.
func (c *Client) Text(ctx context.Context, req generation.TextRequest) (generation.TextResult, error) {
	in := converseInput{
		Messages: []converseMessage{{Role: "user", Content: []converseText{{Text: req.Prompt}}}},
		System:   []converseText{{Text: req.System}},
	}
	in.InferenceConfig.MaxTokens, in.InferenceConfig.Temperature = req.MaxTokens, req.Temperature
	body, err := json.Marshal(in)
	if err != nil {
		return generation.TextResult{}, generation.Wrap(generation.Internal, err)
	}
	raw, err := c.call(ctx, c.text, "converse", body)
	if err != nil {
		return generation.TextResult{}, err
	}
	var out converseOutput
	if err := json.Unmarshal(raw, &out); err != nil {
		return generation.TextResult{}, generation.Wrap(generation.Internal, fmt.Errorf("bedrock: converse answer: %w", err))
	}
	switch out.StopReason {
	case stopContentFiltered, stopGuardrail:
		return generation.TextResult{}, generation.Wrap(generation.ContentFiltered, fmt.Errorf("bedrock: converse stopped: %s", out.StopReason))
	}
	res := generation.TextResult{Model: c.text, Truncated: out.StopReason == stopMaxTokens}
	if msg := out.Output.Message; msg != nil {
		for _, block := range msg.Content {
			if block.Text != nil {
				res.Text += *block.Text
			}
		}
	}
	if out.Usage != nil {
		res.InputTokens, res.OutputTokens = out.Usage.InputTokens, out.Usage.OutputTokens
	}
	return res, nil
}

// Image asks the image model through InvokeModel, in its family's shape.
func (c *Client) Image(ctx context.Context, req generation.ImageRequest) (generation.ImageResult, error) {
	req.Prompt = clip(req.Prompt, c.family.maxPrompt)
	body, err := c.family.request(req)
	if err != nil {
		return generation.ImageResult{}, generation.Wrap(generation.Internal, err)
	}
	raw, err := c.call(ctx, c.image, "invoke", body)
	if err != nil {
		return generation.ImageResult{}, err
	}
	img, err := c.family.response(raw)
	if err != nil {
		return generation.ImageResult{}, err
	}
	return generation.ImageResult{Image: img, Model: c.image}, nil
}

// classify turns a failed call into the error clients see; the service's
// own message, which may name accounts, ARNs and request ids, stays the
// cause, for logs.
func classify(ctx context.Context, err error) *generation.Error {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return generation.Wrap(generation.Timeout, err)
	}
	var send *awsenv.SendError
	if errors.As(err, &send) {
		// Bedrock could not be reached, even after retries.
		return generation.Wrap(generation.ModelUnavailable, err)
	}
	var api *awsenv.ResponseError
	if !errors.As(err, &api) {
		return generation.Wrap(generation.Internal, err)
	}
	switch api.Code {
	case "ThrottlingException", "ServiceQuotaExceededException":
		return generation.Wrap(generation.Throttled, err)
	case "ModelTimeoutException":
		return generation.Wrap(generation.Timeout, err)
	case "ModelNotReadyException", "ServiceUnavailableException", "InternalServerException",
		"ModelErrorException", "ResourceNotFoundException", "AccessDeniedException":
		// All say: not now, or not on this deployment's model. A 500 that
		// survived the retries is Bedrock's outage, not a bug of ours.
		return generation.Wrap(generation.ModelUnavailable, err)
	case "ValidationException":
		if filtered(api.Message) {
			return generation.Wrap(generation.ContentFiltered, err)
		}
	}
	if api.Status >= 500 {
		return generation.Wrap(generation.ModelUnavailable, err)
	}
	return generation.Wrap(generation.Internal, err)
}
