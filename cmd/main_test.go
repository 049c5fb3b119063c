package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// run executes a command line in process against b and returns its exit
// code, stdout and stderr.
func run(ctx context.Context, b redistest.Backend, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	full := append([]string{"--url", b.URL, "--prefix", b.Prefix}, args...)
	code := Run(ctx, full, io, func(string) string { return "" })
	return code, out.String(), errOut.String()
}

func TestExitCodes(t *testing.T) {
	b := redistest.Embedded(t)
	ctx := t.Context()
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"list", "lpop", "empty"}, cmdutil.ExitOK},
		{[]string{"-e", "list", "lpop", "empty"}, cmdutil.ExitNothing},
		{[]string{"list", "lpop", "bad key"}, cmdutil.ExitUsage},
		{[]string{"list", "lpop"}, cmdutil.ExitUsage},
		{[]string{"queue", "stats", "nosuch"}, cmdutil.ExitError},
		{[]string{"chat", "send", "1", "--from", "joe", "hi"}, cmdutil.ExitError},
	}
	for _, tt := range tests {
		if code, _, stderr := run(ctx, b, tt.args...); code != tt.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tt.args, code, tt.code, stderr)
		}
	}
}

// An interrupt (the context Main cancels on SIGINT/SIGTERM) ends a blocked
// command with exit 130, without printing an error.
func TestInterruptExits130(t *testing.T) {
	redistest.Run(t, testInterruptExits130)
}

func testInterruptExits130(t *testing.T, b redistest.Backend) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int)
	var stderr string
	go func() {
		code, _, e := run(ctx, b, "list", "blpop", "jobs", "--wait", "0")
		stderr = e
		done <- code
	}()
	// On a real server, cancel once the pop is blocked there (CLIENT LIST
	// shows it); the embedded server does not say, so it is cancelled at
	// once. Either way the command must end with 130.
	deadline := time.Now().Add(5 * time.Second)
	for b.Real() && time.Now().Before(deadline) {
		n, err := b.Client.ClientList(ctx).Result()
		if err == nil && strings.Contains(n, "cmd=blmove") { // the wait of a sharded blpop
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case code := <-done:
		if code != cmdutil.ExitInterrupted {
			t.Errorf("exit %d, want 130 (stderr %q)", code, stderr)
		}
		if !strings.Contains(stderr, "chatq: interrupted") || strings.Contains(stderr, "error:") {
			t.Errorf("stderr %q", stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocked pop did not end on interrupt")
	}
}
