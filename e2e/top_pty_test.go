//go:build linux

package e2e

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

	"github.com/chatq-dev/chatq/internal/cli/embedded"
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
	t.Parallel()
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

	top := startTop(t, []string{"--url", s.URL(), "top", "--interval", "200ms"}, "CHATQ_PREFIX=")
	ptmx, tty, screen, done := top.ptmx, top.tty, &top.screen, top.done

	// The queue's row: ready 3, delayed 1, in flight 0.
	top.waitFor(regexp.MustCompile(`ptyjobs\s+3\s+1\s+0\s`))
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

// ptyTop is chatq top running on a pseudo-terminal.
type ptyTop struct {
	t         *testing.T
	ptmx, tty *os.File
	screen    lockedBuffer
	done      chan error
}

// startTop starts chatq with args on a pseudo-terminal of 24 rows and 80
// columns (skipping the test when there is none), env added to its
// environment; it is killed when the test ends.
func startTop(t *testing.T, args []string, env ...string) *ptyTop {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("chatq", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.Env = append(append(os.Environ(), "TERM=xterm-256color", "NO_COLOR=1", "CHATQ_NAMESPACE="), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	top := &ptyTop{t: t, ptmx: ptmx, tty: tty, done: make(chan error, 1)}
	go func() { _, _ = top.screen.ReadFromPTY(ptmx) }()
	go func() { top.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return top
}

// waitFor waits until the screen shows re (escape sequences read as one
// blank: they may stand for cursor moves).
func (p *ptyTop) waitFor(re *regexp.Regexp) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !re.MatchString(ansiSeq.ReplaceAllString(p.screen.String(), " ")) {
		if time.Now().After(deadline) {
			p.t.Fatalf("the screen does not show %s:\n%q", re, p.screen.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keys types s.
func (p *ptyTop) keys(s string) {
	p.t.Helper()
	if _, err := p.ptmx.Write([]byte(s)); err != nil {
		p.t.Fatal(err)
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

// TestTopActionsReadOnly runs chatq top on a pseudo-terminal as a user
// made by `chatq acl --read-only` on the real server: the view works, and
// an action asked for (r, y) is refused on screen with the server's reason,
// the message left as it was, and top goes on. Run with CHATQ_TEST_ACL=1.
func TestTopActionsReadOnly(t *testing.T) {
	if os.Getenv("CHATQ_TEST_ACL") != "1" {
		t.Skip("CHATQ_TEST_ACL=1 not set")
	}
	ro, admin, prefix := readOnlyUser(t)
	ctx := t.Context()
	q := delayq.New(admin, delayq.Options{Prefix: prefix})
	if err := q.Create(ctx, "rojobs", delayq.Attributes{}); err != nil {
		t.Fatal(err)
	}
	p, err := q.Push(ctx, "rojobs", "stuck job", delayq.PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := q.Receive(ctx, "rojobs", delayq.ReceiveOptions{VT: time.Hour}); err != nil || len(r) != 1 {
		t.Fatal(r, err)
	}

	top := startTop(t, []string{"--url", ro, "top", "--interval", "200ms"}, "CHATQ_PREFIX="+prefix)
	top.waitFor(regexp.MustCompile(`rojobs\s+0\s+0\s+1\s`))
	top.keys("\r")
	top.waitFor(regexp.MustCompile(`inflight .*stuck job`))
	top.keys("r")
	top.waitFor(regexp.MustCompile(`retry ` + p.ID[:11] + `… \(inflight, rc 1, held by a consumer\) "stuck job"\? y/N`))
	top.keys("y")
	top.waitFor(regexp.MustCompile(`retry ` + p.ID[:11] + `…: refused: this user may not change the queue \((NOPERM|ERR The user)`))
	if g, err := q.Get(ctx, "rojobs", p.ID); err != nil || g.State != "inflight" {
		t.Fatalf("after the refused retry: %+v %v", g, err)
	}
	top.keys("q")
	select {
	case err := <-top.done:
		if err != nil {
			t.Fatalf("chatq top after q: %v\n%q", err, top.screen.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("chatq top did not end after q:\n%q", top.screen.String())
	}
}
