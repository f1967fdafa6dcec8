package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrock"
	bedrocktypes "github.com/aws/aws-sdk-go-v2/service/bedrock/types"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	runtimetypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/smithy-go"
)

// model is one model the stack calls, named as the template's parameters
// name it: the foundation model and the inference profile it is called
// through, if any.
type model struct {
	Kind    string // text or image
	ID      string // the foundation model: TextModel, ImageModel
	Profile string // TextModelProfile, ImageModelProfile: "" or us, eu, ...
}

// calledAs is the id the functions invoke, as the template composes
// TEXT_MODEL and IMAGE_MODEL.
func (m model) calledAs() string {
	if m.Profile == "" {
		return m.ID
	}
	return m.Profile + "." + m.ID
}

// setup is what a stack calls: whether it generates, where, and which
// models.
type setup struct {
	Generation bool
	Region     string
	Models     []model
}

// fromParameters reads a deployed stack's setup from its parameters, as
// DescribeStacks returns them (every declared one, defaults included).
func fromParameters(params []cftypes.Parameter) (setup, error) {
	p := map[string]string{}
	for _, param := range params {
		p[aws.ToString(param.ParameterKey)] = aws.ToString(param.ParameterValue)
	}
	for _, name := range []string{"Generation", "BedrockRegion", "TextModel", "TextModelProfile", "ImageModel", "ImageModelProfile"} {
		if _, ok := p[name]; !ok {
			return setup{}, fmt.Errorf("no parameter %s: is this a contentapi stack?", name)
		}
	}
	return setup{
		Generation: p["Generation"] == "on",
		Region:     p["BedrockRegion"],
		Models: []model{
			{Kind: "text", ID: p["TextModel"], Profile: p["TextModelProfile"]},
			{Kind: "image", ID: p["ImageModel"], Profile: p["ImageModelProfile"]},
		},
	}, nil
}

// The words a report shows, one each so that the table reads as columns.
const (
	accessGranted   = "granted"
	accessDenied    = "DENIED"
	notFoundWord    = "not-found"
	lifecycleActive = string(bedrocktypes.FoundationModelLifecycleStatusActive)
)

// report is what preflight found out about one model.
type report struct {
	model
	Region    string
	Access    string // accessGranted, accessDenied, not-found or error
	Lifecycle string // ACTIVE, LEGACY, not-found, unreadable or error
	Notes     []string
}

func (r report) ready() bool { return r.Access == accessGranted && r.Lifecycle == lifecycleActive }

// checker makes the checks, in the region the models are called in.
type checker struct {
	region  string
	runtime *bedrockruntime.Client
	control *bedrock.Client
}

// invalidBody is a request body that no model accepts: not even JSON.
// Bedrock refuses it with ValidationException, and bills nothing, once the
// caller and the account may use the model.
var invalidBody = []byte("make preflight: not a model request")

func (c checker) check(ctx context.Context, m model) report {
	r := report{model: m, Region: c.region}
	r.Access, r.Notes = c.access(ctx, m)
	lifecycle, note := c.lifecycle(ctx, m)
	r.Lifecycle = lifecycle
	if note != "" {
		r.Notes = append(r.Notes, note)
	}
	return r
}

// access calls the model as the functions do, with a body it must refuse.
func (c checker) access(ctx context.Context, m model) (string, []string) {
	_, err := c.runtime.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(m.calledAs()), Body: invalidBody,
		ContentType: aws.String("application/json"), Accept: aws.String("application/json"),
	})
	var invalid *runtimetypes.ValidationException
	var denied *runtimetypes.AccessDeniedException
	var notFound *runtimetypes.ResourceNotFoundException
	switch {
	case err == nil, errors.As(err, &invalid):
		return accessGranted, nil
	case errors.As(err, &denied):
		note := "AccessDeniedException (" + denied.ErrorMessage() + "). "
		if strings.Contains(denied.ErrorMessage(), "not authorized to perform") {
			note += "Your credentials may not invoke it: preflight needs bedrock:InvokeModel on the model (and its inference profile)."
		} else {
			note += "The account has no working subscription to it. Bedrock subscribes on the first call of a caller " +
				"holding the Marketplace permissions (the functions hold them for MarketplaceProductIds): check the account's " +
				"payment method and that the model's product id is in MarketplaceProductIds, then call again; " +
				"a subscription takes up to 15 minutes (docs/generation.md, Model access)."
		}
		return accessDenied, []string{note}
	case errors.As(err, &notFound):
		return notFoundWord, []string{"Bedrock has no such model or profile in " + c.region + " (" + notFound.ErrorMessage() + ")."}
	}
	return "error", []string{"the access check failed: " + describe(err)}
}

// lifecycle asks the control plane for the foundation model's status.
func (c checker) lifecycle(ctx context.Context, m model) (string, string) {
	out, err := c.control.GetFoundationModel(ctx, &bedrock.GetFoundationModelInput{ModelIdentifier: aws.String(m.ID)})
	var notFound *bedrocktypes.ResourceNotFoundException
	var denied *bedrocktypes.AccessDeniedException
	switch {
	case errors.As(err, &notFound):
		return notFoundWord, "GetFoundationModel knows no model " + m.ID + " in " + c.region + "."
	case errors.As(err, &denied):
		return "unreadable", "your credentials may not read the model's status: preflight needs bedrock:GetFoundationModel (" + denied.ErrorMessage() + ")."
	case err != nil:
		return "error", "the lifecycle check failed: " + describe(err)
	case out.ModelDetails == nil || out.ModelDetails.ModelLifecycle == nil:
		return "error", "GetFoundationModel gave no lifecycle status."
	}
	life := out.ModelDetails.ModelLifecycle
	switch status := string(life.Status); status {
	case lifecycleActive:
		return status, ""
	case string(bedrocktypes.FoundationModelLifecycleStatusLegacy):
		note := "LEGACY: Bedrock is retiring this model"
		if life.EndOfLifeTime != nil {
			note += " (end of life " + life.EndOfLifeTime.Format("2006-01-02") + ")"
		}
		return status, note + "; choose an ACTIVE one (TextModel, ImageModel)."
	default:
		return status, "the model is " + status + ", not " + lifecycleActive + "."
	}
}

// describe is an error as an operator needs it: the service's code and
// message when it answered, else the error.
func describe(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode() + ": " + api.ErrorMessage()
	}
	return err.Error()
}
