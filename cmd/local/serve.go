package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/stack"
)

// LocalAccount owns the key serve creates at every start.
const LocalAccount = "local"

var readWrite = []auth.Scope{auth.ScopeRead, auth.ScopeWrite}

// stackConfig is where the local stack listens and keeps its data.
type stackConfig struct {
	APIPort      int    // 0: any free port
	DynamoDBPort int    // 0: any free port
	SQSPort      int    // the webhooks' queue; 0: any free port
	DataDir      string // DynamoDB Local's database
	// DynamoDBExtraAddrs are addresses DynamoDB Local listens on besides
	// 127.0.0.1: on Linux, Docker's bridge, for `sam local invoke`.
	DynamoDBExtraAddrs []string
	// FunctionTimeout, when set, replaces the template's function timeouts:
	// time to step through a handler in a debugger, or for a machine too
	// loaded to answer in 10 s.
	FunctionTimeout time.Duration
	Generation      genConfig
}

// configFromEnv is the configuration of `make run`: $PORT or 3000,
// $DYNAMODB_PORT or 8000, .data/dynamodb in the repository,
// $DYNAMODB_EXTRA_LISTEN (comma-separated addresses) and $FUNCTION_TIMEOUT
// (a Go duration such as 5m) if set.
func configFromEnv(root string) (stackConfig, error) {
	c := stackConfig{DataDir: filepath.Join(root, ".data", "dynamodb")}
	var err error
	if c.APIPort, err = portFromEnv("PORT", 3000); err != nil {
		return c, err
	}
	if c.DynamoDBPort, err = portFromEnv(ddblocal.PortEnv, ddblocal.DefaultPort); err != nil {
		return c, err
	}
	if c.SQSPort, err = sqsPort(); err != nil {
		return c, err
	}
	if v := os.Getenv("DYNAMODB_EXTRA_LISTEN"); v != "" {
		c.DynamoDBExtraAddrs = strings.Split(v, ",")
	}
	if v := os.Getenv("FUNCTION_TIMEOUT"); v != "" {
		if c.FunctionTimeout, err = time.ParseDuration(v); err != nil || c.FunctionTimeout <= 0 {
			return c, fmt.Errorf("FUNCTION_TIMEOUT=%q is not a positive duration such as 5m", v)
		}
	}
	c.Generation, err = genConfigFromEnv()
	return c, err
}

// serve runs the local stack until ctx is done (Ctrl-C).
func serve(ctx context.Context, stdout, stderr io.Writer) error {
	p, err := loadProject()
	if err != nil {
		return err
	}
	cfg, err := configFromEnv(p.root)
	if err != nil {
		return err
	}
	return runStack(ctx, p, cfg, stdout, stderr)
}

