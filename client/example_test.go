package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"contentapi/client"
)

// docs/api.md shows this example's body; TestDocsShowTheExamples keeps
// the two the same, so the page's code compiles.
func Example() {
	api, err := client.NewClientWithResponses("http://127.0.0.1:3000",
		client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+os.Getenv("KEY"))
			return nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	style := client.StyleDigitalArt
	created, err := api.CreateImageWithResponse(ctx, nil, client.ImageCreate{
		Name: "Sunset", Description: "A red sky over the sea", Resolution: client.N1024x1024, Style: &style})
	if err != nil {
		log.Fatal(err) // the request did not get an answer
	}
	switch {
	case created.JSON201 != nil:
		fmt.Println("created image", created.JSON201.Data.Id, created.Headers201.Location)
	case created.JSON422 != nil:
		fmt.Println("invalid:", created.JSON422.Errors) // per field
	default:
		fmt.Println("status", created.StatusCode(), string(created.Body))
	}
	search, perPage := "sunset", 25
	page, err := api.ListImagesWithResponse(ctx, &client.ListImagesParams{Search: &search, PerPage: &perPage})
	if err != nil {
		log.Fatal(err)
	}
	if page.JSON200 != nil {
		fmt.Println(page.JSON200.Meta.Total, "images match")
	}
}

// docs/webhooks.md shows this receiver's body: a delivery verified with
// the Standard Webhooks library. It is compiled, not run (it serves).
func Example_webhookReceiver() {
	wh, err := standardwebhooks.NewWebhook(os.Getenv("WEBHOOK_SECRET")) // the whsec_... of the 201
	if err != nil {
		log.Fatal(err)
	}
	http.HandleFunc("/content", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || wh.Verify(body, r.Header) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var event struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &event); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		// Deliveries come at least once: act once per webhook-id.
		fmt.Println(r.Header.Get("webhook-id"), event.Type)
		w.WriteHeader(http.StatusNoContent)
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
}
