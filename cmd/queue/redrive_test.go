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

func TestRedriveFlags(t *testing.T) {
	tests := []flagCase[redriveOptions]{
		{args: []string{"dead"}, want: redriveOptions{DLQ: "dead"}},
		{args: []string{"-o", "json", "dead", "--to", "jobs", "-n", "100"}, want: redriveOptions{Output: cmdutil.Output{JSON: true}, DLQ: "dead", To: "jobs", N: 100}},
		{args: []string{"dead", "-n", "-1"}, wantErr: "invalid -n -1: must be at least 1 (or 0 for all)"},
		{args: []string{"dead", "--to", "dead"}, wantErr: "--to dead: a queue cannot be redriven into itself"},
		{args: []string{"dead", "--to", "QUEUES"}, wantErr: "registry"},
		{args: []string{"de:ad"}, wantErr: `queue name "de:ad"`},
	}
	checkFlags(t, NewCmdRedrive, func(o *redriveOptions) { o.IO, o.Client = nil, nil }, tests)
	// On Redis Cluster the two queues are in different slots.
	o := &redriveOptions{DLQ: "dead", Cluster: true}
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "not available on Redis Cluster") || cmdutil.ExitCode(err, false) != cmdutil.ExitUsage {
		t.Errorf("on Cluster: %v", err)
	}
}

func TestRedriveRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		newQueue(t, b, "dead", delayq.Attributes{}, "a", "b", "c")
		newQueue(t, b, "jobs", delayq.Attributes{MaxReceives: 3, DeadLetter: "dead"})
		ctx := context.Background()

		// On a terminal: the count on stdout, what moved where on stderr.
		ios, out, errOut := testIO(true, "")
		if err := redriveRun(ctx, &redriveOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), DLQ: "dead", N: 1}); err != nil {
			t.Fatal(err)
		}
		if out.String() != "1\n" || !strings.Contains(errOut.String(), "chatq: moved 1 message from dead to jobs\n") {
			t.Fatalf("terminal: %q %q", out, errOut)
		}
		ios, out, errOut = testIO(false, "")
		if err := redriveRun(ctx, &redriveOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), DLQ: "dead", To: "jobs"}); err != nil {
			t.Fatal(err)
		}
		var got queueRedriveJSON
		decode(t, out, &got)
		if got.From != "dead" || got.To != "jobs" || got.Moved != 2 || got.Limit != 2 || got.Conflicts == nil || errOut.Len() != 0 {
			t.Fatalf("piped JSON: %+v %q", got, errOut)
		}
		// Nothing left: exit 0 (3 with -e).
		ios, out, _ = testIO(false, "")
		if err := redriveRun(ctx, &redriveOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), DLQ: "dead"}); !errors.Is(err, cmdutil.ErrNothing) || out.String() != "0\n" {
			t.Fatalf("empty: %v %q", err, out)
		}
		// No queue names it: the hint says to name the destination.
		newQueue(t, b, "orphan", delayq.Attributes{}, "x")
		err := redriveRun(ctx, &redriveOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), DLQ: "orphan"})
		if cmdutil.ExitCode(err, false) != cmdutil.ExitUsage || !strings.Contains(hintOf(err), "chatq queue redrive orphan --to QUEUE") {
			t.Fatalf("no source: %v", err)
		}
	})
}
