package bedrockstandin

import (
	"encoding/json"

	"contentapi/shared/bedrock"
	"contentapi/shared/generation"
)

// Prices are the stand-in's models' prices: those of the default models
// it stands in for (the template's TextModel and ImageModel), so that a
// local stack's generations cost what the same calls of them would.
func Prices() generation.Prices {
	text, _ := generation.DefaultPrices.Of(bedrock.DefaultTextModel)
	image, _ := generation.DefaultPrices.Of(bedrock.DefaultImageModel)
	text.Model, image.Model = TextModel, ImageModel
	text.Name, image.Name = "stand-in for "+text.Name, "stand-in for "+image.Name
	return generation.Prices{text, image}
}

// PricesJSON is Prices as a deployment declares its own (MODEL_PRICES).
func PricesJSON() string {
	b, err := json.Marshal(Prices())
	if err != nil {
		panic("bedrockstandin: the prices do not marshal: " + err.Error())
	}
	return string(b)
}
