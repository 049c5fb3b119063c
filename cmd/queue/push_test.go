package queue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestPushFlags(t *testing.T) {
	ninety, zero := 90*time.Second, time.Duration(0)
	tests := []flagCase[pushOptions]{
		{args: []string{"jobs", "hi"}, want: pushOptions{Queue: "jobs", Body: "hi"}},
		{args: []string{"jobs", "--delay", "90s", "hi"},
			want: pushOptions{Queue: "jobs", Body: "hi", Delay: &ninety, due: delayq.PushOptions{Delay: ninety}}},
		// --delay 0 overrides the queue's delay: -1 in the package.
		{args: []string{"jobs", "--delay", "0", "hi"},
			want: pushOptions{Queue: "jobs", Body: "hi", Delay: &zero, due: delayq.PushOptions{Delay: -1}}},
		{args: []string{"jobs", "--at", "1777626000.5", "hi"},
			want: pushOptions{Queue: "jobs", Body: "hi", At: "1777626000.5", due: delayq.PushOptions{At: time.UnixMilli(1777626000500)}}},
		{args: []string{"-o", "json", "jobs", "--lines", "-"}, want: pushOptions{Output: cmdutil.Output{JSON: true}, Queue: "jobs", Body: "-", Lines: true}},
		{args: []string{"jobs", "--jsonl", "-"}, want: pushOptions{Queue: "jobs", Body: "-", JSONL: true}},
		{args: []string{"jobs", "--at", "tomorrow", "hi"}, wantErr: `invalid --at "tomorrow"`},
		{args: []string{"jobs", "--delay", "-1s", "hi"}, wantErr: "--delay -1s: must not be negative"},
		{args: []string{"jobs", "--delay", "1s", "--at", "1", "hi"}, wantErr: "[at delay] are set none of the others can be"},
		{args: []string{"jobs", "--lines", "--jsonl", "-"}, wantErr: "[lines jsonl] are set none of the others can be"},
		{args: []string{"jobs", "--lines", "hi"}, wantErr: "--lines reads stdin: give - as the message"},
		{args: []string{"jobs", "--jsonl", "hi"}, wantErr: "--jsonl reads stdin: give - as the message"},
		{args: []string{"a b", "hi"}, wantErr: `queue name "a b"`},
		{args: []string{"jobs"}, wantErr: "accepts 2 arg(s)"},
	}
	checkFlags(t, NewCmdPush, func(o *pushOptions) { o.IO, o.Client = nil, nil }, tests)
}

// pushOpts are push's options for backend b, on streams ios.
func pushOpts(b redistest.Backend, ios *iostreams.IOStreams, body string) *pushOptions {
	return &pushOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Body: body}
}

func TestPushRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		newQueue(t, b, "jobs", delayq.Attributes{})
		ctx := context.Background()

		// On a terminal: the id on stdout, and when it is due on stderr.
		ios, out, errOut := testIO(true, "")
		o := pushOpts(b, ios, "hi")
		o.due.Delay = time.Hour
		if err := pushRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		if len(out.String()) != 33 || !strings.HasPrefix(errOut.String(), "chatq: due at ") || !strings.HasSuffix(errOut.String(), "(in 1h0m0s)\n") {
			t.Fatalf("terminal: %q %q", out, errOut)
		}

		// Piped, from stdin, JSON: the trailing newline is not the body's.
		ios, out, errOut = testIO(false, "from stdin\n")
		o = pushOpts(b, ios, "-")
		o.JSON = true
		if err := pushRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		var p queuePushJSON
		decode(t, out, &p)
		if len(p.ID) != 32 || p.VisibleAt != p.Sent || errOut.Len() != 0 {
			t.Fatalf("piped JSON: %+v %q", p, errOut)
		}
		q, _ := testClient(b)()
		if m, err := q.Get(ctx, "jobs", p.ID); err != nil || m.Body != "from stdin" {
			t.Fatalf("stored: %+v %v", m, err)
		}

		// --lines, piped: one id per line, in order.
		ios, out, _ = testIO(false, "one\ntwo\n")
		o = pushOpts(b, ios, "-")
		o.Lines = true
		if err := pushRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		if ids := strings.Fields(out.String()); len(ids) != 2 || len(ids[0]) != 32 || len(ids[1]) != 32 {
			t.Fatalf("--lines: %q", out)
		}

		// --jsonl with an at: checked against the server's time first.
		ios, out, _ = testIO(false, `"plain"`+"\n"+`{"message":"later","at":"2026-05-01T09:00:00Z"}`+"\n")
		o = pushOpts(b, ios, "-")
		o.JSONL, o.JSON = true, true
		if err := pushRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		var ps []queuePushJSON
		decode(t, out, &ps)
		if len(ps) != 2 || ps[0].VisibleAt != ps[0].Sent || ps[1].VisibleAt != 1777626000000 {
			t.Fatalf("--jsonl JSON: %+v", ps)
		}

		// Not UTF-8: exit 2, nothing pushed.
		ios, out, _ = testIO(false, "caf\xe9")
		err := pushRun(ctx, pushOpts(b, ios, "-"))
		if cmdutil.ExitCode(err, false) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "the message is not valid UTF-8: nothing pushed") || out.Len() != 0 {
			t.Fatalf("not UTF-8: %v %q", err, out)
		}
		if st, _ := q.Stats(ctx, "jobs"); st.TotalSent != 6 {
			t.Fatalf("totalsent %d, want 6", st.TotalSent)
		}
	})
}
