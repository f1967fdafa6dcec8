package app_test

import (
	"context"

	"contentapi/shared/generation"
	"contentapi/shared/records"
)

// notes is a throwaway third resource, declared as a new resource's package
// declares itself (docs/architecture.md, "Adding a resource"), in the
// domain's terms alone: its fields, how its records read, and what it
// generates. TestAThirdResource serves it beside images and documents.
var notes = &records.Resource{
	Name:   "notes",
	Object: "note",
	Fields: []records.Field{
		{Name: "name", Kind: records.Text{Min: 1, Max: 128}, Required: true, Create: true, Update: true},
		{Name: "topic", Kind: records.Text{Min: 1, Max: 500}, Required: true, Create: true, Regenerate: true},
		{Name: "result", Kind: records.Text{Min: 1, Max: noteMax}, Update: true},
		{Name: "favorite", Kind: records.Bool{}, Update: true},
	},
	Filters:   []records.Filter{{Param: "favorite", Kind: records.Bool{}}},
	SearchBy:  []string{"name", "result"},
	Generated: "result",
	Render: records.RenderAs(func(n *note, view records.View) error {
		n.Generation = view.State(n.Generation)
		return nil
	}),
	Content: &generation.Content{Make: writeNote},
}

// note is a note as the API shows it.
type note struct {
	ID         int64             `json:"id" dynamodbav:"id"`
	Name       string            `json:"name" dynamodbav:"name"`
	Topic      string            `json:"topic" dynamodbav:"topic"`
	Result     *string           `json:"result" dynamodbav:"result"`
	Favorite   bool              `json:"favorite" dynamodbav:"favorite"`
	Generation *generation.State `json:"generation" dynamodbav:"generation"`
	CreatedAt  string            `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt  string            `json:"updated_at" dynamodbav:"updated_at"`
}

// noteBrief is what the text model is told to write; the stand-in keeps to
// the limit it states.
const (
	noteMax   = 1000
	noteBrief = "Write a short note on the topic you are given. It must fit in 1000 characters."
)

// writeNote writes a note's result with the text model.
func writeNote(ctx context.Context, m generation.Models, r generation.Record) (generation.Output, error) {
	var n note
	if err := r.Decode(&n); err != nil {
		return generation.Output{}, err
	}
	res, err := m.Text.Text(ctx, generation.TextRequest{System: noteBrief, Prompt: n.Topic, Temperature: 0.5, MaxTokens: 400})
	if err != nil {
		return generation.Output{}, err
	}
	return generation.Output{
		Fields: map[string]any{"result": res.Text},
		Model:  res.Model,
		Usage:  generation.Tokens(res.InputTokens, res.OutputTokens),
	}, nil
}
