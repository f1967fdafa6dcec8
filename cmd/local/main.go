// Command local runs the API on this machine: DynamoDB Local holding the
// tables of template.yaml, and a local API Gateway HTTP API that turns each
// request into the payload 2.0 event AWS would send and passes it to the
// same Lambda entry points the deployed functions run.
//
//	go run ./cmd/local [serve]            the local stack (make run)
//	go run ./cmd/local invoke EVENT.json  one event through its function,
//	                                      against the running local stack
//
// Environment: PORT (default 3000) for the API, DYNAMODB_PORT (default
// 8000) for DynamoDB Local, FUNCTION_TIMEOUT (e.g. 5m, for a debugger) to
// replace the template's function timeouts. The API and DynamoDB Local
// listen on 127.0.0.1 only; DYNAMODB_EXTRA_LISTEN adds addresses for
// DynamoDB Local (Docker's bridge, for `sam local invoke` on Linux). Data
// lives in .data/dynamodb and survives restarts. The function settings
// (LOG_LEVEL, AUTH_CACHE_SECONDS, ...) default to the template's parameter
// defaults and can be overridden from the environment.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
)

const usage = `usage:
  go run ./cmd/local [serve]              run the local stack (DynamoDB Local + API)
  go run ./cmd/local invoke EVENT.json    run one event against the running local stack
  go run ./cmd/local sam-env              write events/env.json from template.yaml (make generate)

environment: PORT (API, default 3000), DYNAMODB_PORT (DynamoDB Local, default 8000),
             DYNAMODB_EXTRA_LISTEN (addresses besides 127.0.0.1 for DynamoDB Local,
             e.g. Docker's bridge 172.17.0.1 for sam local invoke on Linux),
             FUNCTION_TIMEOUT (e.g. 5m: replaces the template's function timeouts)
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch {
	case cmd == "serve" && len(args) == 0:
		return serve(ctx, stdout, stderr)
	case cmd == "invoke" && len(args) == 1:
		return invoke(ctx, args[0], stdout, stderr)
	case cmd == "sam-env" && len(args) == 0:
		p, err := loadProject()
		if err != nil {
			return err
		}
		return writeSAMLocalEnv(p.root, p.tmpl)
	case cmd == "help" || cmd == "-h" || cmd == "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return errors.New("bad arguments")
}

// project is the repository the command runs in.
type project struct {
	root string // where template.yaml is
	tmpl *sam.Template
}

func loadProject() (*project, error) {
	path, err := sam.Find()
	if err != nil {
		return nil, err
	}
	tmpl, err := sam.Load(path)
	if err != nil {
		return nil, err
	}
	return &project{root: filepath.Dir(path), tmpl: tmpl}, nil
}

// forced are the variables setEnv sets whatever the developer exported.
var forced = map[string]bool{
	app.EnvEndpoint: true, app.EnvKeyChecksum: true,
	app.EnvBedrockEndpoint: true, app.EnvS3Endpoint: true, app.EnvPicturesBucket: true,
	app.EnvWebhookQueue: true, app.EnvWebhookSlowQueue: true, app.EnvSQSEndpoint: true,
}

// setEnv puts the functions' configuration into this process's environment,
// where app.FromEnv reads it. The wiring (endpoint, table names, region,
// credentials, and no checksum secret, so the demo key works even in a shell
// that exported a deployed stack's) always points at the local stack; a
// setting the developer exported (LOG_LEVEL=debug make run) is kept.
func setEnv(vars map[string]string, tables map[string]string) error {
	wiring := map[string]bool{}
	for _, name := range tables {
		wiring[name] = true
	}
	for k, v := range vars {
		exported := os.Getenv(k) != ""
		if exported && !wiring[v] && !forced[k] && !strings.HasPrefix(k, "AWS_") {
			continue
		}
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

func portFromEnv(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > 65535 {
		return 0, fmt.Errorf("%s=%q is not a port number", name, v)
	}
	return n, nil
}

// localTables are the local stack's table names: the logical IDs, as in
// events/env.json for `sam local`.
func localTables(tmpl *sam.Template) map[string]string {
	names := map[string]string{}
	for _, id := range tmpl.ResourcesOfType(sam.TableType) {
		names[id] = id
	}
	return names
}

func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}

// dynamoDBEndpoint is the local stack's DynamoDB Local.
func dynamoDBEndpoint() (string, error) {
	port, err := portFromEnv(ddblocal.PortEnv, ddblocal.DefaultPort)
	if err != nil {
		return "", err
	}
	return "http://127.0.0.1:" + strconv.Itoa(port), nil
}
