package stack

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The bench measures what ships only while its flags are the Makefile's.
func TestLambdaFlagsAreTheMakefiles(t *testing.T) {
	makefile, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^GO_BUILD_LAMBDA = .*$`).Find(makefile)
	if line == nil {
		t.Fatal("the Makefile has no GO_BUILD_LAMBDA")
	}
	// The Makefile quotes for the shell; exec passes arguments as they are.
	want := strings.ReplaceAll(strings.Join(LambdaFlags, " "), "-ldflags=-s -w", "-ldflags='-s -w'")
	if !strings.HasSuffix(string(line), " build "+want) {
		t.Fatalf("Makefile: %s\nLambdaFlags: %q", line, LambdaFlags)
	}
}
