package queue

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestLsFlags(t *testing.T) {
	tests := []flagCase[lsOptions]{
		{args: []string{}, want: lsOptions{}},
		{args: []string{"-l"}, want: lsOptions{Long: true}},
		{args: []string{"-o", "json", "--long"}, want: lsOptions{Output: cmdutil.Output{JSON: true}, Long: true}},
		{args: []string{"jobs"}, wantErr: `unknown command "jobs"`},
	}
	checkFlags(t, NewCmdLs, func(o *lsOptions) { o.IO, o.Kinds = nil, nil }, tests)
}

func TestLsRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		// No queues: nothing on stdout, "no queues" on a terminal's stderr.
		ios, out, errOut := testIO(true, "")
		if err := lsRun(context.Background(), &lsOptions{Output: cmdutil.Output{IO: ios}, Kinds: testKinds(b)}); !errors.Is(err, cmdutil.ErrNothing) {
			t.Fatalf("no queues: %v", err)
		}
		if out.Len() != 0 || !strings.Contains(errOut.String(), "no queues") {
			t.Fatalf("no queues on a terminal: %q %q", out, errOut)
		}
		newQueue(t, b, "jobs", delayq.Attributes{}, "a", "b")
		newQueue(t, b, "dead", delayq.Attributes{})

		ios, out, _ = testIO(true, "")
		if err := lsRun(context.Background(), &lsOptions{Output: cmdutil.Output{IO: ios}, Kinds: testKinds(b)}); err != nil {
			t.Fatal(err)
		}
		if out.String() != "NAME\ndead\njobs\n" {
			t.Fatalf("terminal: %q", out)
		}
		ios, out, errOut = testIO(false, "")
		if err := lsRun(context.Background(), &lsOptions{Output: cmdutil.Output{IO: ios}, Kinds: testKinds(b)}); err != nil {
			t.Fatal(err)
		}
		if out.String() != "dead\njobs\n" || errOut.Len() != 0 {
			t.Fatalf("piped: %q %q", out, errOut)
		}

		// -l, piped: tab-separated rows without a header; JSON: the counts.
		ios, out, _ = testIO(false, "")
		if err := lsRun(context.Background(), &lsOptions{Output: cmdutil.Output{IO: ios}, Kinds: testKinds(b), Long: true}); err != nil {
			t.Fatal(err)
		}
		if rows := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); len(rows) != 2 || rows[1] != "jobs\t2\t2\t0\t0\t-\t-\t-\t"+strings.Split(rows[1], "\t")[8]+"\t-\t-" {
			t.Fatalf("-l piped: %q", out)
		}
		// (On a terminal: piped, -l -o json prints the rows before the JSON.)
		ios, out, _ = testIO(true, "")
		if err := lsRun(context.Background(), &lsOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Kinds: testKinds(b), Long: true}); err != nil {
			t.Fatal(err)
		}
		var got []queueLongJSON
		decode(t, out, &got)
		if len(got) != 2 || got[1].Name != "jobs" || *got[1].Msgs != 2 || *got[1].Ready != 2 || got[0].Name != "dead" || *got[0].Msgs != 0 {
			t.Fatalf("-l JSON: %+v", got)
		}
	})
}
