// Package genstack runs generation's parts on this machine, for the local
// stack, the tests and the bench: a stand-in of Bedrock Runtime (or, with
// AWS credentials, Bedrock itself), an S3 server for the pictures, and the
// delivery of the tables' streams to the generator function, as the
// template's event source mappings deliver them in AWS.
package genstack

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/bedrock"
	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/s3local"
	"contentapi/shared/local/sam"
)

// Bucket is the local pictures bucket.
const Bucket = "contentapi-pictures"

// Options say where the parts listen; empty addresses take free ports.
type Options struct {
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

// Stack is the running parts.
type Stack struct {
	// Bedrock is nil when the real one is called, and both are nil for a
	// stack attached to parts another process runs.
	Bedrock *bedrockstandin.Server
	S3      *s3local.Server
	// s3URL and bedrockURL are where the parts answer ("" for the real
	// Bedrock).
	s3URL, bedrockURL string
	region            string
}

// Attach is the configuration of parts that another process started (the
// local stack, for make invoke) at these addresses; with realBedrock the
// stand-in's address is not used.
func Attach(s3Addr, bedrockAddr string, realBedrock bool, region string) *Stack {
	s := &Stack{s3URL: "http://" + s3Addr, region: region}
	if !realBedrock {
		s.bedrockURL = "http://" + bedrockAddr
	}
	return s
}

// Start starts the parts; Close stops them.
func Start(opts Options) (*Stack, error) {
	s := &Stack{region: opts.Region}
	var err error
	if s.S3, err = s3local.Start(s3local.Options{Addr: opts.S3Addr, Bucket: Bucket}); err != nil {
		return nil, err
	}
	s.s3URL = s.S3.URL()
	if opts.RealBedrock {
		if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
			s.Close()
			return nil, fmt.Errorf("genstack: the real Bedrock needs AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)")
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
func (s *Stack) Close() {
	if s.Bedrock != nil {
		s.Bedrock.Close()
	}
	if s.S3 != nil {
		s.S3.Close()
	}
}

// Generation is the app's generation configuration for these parts.
func (s *Stack) Generation() app.Generation {
	g := app.Generation{
		On: true, Wait: 25 * time.Second, Bucket: Bucket, S3Endpoint: s.s3URL,
		TextModel: bedrock.DefaultTextModel, ImageModel: bedrock.DefaultImageModel, Region: s.region,
	}
	if s.bedrockURL != "" {
		g.TextModel, g.ImageModel = bedrockstandin.TextModel, bedrockstandin.ImageModel
		g.BedrockEndpoint = s.bedrockURL
	}
	return g
}

// Env is Generation as the functions' environment says it.
func (s *Stack) Env() map[string]string {
	g := s.Generation()
	env := map[string]string{
		app.EnvGeneration: "on", app.EnvTextModel: g.TextModel, app.EnvImageModel: g.ImageModel,
		app.EnvPicturesBucket: g.Bucket, app.EnvS3Endpoint: g.S3Endpoint, app.EnvBedrockEndpoint: g.BedrockEndpoint,
	}
	if g.BedrockEndpoint == "" && s.region != "" {
		env[app.EnvBedrockRegion] = s.region
	}
	return env
}

// Banner names the parts, the stand-in as what it is.
func (s *Stack) Banner() string {
	bedrockLine := "Amazon Bedrock itself, in " + s.region + ", with your credentials: " + bedrock.DefaultTextModel + ", " + bedrock.DefaultImageModel
	if s.Bedrock != nil {
		bedrockLine = s.Bedrock.String() + "; records name its models " + bedrockstandin.TextModel + " and " +
			bedrockstandin.ImageModel + " (BEDROCK=aws make run calls the real one)"
	}
	return fmt.Sprintf("S3 (local):      %s  (bucket %s; pictures in memory)\nBedrock:         %s", s.s3URL, Bucket, bedrockLine)
}

// Deliver runs the template's stream mappings of the generator function
// over the tables (names by logical ID) until ctx ends, handing their
// batches to fn. The mappings read from the streams' start
// (TRIM_HORIZON), so nothing written before they run is missed.
func Deliver(ctx context.Context, db *dynamodb.Client, endpoint string, tmpl *sam.Template, tables map[string]string,
	fn app.GeneratorEntry, logger *slog.Logger) (*lambdalocal.StreamPoller, error) {
	return lambdalocal.DeliverStreams(ctx, db, endpoint, tmpl, tables, app.GeneratorFunction, lambdalocal.StreamHandler(fn), nil, logger)
}

// DeliverTally runs the template's stream mappings of the tally function,
// as Deliver does the generator's. They read from now on (LATEST):
// Drained on the poller returns once they read.
func DeliverTally(ctx context.Context, db *dynamodb.Client, endpoint string, tmpl *sam.Template, tables map[string]string,
	fn app.TallyHandler, logger *slog.Logger) (*lambdalocal.StreamPoller, error) {
	return lambdalocal.DeliverStreams(ctx, db, endpoint, tmpl, tables, app.TallyFunction, nil, lambdalocal.StreamWindowHandler(fn), logger)
}
