package stack

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
)

// Process is the local stack running as a process of its own.
type Process struct {
	API      string // http://127.0.0.1:port
	DynamoDB string // its DynamoDB Local
	cmd      *exec.Cmd
	dir      string
	out      *ddblocal.Tail
	exited   chan struct{}
}

// BuildProcess builds cmd/local of the module at root as out.
func BuildProcess(ctx context.Context, root, out string) error {
	return GoBuild(ctx, root, out, nil, "build", "./cmd/local")
}

// StartProcess runs `local serve` in a scratch directory holding a copy of
// the template.yaml at root, so its DynamoDB Local keeps its data there and
// not in the developer's .data/dynamodb, on free ports. env overrides its
// environment.
func StartProcess(ctx context.Context, binary, root string, env ...string) (*Process, error) {
	tmpl, err := os.ReadFile(filepath.Join(root, sam.FileName))
	if err != nil {
		return nil, err
	}
	jar, err := ddblocal.JarPath()
	if err != nil {
		return nil, err
	}
	apiPort, err := ddblocal.FreePort()
	if err != nil {
		return nil, err
	}
	ddbPort, err := ddblocal.FreePort()
	if err != nil {
		return nil, err
	}
	// In memory where there is a tmpfs: DynamoDB Local's database on disk
	// makes seeding several times slower.
	parent := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		parent = "/dev/shm"
	}
	dir, err := os.MkdirTemp(parent, "contentapi-localstack-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, sam.FileName), tmpl, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command(binary, "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(apiPort), ddblocal.PortEnv+"="+strconv.Itoa(ddbPort), ddblocal.JarEnv+"="+jar)
	cmd.Env = append(cmd.Env, env...)
	s := &Process{cmd: cmd, API: "http://127.0.0.1:" + strconv.Itoa(apiPort),
		DynamoDB: "http://127.0.0.1:" + strconv.Itoa(ddbPort), dir: dir,
		out: ddblocal.NewTail(64 << 10), exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	deadline := time.After(2 * time.Minute)
	for {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(apiPort), time.Second); err == nil {
			c.Close()
			if strings.Contains(s.out.String(), "Local API") {
				return s, nil
			}
		}
		select {
		case <-s.exited:
			os.RemoveAll(dir)
			return nil, fmt.Errorf("the local stack exited before serving:\n%s", tail(s.out.String()))
		case <-deadline:
			s.Stop()
			return nil, fmt.Errorf("the local stack did not serve within 2 minutes:\n%s", tail(s.out.String()))
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}

// Stop interrupts the stack, which stops its DynamoDB Local, and kills it
// if it takes too long.
func (s *Process) Stop() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	os.RemoveAll(s.dir)
}

// Children are the PIDs of the stack's own child processes: its DynamoDB
// Local.
func (s *Process) Children() []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		f := procStat(e.Name())
		if len(f) > 1 && f[1] == strconv.Itoa(s.cmd.Process.Pid) {
			pid, _ := strconv.Atoi(e.Name())
			pids = append(pids, pid)
		}
	}
	return pids
}

// CPUSeconds is the CPU time used so far by the stack's process and by its
// child processes (DynamoDB Local's JVM), from /proc/<pid>/stat.
func (s *Process) CPUSeconds() (stack, children float64) {
	pid := strconv.Itoa(s.cmd.Process.Pid)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		// utime and stime are the 14th and 15th fields of the line, in
		// clock ticks (USER_HZ).
		f := procStat(e.Name())
		if len(f) < 13 {
			continue
		}
		user, _ := strconv.ParseFloat(f[11], 64)
		sys, _ := strconv.ParseFloat(f[12], 64)
		switch cpu := (user + sys) / 100; {
		case e.Name() == pid:
			stack += cpu
		case f[1] == pid:
			children += cpu
		}
	}
	return stack, children
}

// PeakRSSMB is the stack process's peak resident memory (VmHWM), without
// its DynamoDB Local.
func (s *Process) PeakRSSMB() (float64, error) {
	var kb float64
	field := ProcField(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid), "VmHWM:")
	_, err := fmt.Sscan(strings.TrimSuffix(field, " kB"), &kb)
	return kb / 1024, err
}

// procStat is the fields of /proc/<pid>/stat after the command name:
// state, ppid, ...; nil if there is no such process.
func procStat(pid string) []string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}

// ProcField is the value after prefix on a line of a /proc (or JSON) file
// ("" if none).
func ProcField(file, prefix string) string {
	b, _ := os.ReadFile(file)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return ""
}

// APIRequest is a request as the API's clients send it, with an API key and,
// for writes, a form.
func APIRequest(ctx context.Context, method, target, key string, form url.Values) *http.Request {
	r, _ := http.NewRequestWithContext(ctx, method, target, strings.NewReader(form.Encode()))
	r.Header.Set("Accept", "application/json")
	r.Header.Set("Authorization", "Bearer "+key)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return r
}
