// Package bedrock is the text and image models of generation on Amazon
// Bedrock Runtime, through the SDK's bedrockruntime client: text through
// the Converse API, pictures through InvokeModel in the request shape of
// the configured model's family. Every failure comes back as a
// *generation.Error whose message is safe to show.
package bedrock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

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
	rt          *bedrockruntime.Client
	text, image string
	family      family
}

// New builds the client from the function's environment (see awsenv).
func New(cfg Config) (*Client, error) {
	if cfg.TextModel == "" || cfg.ImageModel == "" {
		return nil, errors.New("bedrock: a text model and an image model must be configured")
	}
	// Loading reads only the environment: no call to cancel.
	awscfg, err := awsenv.Load(context.Background(), cfg.Region, cfg.Endpoint != "")
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
	rt := bedrockruntime.NewFromConfig(awscfg, func(o *bedrockruntime.Options) {
		// Bedrock asks callers to retry a model that is still loading.
		// No timeout per try: a picture may take tens of seconds, and the
		// caller's context bounds every call.
		o.Retryer = awsenv.Retryer(attempts, backoff, "ModelNotReadyException")
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
	})
	return &Client{
		rt:     rt,
		text:   cfg.TextModel,
		image:  cfg.ImageModel,
		family: familyOf(cfg.ImageModel),
	}, nil
}

// TextModel is the configured text model id.
func (c *Client) TextModel() string { return c.text }

// ImageModel is the configured image model id.
func (c *Client) ImageModel() string { return c.image }

// Text asks the text model through Converse.
func (c *Client) Text(ctx context.Context, req generation.TextRequest) (generation.TextResult, error) {
	out, err := c.rt.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(c.text),
		System:  []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.System}},
		Messages: []types.Message{{
			Role:    types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: req.Prompt}},
		}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(req.MaxTokens), Temperature: aws.Float32(req.Temperature)},
	})
	if err != nil {
		return generation.TextResult{}, classify(ctx, err)
	}
	res := generation.TextResult{Model: c.text, Truncated: out.StopReason == types.StopReasonMaxTokens}
	if u := out.Usage; u != nil {
		res.InputTokens, res.OutputTokens = int64(aws.ToInt32(u.InputTokens)), int64(aws.ToInt32(u.OutputTokens))
	}
	switch out.StopReason {
	case types.StopReasonContentFiltered, types.StopReasonGuardrailIntervened:
		// Bedrock bills the tokens of an answer its filters stopped: the
		// result carries them, for the generation's cost, and no text.
		return generation.TextResult{Model: res.Model, InputTokens: res.InputTokens, OutputTokens: res.OutputTokens},
			generation.Wrap(generation.ContentFiltered, fmt.Errorf("bedrock: converse stopped: %s", out.StopReason))
	}
	if msg, ok := out.Output.(*types.ConverseOutputMemberMessage); ok {
		for _, block := range msg.Value.Content {
			if text, ok := block.(*types.ContentBlockMemberText); ok {
				res.Text += text.Value
			}
		}
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
	out, err := c.rt.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(c.image), Body: body,
		ContentType: aws.String("application/json"), Accept: aws.String("application/json"),
	})
	if err != nil {
		return generation.ImageResult{}, classify(ctx, err)
	}
	img, err := c.family.response(out.Body)
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
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		// Bedrock could not be reached, even after retries.
		return generation.Wrap(generation.ModelUnavailable, err)
	}
	var api smithy.APIError
	if !errors.As(err, &api) {
		return generation.Wrap(generation.Internal, err)
	}
	switch api.ErrorCode() {
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
		if filtered(api.ErrorMessage()) {
			return generation.Wrap(generation.ContentFiltered, err)
		}
	}
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 {
		return generation.Wrap(generation.ModelUnavailable, err)
	}
	return generation.Wrap(generation.Internal, err)
}
