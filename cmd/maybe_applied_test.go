package cmd

import (
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/redistest"
)

// A write whose reply is lost exits 4 and says the server may have applied
// it, naming the command that shows whether it did; the write did apply. A
// read whose reply is lost exits 1, and a write that never reached a server
// exits 1.
func TestLostReplyExits4(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		for _, setup := range [][]string{
			{"queue", "create", "jobs"},
			{"chat", "create", "--from", "joe", "--to", "jeff", "hi"},
		} {
			if code, _, stderr := run(ctx, pb, setup...); code != 0 {
				t.Fatalf("%v: exit %d: %s", setup, code, stderr)
			}
		}
		tests := []struct {
			args  []string
			check []string // shows the write applied: stdout contains the body
			hint  string
		}{
			{[]string{"queue", "push", "jobs", "body-q1"}, []string{"queue", "peek", "jobs"}, "chatq queue peek QUEUE"},
			{[]string{"chat", "send", "1", "--from", "jeff", "body-c1"}, []string{"chat", "history", "1"}, "chatq chat history CHAT"},
			{[]string{"list", "rpush", "items", "body-l1"}, []string{"list", "lrange", "items", "0", "-1"}, "chatq list lrange KEY 0 -1"},
		}
		for _, tt := range tests {
			body := tt.args[len(tt.args)-1]
			// Once first, so that the server has the script and the
			// request whose reply is lost is the EVALSHA that applies it.
			warm := append(append([]string{}, tt.args[:len(tt.args)-1]...), "warm")
			if code, _, stderr := run(ctx, pb, warm...); code != 0 {
				t.Fatalf("%v: exit %d: %s", warm, code, stderr)
			}
			p.DropReplyTo(body)
			code, _, stderr := run(ctx, pb, append([]string{"--timeout", "300ms"}, tt.args...)...)
			if code != cmdutil.ExitMaybeApplied || !strings.Contains(stderr, "may have applied it") || !strings.Contains(stderr, tt.hint) {
				t.Errorf("%v with its reply lost: exit %d, want 4 with a hint naming %q:\n%s", tt.args, code, tt.hint, stderr)
			}
			if code, stdout, stderr := run(ctx, b, tt.check...); code != 0 || !strings.Contains(stdout, body) {
				t.Errorf("%v: the lost write did not apply: exit %d %q %s", tt.check, code, stdout, stderr)
			}
		}

		p.DropReplyTo("jobs")
		if code, _, stderr := run(ctx, pb, "--timeout", "300ms", "queue", "stats", "jobs"); code != cmdutil.ExitError {
			t.Errorf("a read with its reply lost: exit %d, want 1:\n%s", code, stderr)
		}

		_ = p.Close()
		if code, _, stderr := run(ctx, pb, "--timeout", "300ms", "queue", "push", "jobs", "never"); code != cmdutil.ExitError {
			t.Errorf("a write to a closed port: exit %d, want 1:\n%s", code, stderr)
		}
	})
}

// A bulk push whose reply is lost part way prints the ids it stored, exits
// 4, and says which line may also be stored and how to resume.
func TestPushLinesLostReplySaysWhatWasStored(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		if code, _, stderr := run(ctx, pb, "queue", "create", "bulk"); code != 0 {
			t.Fatalf("create: %d %s", code, stderr)
		}
		if code, _, stderr := run(ctx, pb, "queue", "push", "bulk", "warm"); code != 0 {
			t.Fatalf("push: %d %s", code, stderr)
		}
		p.DropReplyTo("line-3")
		var out, errOut syncBuffer
		code := runChatq(ctx, pb, "line-1\nline-2\nline-3\nline-4\n", &out, &errOut, "--timeout", "300ms", "-o", "json", "queue", "push", "bulk", "--lines", "-")
		if code != cmdutil.ExitMaybeApplied {
			t.Fatalf("exit %d, want 4: %s", code, errOut.String())
		}
		if n := strings.Count(out.String(), `"id":`); n != 2 {
			t.Errorf("printed %d ids, want the 2 stored: %s", n, out.String())
		}
		for _, want := range []string{"2 of 4 messages were stored, and line 3 may have been too", "tail -n +3"} {
			if !strings.Contains(errOut.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
			}
		}
	})
}
