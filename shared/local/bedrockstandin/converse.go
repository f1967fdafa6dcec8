package bedrockstandin

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

type converseRequest struct {
	System []struct {
		Text string `json:"text"`
	} `json:"system"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"messages"`
	InferenceConfig struct {
		MaxTokens   *int     `json:"maxTokens"`
		Temperature *float64 `json:"temperature"`
	} `json:"inferenceConfig"`
}

func (s *Server) converse(ctx context.Context, w http.ResponseWriter, model string, body []byte) {
	var req converseRequest
	if err := json.Unmarshal(body, &req); err != nil {
		sendError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: "+err.Error())
		return
	}
	var system, prompt strings.Builder
	for _, b := range req.System {
		system.WriteString(b.Text)
	}
	for _, m := range req.Messages {
		if m.Role == "user" {
			for _, c := range m.Content {
				prompt.WriteString(c.Text)
			}
		}
	}
	maxTokens, temperature := 5000, 0.7
	if req.InferenceConfig.MaxTokens != nil {
		maxTokens = *req.InferenceConfig.MaxTokens
	}
	if req.InferenceConfig.Temperature != nil {
		temperature = *req.InferenceConfig.Temperature
	}
	switch {
	case len(req.Messages) == 0 || prompt.Len() == 0:
		sendError(w, http.StatusBadRequest, "ValidationException", "A conversation must start with a user message.")
		return
	case maxTokens < 1 || maxTokens > 10000:
		sendError(w, http.StatusBadRequest, "ValidationException", "The maximum tokens you requested exceeds the model limit.")
		return
	case temperature < 0 || temperature > 1:
		sendError(w, http.StatusBadRequest, "ValidationException", "temperature must be between 0 and 1.")
		return
	}
	f := s.next(Request{Model: model, System: system.String(), Prompt: prompt.String(), Temperature: temperature, MaxTokens: maxTokens})
	if s.fault(ctx, w, f) {
		return
	}
	usage := map[string]int{"inputTokens": tokens(system.String()) + tokens(prompt.String())}
	if f == BlockedOutput {
		usage["outputTokens"], usage["totalTokens"] = 0, usage["inputTokens"]
		sendJSON(w, map[string]any{
			"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{}}},
			"stopReason": "content_filtered",
			"usage":      usage,
			"metrics":    map[string]int{"latencyMs": 1},
		})
		return
	}
	text, stop := Write(system.String(), prompt.String(), temperature), "end_turn"
	if limit := maxTokens * charsPerToken; utf8.RuneCountInString(text) > limit {
		text, stop = string([]rune(text)[:limit]), "max_tokens"
	}
	usage["outputTokens"] = tokens(text)
	if strings.Contains(prompt.String(), JapaneseMarker) {
		text, stop = japanese(maxTokens*japaneseCharsPerToken), "max_tokens"
		usage["outputTokens"] = maxTokens
	}
	usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
	sendJSON(w, map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]string{"text": text}}}},
		"stopReason": stop,
		"usage":      usage,
		"metrics":    map[string]int{"latencyMs": 1},
	})
}

// charsPerToken is how the stand-in counts tokens: about four characters
// of English text each, as Bedrock's text models do.
const charsPerToken = 4

func tokens(s string) int {
	return (utf8.RuneCountInString(s) + charsPerToken - 1) / charsPerToken
}

// JapaneseMarker in a prompt makes the answer Japanese prose that fills
// the request's token budget, as a model asked for a long Japanese text
// does: about two characters a token, each a word as documents count them
// (shared/documents.Words), so twice as many words as tokens.
const JapaneseMarker = "[standin:japanese]"

const japaneseCharsPerToken = 2

// japaneseProse is repeated to the length asked for.
const japaneseProse = "新しいエスプレッソマシンで、家でもバリスタのようなコーヒーを楽しめます。"

// japanese is n characters of Japanese prose.
func japanese(n int) string {
	unit := []rune(japaneseProse)
	out := make([]rune, 0, n)
	for len(out) < n {
		out = append(out, unit[:min(len(unit), n-len(out))]...)
	}
	return string(out)
}