// runStack starts DynamoDB Local and the gateway and serves until ctx is
// done, then stops both.
func runStack(ctx context.Context, p *project, cfg stackConfig, stdout, stderr io.Writer) error {
	if err := ensureJar(ctx, p.root, stderr); err != nil {
		return err
	}
	// Bind the API port first: if it is taken, say so before spending
	// seconds on a JVM.
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.APIPort)))
	if err != nil {
		return fmt.Errorf("API port: %w (set PORT to use another)", err)
	}
	defer ln.Close()

	// DYNAMODB_PORT (and its extra addresses) is the vector index
	// stand-in's, in front of DynamoDB Local, which listens on a port of its
	// own on 127.0.0.1: every client of the local stack reaches DynamoDB
	// through the stand-in, as the functions do.
	vectorsLn, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.DynamoDBPort)))
	if err != nil {
		return fmt.Errorf("DynamoDB port: %w (set DYNAMODB_PORT to use another)", err)
	}
	vectorsLn.Close() // said early, as the API port is; taken again below
	local, err := ddblocal.Start(ctx, ddblocal.Options{DataDir: cfg.DataDir})
	if err != nil {
		return err
	}
	defer func() {
		if err := local.Stop(); err != nil {
			fmt.Fprintln(stderr, "local:", err)
		}
	}()
	db, err := ddblocal.StartVectorStandIn(local.Endpoint(), ddblocal.VectorOptions{
		Port:  cfg.DynamoDBPort,
		Addrs: append([]string{"127.0.0.1"}, cfg.DynamoDBExtraAddrs...),
	})
	if err != nil {
		return fmt.Errorf("%w (is port %d taken? set DYNAMODB_PORT to use another)", err, cfg.DynamoDBPort)
	}
	defer db.Close()

	client, err := ddblocal.NewClient(ctx, db.URL())
	if err != nil {
		return err
	}
	tables, err := ddblocal.CreateTables(ctx, client, p.tmpl, "")
	if err != nil {
		return err
	}
	parts, genEnv, err := startGeneration(cfg.Generation)
	if err != nil {
		return err
	}
	defer parts.Close()
	base := "http://" + ln.Addr().String()
	vars := withGeneration(ddblocal.EnvVars(p.tmpl, db.URL(), tables), genEnv, cfg.Generation.RealBedrock)
	// The webhooks' queue, in process, as the S3 server is.
	hooks, err := startWebhookQueue(ctx, p.tmpl, cfg.SQSPort)
	if err != nil && cfg.SQSPort != 0 {
		return fmt.Errorf("%w (is port %d taken? set SQS_PORT to use another)", err, cfg.SQSPort)
	}
	if err != nil {
		return err
	}
	defer hooks.Close()
	maps.Copy(vars, hooks.Vars())
	// Only pages of the local API's own origin may call it from a browser
	// (unless the developer exports another): with "*" any web page could
	// spend the demo key, and with BEDROCK=aws real money.
	vars[app.EnvAllowOrigin] = base
	if err := setEnv(vars, tables); err != nil {
		return err
	}
	a, err := localApp(ctx)
	if err != nil {
		return err
	}
	fns, err := a.APIEntries()
	if err != nil {
		return err
	}
	// The generator function, fed by the tables' streams as the template's
	// event source mappings feed it in AWS (unless the developer exported
	// GENERATION=off).
	if os.Getenv(app.EnvGeneration) == "on" {
		stream, err := a.GeneratorEntry()
		if err != nil {
			return err
		}
		if _, err := stack.DeliverGenerator(ctx, client, db.URL(), p.tmpl, tables, stream, newLogger(stderr)); err != nil {
			return err
		}
	}
	// The webhook sender, fed by the local queue as the template's mapping
	// feeds it in AWS.
	if err := runSender(ctx, hooks, a, stderr); err != nil {
		return err
	}
	// The tally function, fed by the tables' streams whether generation is
	// on or off: deletes' counts come down through it.
	tally, err := a.Tally()
	if err != nil {
		return err
	}
	if _, err := stack.DeliverTally(ctx, client, db.URL(), p.tmpl, tables, tally, newLogger(stderr)); err != nil {
		return err
	}
	// And on its schedule, as the template's rule invokes it in AWS: what
	// an outage left open settles whether or not the account writes.
	entry, err := a.TallyEntry()
	if err != nil {
		return err
	}
	sweeps, err := lambdalocal.RunSchedules(ctx, p.tmpl, app.TallyFunction, lambdalocal.Entry(entry), newLogger(stderr))
	if err != nil {
		return err
	}
	var every []string
	for _, s := range sweeps {
		every = append(every, s.Every.String())
	}
	gw, err := lambdalocal.NewGateway(p.tmpl, fns, newLogger(stderr), stdout)
	if err != nil {
		return err
	}
	gw.Host = ln.Addr().String()
	if cfg.FunctionTimeout > 0 {
		for f := range gw.Timeouts {
			gw.Timeouts[f] = cfg.FunctionTimeout
		}
	}

	keys := auth.NewKeys(client, os.Getenv(app.EnvKeysTable), auth.PublicChecksum)
	if err := keys.Import(ctx, auth.DemoKey, auth.DemoAccount, readWrite); err != nil {
		return fmt.Errorf("import the demo key: %w", err)
	}
	key, info, err := keys.Create(ctx, LocalAccount, readWrite, time.Time{})
	if err != nil {
		return fmt.Errorf("create a key: %w", err)
	}

	fmt.Fprintf(stdout, `
Local API:       %[1]s/api/v1/  (routes from template.yaml)
DynamoDB Local:  %[2]s  (data in %[3]s; vector indexes by a local stand-in in front of it)
%[9]s
Generator:       the tables' streams, filtered as template.yaml says, to GeneratorFunction
Tally:           deletes, from the tables' streams, to TallyFunction (counts trail a delete by its lag);
                 and every %[10]s, its sweep, which settles what an outage left open

A new API key for account %[4]q (read, write), key id %[5]s; shown only now:

  %[6]s

  curl -s -H 'Authorization: Bearer %[6]s' %[1]s/api/v1/images
  curl -s -H 'Authorization: Bearer %[6]s' -d name=Hello -d prompt='Say hi' %[1]s/api/v1/documents

The demo key (account %[7]q), used by events/ and docs, works too:
  %[8]s

Ctrl-C stops them all.

`, base, db.URL(), cfg.DataDir, LocalAccount, info.KeyID, key, auth.DemoAccount, auth.DemoKey, parts.Banner(), strings.Join(every, ", "))

	srv := &http.Server{
		Handler:           gw,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    lambdalocal.MaxHeaderBytes,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return err
	case <-local.Done():
		err = errors.New("DynamoDB Local exited unexpectedly")
	case <-ctx.Done():
		fmt.Fprintln(stderr, "local: stopping")
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdownCtx); serr != nil && err == nil {
		err = serr
	}
	return err
}

// ensureJar installs DynamoDB Local through the Makefile when it is missing,
// so `go run ./cmd/local` works from a fresh clone as `make run` does; the
// Makefile holds the one pinned version.
func ensureJar(ctx context.Context, root string, stderr io.Writer) error {
	if _, err := ddblocal.JarPath(); err == nil {
		return nil
	}
	fmt.Fprintln(stderr, "local: DynamoDB Local is missing; running make dynamodb-local")
	cmd := exec.CommandContext(ctx, "make", "-C", root, "dynamodb-local")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make dynamodb-local: %w", err)
	}
	_, err := ddblocal.JarPath()
	return err
}
