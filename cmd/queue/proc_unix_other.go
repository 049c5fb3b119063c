//go:build unix && !linux

package queue

import "syscall"

// dieWithParent: only Linux (and FreeBSD's procctl, not wired here) can
// tie a child's life to its parent's.
func dieWithParent(*syscall.SysProcAttr) {}
