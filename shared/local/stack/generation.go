package stack

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/bedrock"
	"contentapi/shared/generation"
	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/s3local"
	"contentapi/shared/local/sam"
)

// PicturesBucket is the local pictures bucket.
const PicturesBucket = "contentapi-pictures"

// GenerationOptions say where generation's parts listen; empty addresses
// take free ports.
type GenerationOptions struct {
	BedrockAddr, S3Addr string
	// SlowDelay is how long the stand-in holds a [standin:slow] answer.
	SlowDelay time.Duration
	// RealBedrock calls Amazon Bedrock with the credentials and region of
	// the environment, and the template's default models, instead of
	// starting the stand-in.
	RealBedrock bool
	// Region is where the real Bedrock is called.
	Region string
}

// Generation is generation's parts, running.
type Generation struct {
	// Bedrock is nil when the real one is called, and both are nil for a
	// stack attached to parts another process runs.
	Bedrock *bedrockstandin.Server
	S3      *s3local.Server
	// s3URL and bedrockURL are where the parts answer ("" for the real
	// Bedrock).
	s3URL, bedrockURL string
	region            string
}

// AttachGeneration is the configuration of parts that another process
// started (the local stack, for make invoke) at these addresses; with
// realBedrock the stand-in's address is not used.
func AttachGeneration(s3Addr, bedrockAddr string, realBedrock bool, region string) *Generation {
	s := &Generation{s3URL: "http://" + s3Addr, region: region}
	if !realBedrock {
		s.bedrockURL = "http://" + bedrockAddr
	}
	return s
}

// StartGeneration starts the parts; Close stops them.
func StartGeneration(opts GenerationOptions) (*Generation, error) {
	s := &Generation{region: opts.Region}
	var err error
	if s.S3, err = s3local.Start(s3local.Options{Addr: opts.S3Addr, Bucket: PicturesBucket}); err != nil {
		return nil, err
	}
	s.s3URL = s.S3.URL()
	if opts.RealBedrock {
		if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
			s.Close()
			return nil, fmt.Errorf("stack: the real Bedrock needs AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)")
		}
		return s, nil
	}
	if s.Bedrock, err = bedrockstandin.Start(bedrockstandin.Options{Addr: opts.BedrockAddr, SlowDelay: opts.SlowDelay}); err != nil {
		s.Close()
		return nil, err
	}
	s.bedrockURL = s.Bedrock.URL()
	return s, nil
}

// Close stops the parts.
func (s *Generation) Close() {
	if s.Bedrock != nil {
		s.Bedrock.Close()
	}
	if s.S3 != nil {
		s.S3.Close()
	}
}

// Config is the app's generation configuration for these parts.
func (s *Generation) Config() app.Generation {
	g := app.Generation{
		On: true, Wait: 25 * time.Second, Bucket: PicturesBucket, S3Endpoint: s.s3URL,
		TextModel: bedrock.DefaultTextModel, ImageModel: bedrock.DefaultImageModel, Region: s.region,
		Prices: generation.DefaultPrices,
	}
	if s.bedrockURL != "" {
		g.TextModel, g.ImageModel = bedrockstandin.TextModel, bedrockstandin.ImageModel
		g.BedrockEndpoint = s.bedrockURL
		g.Prices = append(generation.DefaultPrices[:len(generation.DefaultPrices):len(generation.DefaultPrices)], bedrockstandin.Prices()...)
	}
	return g
}

// Env is Config as the functions' environment says it.
func (s *Generation) Env() map[string]string {
	g := s.Config()
	env := map[string]string{
		app.EnvGeneration: "on", app.EnvTextModel: g.TextModel, app.EnvImageModel: g.ImageModel,
		app.EnvPicturesBucket: g.Bucket, app.EnvS3Endpoint: g.S3Endpoint, app.EnvBedrockEndpoint: g.BedrockEndpoint,
	}
	if g.BedrockEndpoint == "" && s.region != "" {
		env[app.EnvBedrockRegion] = s.region
	}
	if g.BedrockEndpoint != "" {
		env[app.EnvModelPrices] = bedrockstandin.PricesJSON()
	}
	return env
}

// Banner names the parts, the stand-in as what it is.
func (s *Generation) Banner() string {
	bedrockLine := "Amazon Bedrock itself, in " + s.region + ", with your credentials: " + bedrock.DefaultTextModel + ", " + bedrock.DefaultImageModel
	if s.Bedrock != nil {
		bedrockLine = s.Bedrock.String() + "; records name its models " + bedrockstandin.TextModel + " and " +
			bedrockstandin.ImageModel + " (BEDROCK=aws make run calls the real one)"
	}
	return fmt.Sprintf("S3 (local):      %s  (bucket %s; pictures in memory)\nBedrock:         %s", s.s3URL, PicturesBucket, bedrockLine)
}

// DeliverGenerator runs the template's stream mappings of the generator
// function over the tables (names by logical ID) until ctx ends, handing
// their batches to fn. The mappings read from the streams' start
// (TRIM_HORIZON), so nothing written before they run is missed.
func DeliverGenerator(ctx context.Context, db *dynamodb.Client, endpoint string, tmpl *sam.Template, tables map[string]string,
	fn app.GeneratorEntry, logger *slog.Logger) (*lambdalocal.StreamPoller, error) {
	return lambdalocal.DeliverStreams(ctx, db, endpoint, tmpl, tables, app.GeneratorFunction, lambdalocal.StreamHandler(fn), nil, logger)
}

// DeliverTally runs the template's stream mappings of the tally function,
// as DeliverGenerator does the generator's. They read from now on (LATEST):
// Drained on the poller returns once they read.
func DeliverTally(ctx context.Context, db *dynamodb.Client, endpoint string, tmpl *sam.Template, tables map[string]string,
	fn app.TallyHandler, logger *slog.Logger) (*lambdalocal.StreamPoller, error) {
	return lambdalocal.DeliverStreams(ctx, db, endpoint, tmpl, tables, app.TallyFunction, nil, lambdalocal.StreamWindowHandler(fn), logger)
}
