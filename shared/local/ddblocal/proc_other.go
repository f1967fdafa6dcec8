//go:build !linux

package ddblocal

import "syscall"

// sysProcAttr: only Linux has a parent-death signal; elsewhere DynamoDB
// Local outlives a parent that dies without calling Stop.
func sysProcAttr() *syscall.SysProcAttr { return nil }
