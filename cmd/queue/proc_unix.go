//go:build unix

package queue

import (
	"os/exec"
	"syscall"
)

// ownGroup runs c in a process group of its own, so that killing the group
// reaches every process CMD started (sh -c '...' and its children), and a
// terminal's Ctrl-C reaches chatq alone.
func ownGroup(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(c.SysProcAttr)
}

// killGroup sends SIGKILL (hard) or SIGTERM to c's process group.
func killGroup(c *exec.Cmd, hard bool) error {
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	if c.Process == nil {
		return nil
	}
	return syscall.Kill(-c.Process.Pid, sig)
}
