package stack

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// LambdaFlags are the deployed bootstrap's (the Makefile's build-<Function>
// targets): no RPC, no HTTP/2, no paths, no symbols.
var LambdaFlags = []string{"-tags", "lambda.norpc,nethttpomithttp2", "-trimpath", "-ldflags=-s -w"}

// GoBuild runs `go <args[0]> -o out <args[1:]...>` in the module at root with
// env added to the environment.
func GoBuild(ctx context.Context, root, out string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", append(args[:1:1], append([]string{"-o", out}, args[1:]...)...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

// BuildLambda builds the function package pkg as its deployed bootstrap, for
// linux on arch.
func BuildLambda(ctx context.Context, root, out, arch, pkg string) error {
	env := []string{"GOOS=linux", "GOARCH=" + arch, "CGO_ENABLED=0"}
	return GoBuild(ctx, root, out, env, append(append([]string{"build"}, LambdaFlags...), pkg)...)
}
