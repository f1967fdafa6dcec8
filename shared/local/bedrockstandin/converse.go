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

// conversation is a text request as the stand-in read it: a Converse
// call's body, or a batch record's modelInput in Converse's shape or Nova's
// InvokeModel shape (messages-v1), which name the same fields.
type conversation struct {
	system, prompt string
	maxTokens      int
	temperature    float64
}

// readConversation parses and checks a text request as Bedrock does; its
// error is the answer Bedrock gives a malformed one.
func readConversation(body []byte) (conversation, *apiError) {
	var req converseRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return conversation{}, &apiError{http.StatusBadRequest, "ValidationException", "Malformed input request: " + err.Error()}
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
	c := conversation{system: system.String(), prompt: prompt.String(), maxTokens: 5000, temperature: 0.7}
	if req.InferenceConfig.MaxTokens != nil {
		c.maxTokens = *req.InferenceConfig.MaxTokens
	}
	if req.InferenceConfig.Temperature != nil {
		c.temperature = *req.InferenceConfig.Temperature
	}
	switch {
	case len(req.Messages) == 0 || c.prompt == "":
		return c, &apiError{http.StatusBadRequest, "ValidationException", "A conversation must start with a user message."}
	case c.maxTokens < 1 || c.maxTokens > 10000:
		return c, &apiError{http.StatusBadRequest, "ValidationException", "The maximum tokens you requested exceeds the model limit."}
	case c.temperature < 0 || c.temperature > 1:
		return c, &apiError{http.StatusBadRequest, "ValidationException", "temperature must be between 0 and 1."}
	}
	return c, nil
}

// request is the conversation as Requests reports it.
func (c conversation) request(model string) Request {
	return Request{Model: model, System: c.system, Prompt: c.prompt, Temperature: c.temperature, MaxTokens: c.maxTokens}
}

func (s *Server) converse(ctx context.Context, w http.ResponseWriter, model string, body []byte) {
	c, bad := readConversation(body)
	if bad != nil {
		sendError(w, bad.status, bad.code, bad.message)
		return
	}
	f := s.next(c.request(model))
	if s.fault(ctx, w, f) {
		return
	}
	answer := c.reply(f == BlockedOutput)
	answer["metrics"] = map[string]int{"latencyMs": 1}
	sendJSON(w, answer)
}

// reply is the model's answer to c in Converse's response shape (without
// its metrics), which is also Nova's InvokeModel body: the stand-in's
// draft, or nothing where the content filters blocked the output.
func (c conversation) reply(blocked bool) map[string]any {
	usage := map[string]int{"inputTokens": tokens(c.system) + tokens(c.prompt)}
	if blocked {
		usage["outputTokens"], usage["totalTokens"] = 0, usage["inputTokens"]
		return map[string]any{
			"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{}}},
			"stopReason": "content_filtered",
			"usage":      usage,
		}
	}
	text, stop := Write(c.system, c.prompt, c.temperature), "end_turn"
	if limit := c.maxTokens * charsPerToken; utf8.RuneCountInString(text) > limit {
		text, stop = string([]rune(text)[:limit]), "max_tokens"
	}
	usage["outputTokens"] = tokens(text)
	if strings.Contains(c.prompt, JapaneseMarker) {
		text, stop = japanese(c.maxTokens*japaneseCharsPerToken), "max_tokens"
		usage["outputTokens"] = c.maxTokens
	}
	usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
	return map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]string{"text": text}}}},
		"stopReason": stop,
		"usage":      usage,
	}
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
