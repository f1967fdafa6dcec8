package bedrockstandin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrock"
	bedrocktypes "github.com/aws/aws-sdk-go-v2/service/bedrock/types"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	runtimetypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"contentapi/shared/local/bedrockstandin"
)

func startStandin(t *testing.T) *bedrockstandin.Server {
	t.Helper()
	s, err := bedrockstandin.Start(bedrockstandin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var localCredentials = credentials.NewStaticCredentialsProvider("local", "local", "")

// The SDK's control-plane client reads the stand-in's GetFoundationModel
// as Bedrock's: the lifecycle status the catalog lists, the region the
// call was signed for, and an unknown model as ResourceNotFoundException.
func TestGetFoundationModel(t *testing.T) {
	s := startStandin(t)
	s.List("old.model-v1:0", bedrockstandin.Legacy)
	client := bedrock.New(bedrock.Options{Region: "us-west-2", Credentials: localCredentials, BaseEndpoint: aws.String(s.URL())})
	ctx := context.Background()
	for model, want := range map[string]bedrocktypes.FoundationModelLifecycleStatus{
		bedrockstandin.ImageModel: bedrocktypes.FoundationModelLifecycleStatusActive,
		"old.model-v1:0":          bedrocktypes.FoundationModelLifecycleStatusLegacy,
	} {
		out, err := client.GetFoundationModel(ctx, &bedrock.GetFoundationModelInput{ModelIdentifier: aws.String(model)})
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		d := out.ModelDetails
		if aws.ToString(d.ModelId) != model || d.ModelLifecycle == nil || d.ModelLifecycle.Status != want ||
			!strings.HasPrefix(aws.ToString(d.ModelArn), "arn:aws:bedrock:us-west-2::foundation-model/") {
			t.Errorf("%s: %+v, lifecycle %+v; want %s", model, d, d.ModelLifecycle, want)
		}
	}
	_, err := client.GetFoundationModel(ctx, &bedrock.GetFoundationModelInput{ModelIdentifier: aws.String("unknown.model-v9:0")})
	var notFound *bedrocktypes.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Errorf("an unknown model: %v (%T), want ResourceNotFoundException", err, err)
	}
}

// In access-denied mode a model's runtime calls answer
// AccessDeniedException before their request is even read, whatever it
// holds, while other models and the control plane answer as before.
func TestDenyAccess(t *testing.T) {
	s := startStandin(t)
	s.Deny(bedrockstandin.ImageModel)
	runtime := bedrockruntime.New(bedrockruntime.Options{Region: "us-west-2", Credentials: localCredentials, BaseEndpoint: aws.String(s.URL())})
	ctx := context.Background()
	invoke := func(model, body string) error {
		_, err := runtime.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
			ModelId: aws.String(model), Body: []byte(body), ContentType: aws.String("application/json")})
		return err
	}
	var denied *runtimetypes.AccessDeniedException
	for _, body := range []string{`{"prompt":"a red sky","output_format":"png"}`, `not json`} {
		if err := invoke(bedrockstandin.ImageModel, body); !errors.As(err, &denied) {
			t.Errorf("a denied model answered %q with %v (%T), want AccessDeniedException", body, err, err)
		}
	}
	var invalid *runtimetypes.ValidationException
	if err := invoke(bedrockstandin.TextModel, `not json`); !errors.As(err, &invalid) {
		t.Errorf("a model with access answered an invalid body with %v, want ValidationException", err)
	}
	if err := invoke(bedrockstandin.TextModel, `{"prompt":"a red sky","output_format":"png"}`); err != nil {
		t.Errorf("a model with access: %v", err)
	}
	client := bedrock.New(bedrock.Options{Region: "us-west-2", Credentials: localCredentials, BaseEndpoint: aws.String(s.URL())})
	if _, err := client.GetFoundationModel(ctx, &bedrock.GetFoundationModelInput{ModelIdentifier: aws.String(bedrockstandin.ImageModel)}); err != nil {
		t.Errorf("GetFoundationModel of a denied model: %v", err)
	}
}
