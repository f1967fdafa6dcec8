package integration_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/local/lambdalocal"
)

// serve is the HTTP front of the stack under test: the local API Gateway,
// routing by template.yaml to the real Lambda entry points, so every test
// request is turned into a payload 2.0 event as in AWS.
func serve(t testing.TB, a *app.App) http.Handler {
	fns, err := a.APIEntries()
	if err != nil {
		t.Fatal(err)
	}
	g, err := lambdalocal.NewGateway(loadTemplate(t), fns, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The template's 10 s is for AWS; a loaded CI machine gets more room.
	for fn := range g.Timeouts {
		g.Timeouts[fn] = time.Minute
	}
	return g
}
