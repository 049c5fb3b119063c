//go:build linux

package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/embedded"
	"github.com/creack/pty"
)

// /dev/null is a character device, not a terminal (issue 25): with it as
// stdin and stdout, top prints a snapshot instead of starting its screen,
// push - reads an empty message without announcing a terminal, and purge
// with stdin from /dev/null and stderr on a terminal refuses with --force's
// hint instead of asking a question nobody can answer.
func TestDevNullIsNotATerminal(t *testing.T) {
	t.Parallel()
	s, err := embedded.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	run := func(stdout, stderr *os.File, args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command("chatq", append([]string{"--url", s.URL()}, args...)...)
		cmd.Env = append(os.Environ(), "CHATQ_PREFIX=", "CHATQ_NAMESPACE=", "CHATQ_CONFIG="+os.DevNull)
		cmd.Stdin, cmd.Stdout = null, stdout
		var errBuf bytes.Buffer
		if stderr != nil {
			cmd.Stderr = stderr
		} else {
			cmd.Stderr = &errBuf
		}
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), errBuf.String()
	}
	if code, stderr := run(null, nil, "queue", "create", "z"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	if code, stderr := run(null, nil, "top"); code != 0 || stderr != "" {
		t.Errorf("top </dev/null >/dev/null: exit %d, stderr %q", code, stderr)
	}
	if code, stderr := run(null, nil, "queue", "push", "z", "-"); code != 0 || strings.Contains(stderr, "terminal") {
		t.Errorf("queue push z - </dev/null: exit %d, stderr %q", code, stderr)
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	var screen lockedBuffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = screen.ReadFromPTY(ptmx) // until the terminal is closed
	}()
	code, _ := run(null, tty, "queue", "purge", "z")
	tty.Close()
	<-done
	if code != 2 || !strings.Contains(screen.String(), "--force") || strings.Contains(screen.String(), "[y/N]") {
		t.Errorf("queue purge z </dev/null 2>tty: exit %d, terminal showed %q", code, screen.String())
	}
}
