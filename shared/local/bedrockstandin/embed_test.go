package bedrockstandin_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	runtimetypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"contentapi/shared/local/bedrockstandin"
)

type embedding struct {
	Embedding           []float64 `json:"embedding"`
	InputTextTokenCount int       `json:"inputTextTokenCount"`
	EmbeddingsByType    struct {
		Float []float64 `json:"float"`
	} `json:"embeddingsByType"`
}

func embedVia(t *testing.T, runtime *bedrockruntime.Client, body string) (embedding, error) {
	t.Helper()
	out, err := runtime.InvokeModel(context.Background(), &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(bedrockstandin.EmbeddingModel), Body: []byte(body),
		ContentType: aws.String("application/json"), Accept: aws.String("application/json"),
	})
	var e embedding
	if err == nil {
		err = json.Unmarshal(out.Body, &e)
	}
	return e, err
}

func cosine(a, b []float64) float64 {
	var dot, aa, bb float64
	for i := range a {
		dot, aa, bb = dot+a[i]*b[i], aa+a[i]*a[i], bb+b[i]*b[i]
	}
	return dot / math.Sqrt(aa*bb)
}

// Titan Text Embeddings V2's body in, its answer out, through the real
// SDK client: a unit vector of the asked size, the same for the same
// text, nearer for texts that share words than for texts that share none.
func TestEmbeddingsPlaceSharedWordsClose(t *testing.T) {
	s := startStandin(t)
	runtime := bedrockruntime.New(bedrockruntime.Options{Region: "us-west-2", Credentials: localCredentials, BaseEndpoint: aws.String(s.URL())})
	get := func(text string) []float64 {
		body, _ := json.Marshal(map[string]any{"inputText": text, "dimensions": 256, "normalize": true})
		e, err := embedVia(t, runtime, string(body))
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Embedding) != 256 || len(e.EmbeddingsByType.Float) != 256 || e.InputTextTokenCount < 1 {
			t.Fatalf("%q: %d dimensions, %d tokens", text, len(e.Embedding), e.InputTextTokenCount)
		}
		return e.Embedding
	}
	sale := get("The post about our summer sale")
	again := get("the post about our SUMMER sale")
	paraphrase := get("Summer sales are here: everything half price")
	other := get("Quarterly tax filing checklist for accountants")

	if c := cosine(sale, again); c < 0.9999 {
		t.Errorf("same words, other case: cosine %v, want 1", c)
	}
	var length float64
	for _, f := range sale {
		length += f * f
	}
	if math.Abs(length-1) > 1e-4 {
		t.Errorf("normalized vector has length² %v", length)
	}
	if near, far := cosine(sale, paraphrase), cosine(sale, other); near <= far || near < 0.3 {
		t.Errorf("cosine to a text sharing words %v, to one sharing none %v: want the first clearly higher", near, far)
	}
	if got := s.Requests(); got[len(got)-1].Embed != "Quarterly tax filing checklist for accountants" || got[len(got)-1].Dimensions != 256 {
		t.Errorf("last request = %+v", got[len(got)-1])
	}
}

// What Titan Text Embeddings V2 refuses, the stand-in refuses as
// ValidationException; faults reach embeddings as they reach the rest.
func TestEmbeddingsRefuse(t *testing.T) {
	s := startStandin(t)
	runtime := bedrockruntime.New(bedrockruntime.Options{Region: "us-west-2", Credentials: localCredentials, BaseEndpoint: aws.String(s.URL())})
	for _, body := range []string{`{"inputText":""}`, `{"inputText":"x","dimensions":300}`, `{"inputText":"x","embeddingTypes":["int8"]}`} {
		var invalid *runtimetypes.ValidationException
		if _, err := embedVia(t, runtime, body); !errors.As(err, &invalid) {
			t.Errorf("%s: %v, want ValidationException", body, err)
		}
	}
	if e, err := embedVia(t, runtime, `{"inputText":"default size"}`); err != nil || len(e.Embedding) != 1024 {
		t.Errorf("default dimensions: %d, %v; want 1024", len(e.Embedding), err)
	}
	var throttled *runtimetypes.ThrottlingException
	if _, err := embedVia(t, runtime, `{"inputText":"busy [standin:throttle]"}`); !errors.As(err, &throttled) {
		t.Errorf("injected throttle: %v", err)
	}
}
