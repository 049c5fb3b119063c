//go:build !unix

package queue

import "os/exec"

// ownGroup: no process groups here; killing reaches CMD alone.
func ownGroup(*exec.Cmd) {}

func killGroup(c *exec.Cmd, hard bool) error {
	if c.Process == nil {
		return nil
	}
	return c.Process.Kill()
}
