package bedrockstandin

import (
	"net/http"
	"regexp"
)

// Lifecycle statuses of a foundation model, as GetFoundationModel reports
// them: Bedrock marks a model LEGACY before its end of life.
const (
	Active = "ACTIVE"
	Legacy = "LEGACY"
)

// List puts a foundation model in the stand-in's catalog, which
// GetFoundationModel answers from, with its lifecycle status. The
// stand-in's own models are listed ACTIVE from the start; any other
// id is unknown to GetFoundationModel (404 ResourceNotFoundException)
// until listed. The runtime calls serve any id, listed or not.
func (s *Server) List(model, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.catalog[model] = status
}

// Deny puts the stand-in in access-denied mode for these model ids (as
// called: a profile id is its own): every Converse and InvokeModel on
// them answers 403 AccessDeniedException before the request is read, as
// Bedrock answers an account whose subscription to the model is missing
// or failed. GetFoundationModel still describes them, as Bedrock's
// control plane does.
func (s *Server) Deny(models ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range models {
		s.denied[m] = true
	}
}

func (s *Server) deniedAccess(model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.denied[model]
}

// signedRegion is the region in a SigV4 Authorization header's credential
// scope: the region the caller's client is configured for.
var signedRegion = regexp.MustCompile(`Credential=[^/]+/\d{8}/([a-z0-9-]+)/bedrock/aws4_request`)

// foundationModel answers the control plane's GetFoundationModel (GET
// /foundation-models/{modelIdentifier}) in Bedrock's REST-JSON shape.
func (s *Server) foundationModel(w http.ResponseWriter, r *http.Request, model string) {
	s.mu.Lock()
	status, ok := s.catalog[model]
	s.mu.Unlock()
	if !ok {
		sendError(w, http.StatusNotFound, "ResourceNotFoundException", "The model "+model+" was not found in the stand-in's catalog.")
		return
	}
	region := signedRegionOf(r)
	sendJSON(w, map[string]any{"modelDetails": map[string]any{
		"modelArn":                   "arn:aws:bedrock:" + region + "::foundation-model/" + model,
		"modelId":                    model,
		"modelName":                  model + " (stand-in)",
		"providerName":               "Local stand-in",
		"inputModalities":            []string{"TEXT"},
		"outputModalities":           []string{"TEXT", "IMAGE"},
		"responseStreamingSupported": false,
		"customizationsSupported":    []string{},
		"inferenceTypesSupported":    []string{"ON_DEMAND"},
		"modelLifecycle":             map[string]string{"status": status},
	}})
}
