package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/redistest"
)

// A push from stdin whose third batch's reply is lost (through a proxy that
// drops it) says how many lines are in the list for certain, which may be,
// and how to resume; it exits 4 (the server may have applied the batch: it
// did). Resuming as the hint says leaves every line in the list once.
func TestListPushPartialLostReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		pb, p := redistest.Proxied(t, b)
		var lines []string
		for i := 1; i <= 1200; i++ {
			lines = append(lines, fmt.Sprintf("line-%d", i))
		}
		stdin := strings.Join(lines, "\n") + "\n"
		p.DropReplyTo("line-1001") // the third batch: lines 1001-1200
		var out, errOut syncBuffer
		code := runChatq(ctx, pb, stdin, &out, &errOut, "--timeout", "300ms", "list", "rpush", "big", "-")
		stderr := errOut.String()
		if code != cmdutil.ExitMaybeApplied ||
			!strings.Contains(stderr, "stored 1000 of 1200 items; the next 200 may also be stored") ||
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
