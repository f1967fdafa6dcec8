package ddblocal

import "syscall"

// sysProcAttr makes the kernel send DynamoDB Local SIGTERM when this process
// dies, even by SIGKILL or a crash, so no orphaned JVM keeps the port (and
// the -dbPath database) after a test binary or `make run` goes away. SIGTERM
// rather than SIGKILL lets the JVM close its database files.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
