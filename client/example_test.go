package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"

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
