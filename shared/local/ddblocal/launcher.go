package ddblocal

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// launcherSource keeps DynamoDB Local on the addresses it is given; see the
// file for why DynamoDB Local needs it.
//
//go:embed LoopbackDynamoDBLocal.java
var launcherSource []byte

const launcherClass = "LoopbackDynamoDBLocal"

// launcher returns the directory holding the compiled launcher for jar,
// compiling it on first use. The directory's name carries a hash of the
// source and the jar's path, so an edit or a new DynamoDB Local release gets
// a fresh build, and concurrent test binaries agree on the result: each
// compiles into a directory of its own and renames it into place.
func launcher(ctx context.Context, jar string) (string, error) {
	sum := sha256.Sum256(append(append([]byte(nil), launcherSource...), jar...))
	name := "loopback-launcher-" + hex.EncodeToString(sum[:6])
	dir := filepath.Join(filepath.Dir(jar), name)
	if err := probeDir(filepath.Dir(jar)); err != nil {
		// A jar in a read-only place ($DYNAMODB_LOCAL_JAR): build beside
		// other temporary files instead.
		dir = filepath.Join(os.TempDir(), name)
	}
	if _, err := os.Stat(filepath.Join(dir, launcherClass+".class")); err == nil {
		return dir, nil
	}
	javac, err := javacPath()
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), name+".tmp-")
	if err != nil {
		return "", fmt.Errorf("ddblocal: %w", err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, launcherClass+".java")
	if err := os.WriteFile(src, launcherSource, 0o644); err != nil {
		return "", fmt.Errorf("ddblocal: %w", err)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, javac, "-nowarn", "-d", tmp, "-cp", jar, src)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ddblocal: compiling the launcher that binds DynamoDB Local to 127.0.0.1: %v\n%s", err, out.String())
	}
	if err := os.Remove(src); err != nil {
		return "", fmt.Errorf("ddblocal: %w", err)
	}
	// MkdirTemp made it private; the cache is for every user of the jar.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("ddblocal: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process finished first; its build is as good as ours.
		if _, statErr := os.Stat(filepath.Join(dir, launcherClass+".class")); statErr == nil {
			return dir, nil
		}
		return "", fmt.Errorf("ddblocal: %w", err)
	}
	return dir, nil
}

// probeDir reports whether files can be created in dir.
func probeDir(dir string) error {
	f, err := os.CreateTemp(dir, ".probe-")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// javacPath finds the JDK's compiler next to the java that runs DynamoDB
// Local: $JAVA_HOME/bin/javac, else javac on PATH.
func javacPath() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "javac")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("javac")
	if errors.Is(err, exec.ErrNotFound) {
		return "", errors.New("ddblocal: javac not found: DynamoDB Local is kept on 127.0.0.1 by a small launcher " +
			"compiled on first use, which needs a Java 17 JDK, not only a JRE (set JAVA_HOME to one)")
	}
	return p, err
}
