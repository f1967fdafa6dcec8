package bedrockstandin

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"contentapi/shared/fold"
)

// EmbeddingModel is the local stack's embedding model id.
const EmbeddingModel = "local-standin.embed"

// embed answers InvokeModel in the shape of Amazon Titan Text Embeddings
// V2: {inputText, dimensions, normalize, embeddingTypes} -> {embedding,
// inputTextTokenCount, embeddingsByType}.
//
// Its vectors are not a model's: each word of the text (case and accents
// folded, a plural's s dropped, the words a draft leaves out left out) adds
// one to a coordinate picked by the word's hash, with a sign picked the
// same way, and the sum is scaled to length 1. Texts that share words lie
// close, texts that share none nearly orthogonal, and the same text always
// gives the same vector: enough for local results to make sense and for
// tests to assert an order. It knows nothing of synonyms.
func (s *Server) embed(ctx context.Context, w http.ResponseWriter, model string, body []byte) {
	var req struct {
		InputText      *string  `json:"inputText"`
		Dimensions     *int     `json:"dimensions"`
		Normalize      *bool    `json:"normalize"`
		EmbeddingTypes []string `json:"embeddingTypes"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		sendError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: "+err.Error())
		return
	}
	dims, normalize := 1024, true
	if req.Dimensions != nil {
		dims = *req.Dimensions
	}
	if req.Normalize != nil {
		normalize = *req.Normalize
	}
	text := ""
	if req.InputText != nil {
		text = *req.InputText
	}
	switch n := utf8.RuneCountInString(text); {
	case req.InputText == nil:
		sendError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: #: required key [inputText] not found, please reformat your input and try again.")
		return
	case n < 1 || n > 50000:
		sendError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: #/inputText: expected minLength: 1, maxLength: 50000, please reformat your input and try again.")
		return
	case dims != 256 && dims != 512 && dims != 1024:
		sendError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: #/dimensions: 256, 512 or 1024 expected, please reformat your input and try again.")
		return
	}
	for _, t := range req.EmbeddingTypes {
		if t != "float" && t != "binary" {
			sendError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: #/embeddingTypes: float or binary expected, please reformat your input and try again.")
			return
		}
	}
	if s.fault(ctx, w, s.next(Request{Model: model, Embed: text, Dimensions: dims})) {
		return
	}
	vec, tokens := Embedding(text, dims, normalize)
	// embeddingsByType is always there, float when nothing else was asked.
	types := req.EmbeddingTypes
	if len(types) == 0 {
		types = []string{"float"}
	}
	byType := map[string]any{}
	for _, t := range types {
		if t == "float" {
			byType["float"] = vec
			continue
		}
		bits := make([]int, len(vec))
		for i, f := range vec {
			if f > 0 {
				bits[i] = 1
			}
		}
		byType["binary"] = bits
	}
	out := map[string]any{"embedding": vec, "inputTextTokenCount": tokens, "embeddingsByType": byType}
	sendJSON(w, out)
}

// Embedding is the stand-in's vector of text and its token count (the
// number of words): see embed. Tests use it to place records.
func Embedding(text string, dims int, normalize bool) ([]float32, int) {
	sum := make([]float64, dims)
	words := strings.FieldsFunc(fold.String(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, word := range words {
		// The words a draft leaves out carry no meaning of their own: left
		// in, they would make any two English sentences look alike.
		if stopWords[word] || joinWords[word] {
			continue
		}
		if len(word) > 3 && strings.HasSuffix(word, "s") && !strings.HasSuffix(word, "ss") {
			word = word[:len(word)-1]
		}
		h := fnv.New64a()
		h.Write([]byte(word))
		x := h.Sum64()
		if x>>63 == 1 {
			sum[x%uint64(dims)]--
		} else {
			sum[x%uint64(dims)]++
		}
	}
	var norm float64
	for _, f := range sum {
		norm += f * f
	}
	norm = math.Sqrt(norm)
	vec := make([]float32, dims)
	if norm == 0 {
		vec[0] = 1 // no word at all: one fixed direction
		return vec, len(words)
	}
	for i, f := range sum {
		if normalize {
			f /= norm
		}
		vec[i] = float32(f)
	}
	return vec, len(words)
}
