package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/shardlist"
)

// A push from stdin whose third batch's reply is lost (through a proxy that
// drops it), and whose server then stays away past --timeout (the batch's
// repeats with its token fail too), says how many lines are in the list
// for certain, which may be, and how to resume; it exits 4 (the server may
// have applied the batch: it did). Resuming as the hint says leaves every
// line in the list once.
func TestListPushPartialLostReply(t *testing.T) {
	redistest.SlowOnEmbedded(t, "a partial push whose later batches meet a blackholed server for --timeout")
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		pb, p := redistest.Proxied(t, b)
		var lines []string
		for i := 1; i <= 1200; i++ {
			lines = append(lines, fmt.Sprintf("line-%d", i))
		}
		stdin := strings.Join(lines, "\n") + "\n"
		back := awayAfterDrop(ctx, p, "line-1001") // the third batch: lines 1001-1200
		var out, errOut syncBuffer
		code := runChatq(ctx, pb, stdin, &out, &errOut, "--timeout", "2s", "list", "rpush", "big", "-")
		back()
		stderr := errOut.String()
		if code != cmdutil.ExitMaybeApplied ||
			!strings.Contains(stderr, "stopped after storing 1000 lines; the next 200 may also be stored") ||
			!strings.Contains(stderr, "lines 1-1000 are in the list and 1001-1200 may be (the reply was lost): look with chatq list lrange big -200 -1") {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		// it was applied: the hint says to resume after line 1200, which
		// here means nothing is left; the list holds every line once
		code, got, stderr := run(ctx, b, "list", "lrange", "big", "0", "-1")
		if code != 0 || got != stdin {
			t.Fatalf("list after the push: exit %d, %d bytes, want %d: %s", code, len(got), len(stdin), stderr)
		}
	})
}

// A push from a stdin that stays open (a slow writer, a terminal) stores
// full batches as they are read, and Ctrl-C then stops it at once, though
// stdin blocks: it says which lines are in the list and where to resume,
// and exits 130. Resuming as it says leaves every line in the list once, in
// order.
func TestListPushStdinInterrupted(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var lines []string
		for i := 1; i <= 1200; i++ {
			lines = append(lines, fmt.Sprintf("line-%d", i))
		}
		r, w := io.Pipe()
		defer w.Close()
		go w.Write([]byte(strings.Join(lines, "\n") + "\n")) // and no EOF
		var out, errOut syncBuffer
		done := make(chan int, 1)
		go func() {
			ios := &iostreams.IOStreams{In: r, Out: &out, ErrOut: &errOut}
			done <- Run(ctx, []string{"--url", b.URL, "--prefix", b.Prefix, "list", "rpush", "big", "-"}, ios, func(string) string { return "" })
		}()
		lists := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix})
		deadline := time.Now().Add(time.Minute) // a hang, not a budget
		for n, _ := lists.LLen(ctx, "big"); n < 1000; n, _ = lists.LLen(ctx, "big") {
			if time.Now().After(deadline) {
				t.Fatalf("%d items stored after a minute: %s", n, errOut.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		var code int
		select {
		case code = <-done:
		case <-time.After(time.Minute):
			t.Fatal("the push did not stop on the interrupt while stdin blocked")
		}
		stderr := errOut.String()
		if code != cmdutil.ExitInterrupted ||
			!strings.Contains(stderr, "push to list big stopped after storing 1000 lines") ||
			!strings.Contains(stderr, "hint: lines 1-1000 are in the list; to resume without duplicates push from line 1001 (tail -n +1001 FILE | chatq list rpush big -)") {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		// resume as the hint says
		code, _, stderr = runStdin(t.Context(), b, strings.Join(lines[1000:], "\n")+"\n", "list", "rpush", "big", "-")
		if code != 0 {
			t.Fatalf("resume: exit %d: %s", code, stderr)
		}
		got, err := lists.LRange(t.Context(), "big", 0, -1)
		if err != nil || !slices.Equal(got, lines) {
			t.Fatalf("list after the resume: %d items, %v", len(got), err)
		}
	})
}

// runStdin runs chatq on b with stdin and returns its exit code, stdout and
// stderr.
func runStdin(ctx context.Context, b redistest.Backend, stdin string, args ...string) (int, string, string) {
	var out, errOut syncBuffer
	code := runChatq(ctx, b, stdin, &out, &errOut, args...)
	return code, out.String(), errOut.String()
}
