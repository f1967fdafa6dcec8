// Package models is generation's client of the models, Bedrock Runtime's,
// for the functions that generate (app.Parts.Models): only they link it.
package models

import (
	"cmp"

	"contentapi/shared/app"
	"contentapi/shared/bedrock"
)

// New is the models' client: in the region of generation (the function's
// own unless BEDROCK_REGION says), at BEDROCK_ENDPOINT locally.
func New(cfg app.Config) (app.Models, error) {
	g := cfg.Generation
	c, err := bedrock.New(bedrock.Config{
		Region: cmp.Or(g.Region, cfg.Region), Endpoint: g.BedrockEndpoint,
		TextModel: g.TextModel, ImageModel: g.ImageModel,
		MaxAttempts: g.ModelAttempts, MaxBackoff: g.ModelBackoff,
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}
