//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/embedded"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/creack/pty"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"
)

// lockedBuffer collects what the terminal shows.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var ansiSeq = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[=>]`)

// TestTopTerminal runs `chatq top` on a pseudo-terminal: the screen shows a
// queue's numbers, and q leaves with exit 0, the alternate screen left and
// the terminal back in its cooked mode.
func TestTopTerminal(t *testing.T) {
	s, err := embedded.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	q := delayq.New(c, delayq.Options{})
	if err := q.Create(ctx, "ptyjobs", delayq.Attributes{}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := q.Push(ctx, "ptyjobs", fmt.Sprint(i), delayq.PushOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Push(ctx, "ptyjobs", "later", delayq.PushOptions{Delay: time.Hour}); err != nil {
		t.Fatal(err)
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("chatq", "--url", s.URL(), "top", "--interval", "200ms")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "NO_COLOR=1", "CHATQ_PREFIX=", "CHATQ_NAMESPACE=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var screen lockedBuffer
	go func() { _, _ = screen.ReadFromPTY(ptmx) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()

	// The queue's row: ready 3, delayed 1, in flight 0.
	row := regexp.MustCompile(`ptyjobs\s+3\s+1\s+0\s`)
	deadline := time.Now().Add(20 * time.Second)
	// Escape sequences may stand for blanks (cursor moves): read them as one.
	for !row.MatchString(ansiSeq.ReplaceAllString(screen.String(), " ")) {
		if time.Now().After(deadline) {
			t.Fatalf("no row for ptyjobs on the screen:\n%q", screen.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !bytes.Contains([]byte(screen.String()), []byte("\x1b[?1049h")) {
		t.Errorf("the alternate screen was not entered:\n%q", screen.String())
	}
	if _, err := ptmx.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) || err != nil {
			t.Fatalf("chatq top after q: %v\n%q", err, screen.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("chatq top did not end after q:\n%q", screen.String())
	}
	// What chatq wrote last may still be on its way through the pty.
	left := func() bool {
		out := []byte(screen.String())
		return bytes.LastIndex(out, []byte("\x1b[?1049l")) > bytes.LastIndex(out, []byte("\x1b[?1049h"))
	}
	for deadline := time.Now().Add(10 * time.Second); !left(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the alternate screen was not left:\n%q", screen.String())
			break
		}
	}
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&unix.ECHO == 0 || tio.Lflag&unix.ICANON == 0 {
		t.Errorf("the terminal was left in raw mode (lflag %#x)", tio.Lflag)
	}
}

// ReadFromPTY copies the terminal's output until it is closed.
func (l *lockedBuffer) ReadFromPTY(f *os.File) (int64, error) {
	buf := make([]byte, 4096)
	var n int64
	for {
		k, err := f.Read(buf)
		if k > 0 {
			_, _ = l.Write(buf[:k])
			n += int64(k)
		}
		if err != nil {
			return n, err
		}
	}
}
