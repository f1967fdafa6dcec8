package ddblocal

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

const helperEnv = "DDBLOCAL_TEST_HELPER"

// TestHelperProcess is not a test: TestDiesWithParent runs the test binary
// again with helperEnv set, and in that process this starts DynamoDB Local,
// prints the JVM's pid and waits to be killed.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for TestDiesWithParent")
	}
	srv, err := Start(context.Background(), Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("pid", srv.cmd.Process.Pid)
	time.Sleep(time.Minute)
	os.Exit(2)
}

func TestDiesWithParent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM in a child process")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var javaPid int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "pid %d", &javaPid); err == nil {
			break
		}
		t.Log(sc.Text())
	}
	if javaPid == 0 {
		_ = cmd.Process.Kill()
		t.Fatal("the helper did not report DynamoDB Local's pid")
	}
	// SIGKILL: the parent runs no cleanup at all.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for alive(javaPid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(javaPid, syscall.SIGKILL)
			t.Fatalf("DynamoDB Local (pid %d) outlived its parent", javaPid)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive reports whether pid runs. A zombie counts as dead: it has exited
// and only waits for whoever adopted it to reap it.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesized command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
