package main

import "syscall"

// childAttr makes the kernel kill a child when the parent dies (SIGKILL,
// or a crash), so that no child goes on forming a group or measuring
// after the parent is gone.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
