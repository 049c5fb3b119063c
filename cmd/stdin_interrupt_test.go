package cmd

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// Every command that reads stdin ends at once on an interrupt (the context
// Main cancels on SIGINT and SIGTERM) while it waits for input that does
// not come (a terminal, an open pipe): exit 130, saying what was stored
// and how to resume (issue 36; list rpush - has its own test).
func TestStdinReadersInterrupt(t *testing.T) {
	b := redistest.Embedded(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"queue", "push", "jobs", "-"}, "nothing was pushed: interrupted while reading the message"},
		{[]string{"queue", "push", "jobs", "--lines", "-"}, "nothing was pushed: interrupted while reading messages"},
		{[]string{"queue", "push", "jobs", "--jsonl", "-"}, "nothing was pushed: interrupted while reading messages"},
		{[]string{"queue", "import", "copy", "-"}, "imported 0 messages before the interrupt; run the same import again"},
		{[]string{"chat", "send", "1", "--from", "joe", "-"}, "nothing was sent: interrupted while reading the message"},
		{[]string{"chat", "create", "--from", "joe", "--to", "jeff", "-"}, "nothing was sent: interrupted while reading the message"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if code, _, e := run(t.Context(), b, "queue", "create", "jobs"); code != 0 && !strings.Contains(e, "exists") {
				t.Fatalf("create: %d %s", code, e)
			}
			pr, pw := io.Pipe() // stdin that stays open, with nothing in it
			defer pw.Close()
			reading := make(chan struct{})
			in := &firstRead{r: pr, at: reading}
			ctx, cancel := context.WithCancel(t.Context())
			var out, errOut bytes.Buffer
			ios := &iostreams.IOStreams{In: in, Out: &out, ErrOut: &errOut}
			done := make(chan int, 1)
			go func() {
				full := append([]string{"--url", b.URL, "--prefix", b.Prefix}, tc.args...)
				done <- Run(ctx, full, ios, func(string) string { return "" })
			}()
			// Interrupt once the command waits on stdin.
			select {
			case <-reading:
			case <-time.After(10 * time.Second):
				t.Fatal("the command never read stdin")
			}
			cancel()
			select {
			case code := <-done:
				if code != cmdutil.ExitInterrupted {
					t.Errorf("exit %d, want 130; stderr %q", code, errOut.String())
				}
				if e := errOut.String(); !strings.Contains(e, tc.says) || !strings.Contains(e, "chatq: interrupted") || strings.Contains(e, "error:") {
					t.Errorf("stderr %q, want %q", e, tc.says)
				}
			case <-time.After(10 * time.Second): // a deadline: the command ends at once
				t.Fatal("the command went on reading stdin after the interrupt")
			}
		})
	}
}

// firstRead is a reader that closes at when it is first read.
type firstRead struct {
	r    io.Reader
	at   chan struct{}
	once sync.Once
}

func (f *firstRead) Read(p []byte) (int, error) {
	f.once.Do(func() { close(f.at) })
	return f.r.Read(p)
}
