package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// runTTY runs a command line as if stdin, stdout and stderr were terminals.
func runTTY(ctx context.Context, b redistest.Backend, stdin string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	io := &iostreams.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut, InTTY: true, OutTTY: true, ErrTTY: true}
	full := append([]string{"--url", b.URL, "--prefix", b.Prefix}, args...)
	code := Run(ctx, full, io, func(string) string { return "" })
	return code, out.String(), errOut.String()
}

// On a terminal: reading "-" is announced, an empty table says so on
// stderr, and a far-off due time is a date and a number of days.
func TestTerminalContract(t *testing.T) {
	b := redistest.Embedded(t)
	ctx := t.Context()

	code, out, errOut := runTTY(ctx, b, "", "queue", "ls")
	if code != 0 || out != "" || errOut != "chatq: no queues\n" {
		t.Errorf("queue ls on an empty namespace: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runTTY(ctx, b, "", "queue", "create", "jobs"); code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	code, _, errOut = runTTY(ctx, b, "hello\n", "queue", "push", "jobs", "-")
	if code != 0 || !strings.Contains(errOut, "chatq: reading the message from stdin") {
		t.Errorf("queue push jobs - on a terminal: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runTTY(ctx, b, "", "queue", "push", "jobs", "--delay", "2400h", "later")
	if code != 0 || !strings.Contains(errOut, "(in 100 days)") || strings.Contains(errOut, "h0m") {
		t.Errorf("a push 100 days ahead: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut = runTTY(ctx, b, "", "queue", "poll", "jobs", "--pop")
	if code != 0 || !strings.Contains(out, "hello") {
		t.Errorf("poll: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runTTY(ctx, b, "", "chat", "pending", "nobody")
	if code != 0 || out != "" || errOut != "chatq: no pending messages\n" {
		t.Errorf("chat pending with nothing: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// a poll's text has no receipt: on a terminal it says how to get them
	if code, _, errOut := runTTY(ctx, b, "", "queue", "push", "jobs", "again"); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	code, _, errOut = runTTY(ctx, b, "", "queue", "poll", "jobs")
	if code != 0 || !strings.Contains(errOut, "--jq '.[].receipt'") {
		t.Errorf("poll on a terminal: exit %d, stderr %q", code, errOut)
	}
	// import says what it imported where export does: stderr, on a terminal
	_, export, _ := run(ctx, b, "queue", "export", "jobs")
	code, out, errOut = runTTY(ctx, b, export, "queue", "import", "copy", "-")
	if code != 0 || out != "" || !strings.Contains(errOut, "chatq: imported ") {
		t.Errorf("import on a terminal: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// piped, nothing is said
	code, out, errOut = run(ctx, b, "chat", "pending", "nobody")
	if code != 0 || out != "" || errOut != "" {
		t.Errorf("piped chat pending with nothing: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
