package client_test

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestClientIsGenerated runs the generator of generate.go again, to
// standard output, and compares: a client.gen.go that no longer matches
// openapi.yaml (or the generator's settings) fails here. The first run
// fetches the pinned generator through the module proxy.
func TestClientIsGenerated(t *testing.T) {
	args := generateCommand(t)
	i := slices.Index(args, "-o")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("the go:generate line names no output (-o): %v", args)
	}
	output := args[i+1]
	args = slices.Delete(args, i, i+2) // to standard output
	cmd := exec.Command(goTool(t), args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	fresh, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	committed, err := os.ReadFile(output)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatalf("%s is stale: run make generate and commit it", output)
	}
}

// generateCommand is the go:generate line of generate.go, split into words.
func generateCommand(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("generate.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate "); ok {
			args := strings.Fields(rest)
			if len(args) < 2 || args[0] != "go" {
				t.Fatalf("go:generate does not run go: %q", line)
			}
			return args
		}
	}
	t.Fatal("generate.go has no go:generate line")
	return nil
}

// goTool is the go command of the toolchain running the test (go test
// puts its bin directory first in PATH).
func goTool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command: %v", err)
	}
	return path
}
