package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
)

// invoke runs the event in file through the function its route belongs to,
// against the running local stack, and prints the response: `sam local
// invoke -e` without Docker.
func invoke(ctx context.Context, file string, stdout, stderr io.Writer) error {
	p, err := loadProject()
	if err != nil {
		return err
	}
	ev, err := readEvent(file)
	if err != nil {
		return err
	}
	function, err := functionFor(p.tmpl, ev)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	endpoint, err := dynamoDBEndpoint()
	if err != nil {
		return err
	}
	if err := ping(ctx, endpoint); err != nil {
		return fmt.Errorf("no DynamoDB Local answers on %s (%v): start the local stack with `make run` first", endpoint, err)
	}
	tables := localTables(p.tmpl)
	if err := setEnv(ddblocal.EnvVars(p.tmpl, endpoint, tables), tables); err != nil {
		return err
	}
	a, err := app.FromEnv(ctx)
	if err != nil {
		return err
	}
	fns, err := a.Functions()
	if err != nil {
		return err
	}
	resp, err := fns[function](ctx, ev)
	if err != nil {
		return fmt.Errorf("%s returned an error (API Gateway would answer 500): %w", function, err)
	}
	fmt.Fprintf(stderr, "%s %s -> %d\n", function, ev.RouteKey, resp.StatusCode)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(resp)
}

func readEvent(file string) (events.APIGatewayV2HTTPRequest, error) {
	var ev events.APIGatewayV2HTTPRequest
	b, err := os.ReadFile(file)
	if err != nil {
		return ev, err
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return ev, fmt.Errorf("%s: %w", file, err)
	}
	if ev.Version != "2.0" {
		return ev, fmt.Errorf("%s: version %q: not an HTTP API payload 2.0 event", file, ev.Version)
	}
	return ev, nil
}

// functionFor is the function API Gateway would have invoked for ev: the
// one whose route has ev's routeKey. An event whose route has left the
// template is an error rather than a guess.
func functionFor(tmpl *sam.Template, ev events.APIGatewayV2HTTPRequest) (string, error) {
	for _, r := range tmpl.Routes() {
		if r.Key() == ev.RouteKey {
			return r.Function, nil
		}
	}
	return "", fmt.Errorf("routeKey %q is not a route of template.yaml", ev.RouteKey)
}

func ping(ctx context.Context, endpoint string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	client, err := ddblocal.NewClient(ctx, endpoint)
	if err != nil {
		return err
	}
	_, err = client.ListTables(ctx, &dynamodb.ListTablesInput{})
	return err
}
