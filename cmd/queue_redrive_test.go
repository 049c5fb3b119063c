package cmd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// A redrive whose reply is lost after earlier calls moved messages exits 4,
// saying how many moved before and that running it again is safe; running
// it again moves the rest, and no message is lost or doubled.
func TestRedriveLostReplySaysHowManyMoved(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		for _, args := range [][]string{{"queue", "create", "jobs"}, {"queue", "create", "dead"}} {
			if code, _, stderr := run(ctx, pb, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
		}
		var lines strings.Builder
		for i := range 250 {
			fmt.Fprintf(&lines, "m%d\n", i)
		}
		var out, errOut syncBuffer
		if code := runChatq(ctx, pb, lines.String(), &out, &errOut, "queue", "push", "dead", "--lines", "-"); code != 0 {
			t.Fatalf("push: %d %s", code, errOut.String())
		}
		// 250 messages: calls of 100, 100 and 50; the reply to the third
		// (the only request with the argument 50) is lost.
		p.DropReplyTo("$2\r\n50\r\n")
		code, stdout, stderr := run(ctx, pb, "--timeout", "1s", "queue", "redrive", "dead", "--to", "jobs")
		if code != cmdutil.ExitMaybeApplied || stdout != "" ||
			!strings.Contains(stderr, "200 messages moved to jobs before the last call, whose reply was lost") ||
			!strings.Contains(stderr, "chatq queue redrive dead --to jobs") {
			t.Fatalf("redrive with the last reply lost: exit %d, stdout %q:\n%s", code, stdout, stderr)
		}
		// The lost call applied: all 250 are in jobs, none in dead.
		code, stdout, stderr = run(ctx, b, "-o", "json", "queue", "stats", "jobs")
		if code != 0 || !strings.Contains(stdout, `"msgs":250,`) || !strings.Contains(stdout, `"totalsent":250,`) {
			t.Fatalf("jobs after: %d %s %s", code, stdout, stderr)
		}
		code, stdout, _ = run(ctx, b, "queue", "redrive", "dead", "--to", "jobs")
		if code != 0 || stdout != "0\n" {
			t.Fatalf("redrive again: %d %q", code, stdout)
		}
	})
}
