//go:build !linux

package main

import "syscall"

// childAttr: only Linux kills a child with its parent; elsewhere a child
// whose parent died ends at its next write to the closed pipe.
func childAttr() *syscall.SysProcAttr { return nil }
