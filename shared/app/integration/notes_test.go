package integration_test

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

// notesByHand is what a developer writes by hand into the documents for
// notes, as "Adding a resource" lists it, each part where it goes (the
// text it is put before or after); make generate (listgen) writes the
// rest. TestAThirdResource takes the documents through the same steps.
var notesByHand = []struct {
	doc, before, after, text string
	// generated: only for a resource with Content (the generator reads
	// its table).
	generated bool
}{
	// template.yaml: its quota kind's default, its function, and its table
	// where the functions that read every table (the first, the tally, the
	// generator: app.DeployedEnv) are given the others'.
	{doc: "template.yaml", before: "  DeletionProtection:\n", text: `  DefaultMonthlyNotes:
    Type: String
    Default: '100'
    AllowedPattern: '^(unlimited|0|[1-9][0-9]{0,14})$'
    Description: Notes an account may make a month unless it has a limit of its own.
`},
	{doc: "template.yaml", after: "        DEFAULT_MONTHLY_READS: !Ref DefaultMonthlyReads  # app.EnvDefaultMonthly(reads)\n",
		text: "        DEFAULT_MONTHLY_NOTES: !Ref DefaultMonthlyNotes  # app.EnvDefaultMonthly(notes)\n"},
	{doc: "template.yaml", before: "          # GET /api/v1/usage reads the other resources' counter items too.\n",
		text: "          NOTES_TABLE: !Ref NotesTable  # notes.Resource TableEnv\n"},
	{doc: "template.yaml", before: "          # The keys' secret is the API's business, not the tally's.\n",
		text: "          NOTES_TABLE: !Ref NotesTable  # notes.Resource TableEnv\n"},
	{doc: "template.yaml", before: "          PICTURES_BUCKET: !Ref PicturesBucket  # app.EnvPicturesBucket\n",
		text: "          NOTES_TABLE: !Ref NotesTable  # notes.Resource TableEnv\n", generated: true},
	{doc: "template.yaml", before: "\nOutputs:\n", text: `
  NotesFunction:
    Type: AWS::Serverless::Function
    Metadata:
      BuildMethod: makefile
    Properties:
      CodeUri: .
      Timeout: 29
      LoggingConfig:
        LogGroup: !Ref NotesLogGroup
      Environment:
        # make generate: each name from its comment
        Variables:
          NOTES_TABLE: !Ref NotesTable  # notes.Resource TableEnv
      Policies:
        - Version: '2012-10-17'
          Statement:
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:PutItem, dynamodb:UpdateItem, dynamodb:Query, dynamodb:BatchGetItem]
              Resource:
                - !GetAtt NotesTable.Arn
                - !Sub '${NotesTable.Arn}/index/*'
            - Effect: Allow
              Action: dynamodb:GetItem
              Resource: !GetAtt ApiKeysTable.Arn
            - Effect: Allow
              Action: dynamodb:UpdateItem
              Resource: [!GetAtt RateLimitTable.Arn, !GetAtt IdempotencyTable.Arn]
      # make generate: routes of NotesFunction
      Events:
        ListNotes:
          Type: HttpApi
          Properties: {ApiId: !Ref HttpApi, Method: GET, Path: /api/v1/notes}
`},
	// Its generations' spend is held on the accounts' spend ledgers, in
	// the first generated resource's table.
	{doc: "template.yaml", before: "      Policies:\n        - Version: '2012-10-17'\n          Statement:\n            - Effect: Allow\n              Action: [dynamodb:GetItem, dynamodb:PutItem, dynamodb:UpdateItem, dynamodb:Query, dynamodb:BatchGetItem]\n              Resource:\n                - !GetAtt NotesTable.Arn\n",
		text: "          IMAGES_TABLE: !Ref ImagesTable  # images.Resource TableEnv\n", generated: true},
	{doc: "template.yaml", after: "                - !Sub '${NotesTable.Arn}/index/*'\n",
		text: "            - Effect: Allow\n              Action: dynamodb:UpdateItem\n              Resource: !GetAtt ImagesTable.Arn\n", generated: true},
	// openapi.yaml: its tag, its request bodies, their schemas, its
	// record's schema and its new field's input schema, with marks where
	// they copy declared values.
	{doc: "openapi.yaml", before: "  - name: usage\n", text: `  - name: notes
    description: Short notes written from a topic.
`},
	{doc: "openapi.yaml", after: "  requestBodies:\n", text: `    NoteCreate:
      required: true
      description: The new note; any other field is 422.
      content:
        application/x-www-form-urlencoded:
          schema: {$ref: '#/components/schemas/NoteCreate'}
        application/json:
          schema: {$ref: '#/components/schemas/NoteCreate'}
    NoteUpdate:
      required: true
      description: The fields to change; any other field is 422.
      content:
        application/x-www-form-urlencoded:
          schema: {$ref: '#/components/schemas/NoteUpdate'}
        application/json:
          schema: {$ref: '#/components/schemas/NoteUpdate'}
    NoteRegenerate:
      required: false
      description: A new topic, or none to write the note again from its own.
      content:
        application/x-www-form-urlencoded:
          schema: {$ref: '#/components/schemas/NoteRegenerate'}
        application/json:
          schema: {$ref: '#/components/schemas/NoteRegenerate'}
`},
	{doc: "openapi.yaml", before: "    # make generate: schemas of the resources\n", text: `    TopicInput:
      description: What a note is about.
      type: string
      # make generate: notes.Resource topic minLength
      minLength: 1
      # make generate: notes.Resource topic maxLength
      maxLength: 500
    NoteName:
      type: string
      # make generate: notes.Resource name minLength
      minLength: 1
      # make generate: notes.Resource name maxLength
      maxLength: 128
    NoteText:
      type: string
      # make generate: notes.Resource result minLength
      minLength: 1
      # make generate: notes.Resource result maxLength
      maxLength: 1000
    NoteCreate:
      type: object
      required: [name, topic]
      additionalProperties: false
      properties:
        name: {$ref: '#/components/schemas/NoteName'}
        topic: {$ref: '#/components/schemas/TopicInput'}
    NoteUpdate:
      type: object
      additionalProperties: false
      properties:
        name: {$ref: '#/components/schemas/NoteName'}
        result: {$ref: '#/components/schemas/NoteText'}
        favorite: {$ref: '#/components/schemas/FavoriteInput'}
    NoteRegenerate:
      type: object
      additionalProperties: false
      properties:
        topic: {$ref: '#/components/schemas/TopicInput'}
    Note:
      type: object
      required: [id, name, topic, result, favorite, generation, created_at, updated_at]
      additionalProperties: false
      properties:
        id: {type: integer, format: int64, minimum: 1}
        name: {$ref: '#/components/schemas/NoteName'}
        topic: {type: string}
        result:
          anyOf:
            - $ref: '#/components/schemas/NoteText'
            - type: 'null'
        favorite: {type: boolean}
        generation:
          anyOf:
            - $ref: '#/components/schemas/Generation'
            - type: 'null'
        created_at: {$ref: '#/components/schemas/Timestamp'}
        updated_at: {$ref: '#/components/schemas/Timestamp'}
      examples:
        - &noteExample {id: 1, name: Groceries, topic: What to buy, result: Milk and bread., favorite: false,
            generation: null, created_at: '2026-11-21T16:48:30.000000Z', updated_at: '2026-11-21T16:48:30.000000Z'}
`},
	{doc: "openapi.yaml", before: "\n# What the service posts to a registered endpoint", text: `    NoteEvent:
      summary: A note generated
      value: {type: note.generated, timestamp: '2026-11-21T16:48:41.000000Z', data: *noteExample}
`, generated: true},
}
