package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/shlex"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/doccheck"
)

// Every apikey command the pages show (README.md and docs/*.md: `go run
// ./cmd/apikey ...`, and `make apikey` and `make limits` as the Makefile
// spells them out) runs, in the pages' order, against DynamoDB Local: the
// deployed stack's endpoint, region and tables give way to the test's,
// and a placeholder key id to a key that exists.
func TestDocsCommands(t *testing.T) {
	t.Setenv(checksumEnv, "")
	env := ddblocal.NewTestEnv(t)
	keys, webhooks := env.Tables["ApiKeysTable"], env.Tables[app.WebhooksTable]
	t.Setenv("API_KEYS_TABLE", keys)
	t.Setenv(app.EnvWebhooksTable, webhooks)
	t.Setenv("DYNAMODB_ENDPOINT", env.Endpoint)
	// Every resource's table, as a deployed stack's outputs name them
	// (ImagesTableName) and the commands' flags take them (--images-table).
	expansions := []string{`"$(output WebhooksTableName)"`, webhooks, `"$KEYS_TABLE"`, keys}
	values := map[string]string{"--endpoint": env.Endpoint, "--table": keys, "--webhooks-table": webhooks}
	for _, r := range app.Resources {
		table := env.Tables[r.Table()]
		t.Setenv(r.TableEnv(), table)
		expansions = append(expansions, `"$(output `+r.Table()+`Name)"`, table)
		values["--"+r.Def.Name+"-table"] = table
	}

	var out, errOut bytes.Buffer
	if err := run([]string{"create", "--account", "acme"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	keyID := regexp.MustCompile(`key_[0-9a-z]{12}`).FindString(errOut.String())
	if keyID == "" {
		t.Fatalf("create's summary names no key id: %q", errOut.String())
	}
	expand := strings.NewReplacer(expansions...)

	commands := docsCommands(t)
	if len(commands) < 8 {
		t.Fatalf("found %d apikey commands in the pages: the patterns no longer find them", len(commands))
	}
	for _, line := range commands {
		words, err := shlex.Split(expand.Replace(line))
		if err != nil || len(words) < 3 {
			t.Fatalf("%s: %v", line, err)
		}
		// make's variables, which it passes in the environment: each
		// kind's limit for limits --from-env, which then shows it.
		var shown []*regexp.Regexp
		var set []string
		for len(words) > 3 && strings.Contains(words[0], "=") {
			name, value, _ := strings.Cut(words[0], "=")
			t.Setenv(name, value)
			set = append(set, name)
			shown = append(shown, regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(strings.ToLower(name))+`\s+`+regexp.QuoteMeta(value)+`$`))
			words = words[1:]
		}
		var args []string
		for i := 3; i < len(words); i++ { // after go run ./cmd/apikey
			w := words[i]
			switch {
			case w == "--region" && i+1 < len(words):
				i++ // the test's endpoint has no region
			case values[w] != "" && i+1 < len(words):
				args = append(args, w, values[w])
				i++
			case regexp.MustCompile(`^key_x+$`).MatchString(w):
				args = append(args, keyID)
			default:
				args = append(args, w)
			}
		}
		t.Logf("%s\n\tran apikey %s", line, strings.Join(args, " "))
		out.Reset()
		errOut.Reset()
		if err := run(args, &out, &errOut); err != nil {
			t.Errorf("%s: %v\n%s", line, err, errOut.String())
		}
		for _, re := range shown {
			if !re.MatchString(out.String()) {
				t.Errorf("%s: the limits shown lack %s:\n%s", line, re, out.String())
			}
		}
		for _, name := range set {
			t.Setenv(name, "")
		}
	}
}

// docsCommands are the apikey commands of the pages, in order, with make's
// spelled out by make -n.
func docsCommands(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	pages, err := doccheck.ReadPages(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range doccheck.Commands(pages, "go run ./cmd/apikey", "make") {
		if rest, ok := strings.CutPrefix(c, "make "); ok {
			out = append(out, makeCommands(t, root, rest)...)
		} else {
			out = append(out, c)
		}
	}
	return out
}

// makeCommands are the apikey commands make would run for args, as make
// -n prints them; none for a target that runs no apikey.
func makeCommands(t *testing.T, root, args string) []string {
	t.Helper()
	words, err := shlex.Split(args)
	if err != nil {
		t.Fatal(err)
	}
	if len(words) == 0 || !regexp.MustCompile(`^(-s )?(apikey|limits)\b`).MatchString(strings.Join(words, " ")) {
		return nil
	}
	cmd := exec.Command("make", append([]string{"-n"}, words...)...)
	cmd.Dir = root
	printed, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n %s: %v", args, err)
	}
	// The kinds' variables go to apikey in the environment (make passes
	// those of its command line); ACCOUNT is spelled out in the command.
	var vars []string
	for _, w := range words {
		if name, value, ok := strings.Cut(w, "="); ok && name != "ACCOUNT" && name != "SCOPE" {
			vars = append(vars, name+"="+strconv.Quote(value))
		}
	}
	var out []string
	for _, line := range strings.Split(strings.ReplaceAll(string(printed), "\\\n", " "), "\n") {
		if _, cmd, ok := strings.Cut(line, "run ./cmd/apikey "); ok {
			out = append(out, strings.Join(append(vars, "go run ./cmd/apikey "+cmd), " "))
		}
	}
	if len(out) == 0 {
		t.Fatalf("make %s runs no apikey command", args)
	}
	return out
}
