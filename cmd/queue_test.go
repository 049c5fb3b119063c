package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/redistest"
)

// runQueue runs a chatq command line against backend b with fake streams.
func runQueue(t *testing.T, b redistest.Backend, tty bool, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut, OutTTY: tty, ErrTTY: tty}
	full := append([]string{"--url", b.URL, "--prefix", b.Prefix}, args...)
	code = Run(context.Background(), full, io, func(string) string { return "" })
	return code, out.String(), errOut.String()
}

// On a terminal, tables are aligned with a header and success is said on
// stderr; piped, rows are tab-separated without a header and nothing is
// said.
func TestQueueTerminalAndPiped(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		if code, _, errOut := runQueue(t, b, true, "", "queue", "create", "jobs"); code != 0 || !strings.Contains(errOut, "chatq: created queue jobs") {
			t.Fatalf("create on a terminal: %d %q", code, errOut)
		}
		if code, out, errOut := runQueue(t, b, false, "", "queue", "create", "other"); code != 0 || out != "" || errOut != "" {
			t.Fatalf("create piped: %d %q %q", code, out, errOut)
		}
		if code, out, _ := runQueue(t, b, false, "body\twith tab\n", "queue", "push", "jobs", "-"); code != 0 || len(strings.TrimSpace(out)) != 32 {
			t.Fatalf("push: %d %q", code, out)
		}
		code, out, _ := runQueue(t, b, true, "", "queue", "peek", "jobs")
		if code != 0 || !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "STATE") || !strings.Contains(out, `body\twith tab`) {
			t.Fatalf("peek on a terminal: %d %q", code, out)
		}
		code, out, _ = runQueue(t, b, false, "", "queue", "poll", "jobs")
		if fields := strings.Split(strings.TrimSuffix(out, "\n"), "\t"); code != 0 || len(fields) != 3 || fields[1] != "1" || fields[2] != `body\twith tab` {
			t.Fatalf("poll piped: %d %q", code, out)
		}
		code, out, _ = runQueue(t, b, true, "", "queue", "stats", "jobs")
		if code != 0 || !strings.HasPrefix(out, "FIELD ") || !strings.Contains(out, "inflight      1") {
			t.Fatalf("stats on a terminal: %d %q", code, out)
		}
		code, out, _ = runQueue(t, b, true, "", "queue", "ls")
		if code != 0 || out != "NAME\njobs\nother\n" {
			t.Fatalf("ls on a terminal: %d %q", code, out)
		}
	})
}
