package queue

import (
	"context"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestDeleteAndPurgeFlags(t *testing.T) {
	tests := []flagCase[deleteOptions]{
		{args: []string{"jobs"}, want: deleteOptions{Queue: "jobs"}},
		{args: []string{"-o", "json", "jobs", "--force"}, want: deleteOptions{Output: cmdutil.Output{JSON: true}, Queue: "jobs", Force: true}},
		{args: []string{"QUEUES"}, wantErr: "registry"},
		{args: []string{"a", "b"}, wantErr: "accepts 1 arg(s)"},
	}
	clear := func(o *deleteOptions) { o.IO, o.Client = nil, nil }
	checkFlags(t, NewCmdDelete, clear, tests)
	checkFlags(t, NewCmdPurge, clear, tests)
}

func TestDeleteRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		newQueue(t, b, "jobs", delayq.Attributes{}, "a", "b")
		newQueue(t, b, "old", delayq.Attributes{}, "a")

		// Piped, a queue holding messages is refused (exit 2) without --force.
		ios, _, _ := testIO(false, "")
		err := deleteRun(context.Background(), &deleteOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs"})
		if cmdutil.ExitCode(err, false) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "queue jobs holds 2 messages: not deleted") {
			t.Fatalf("piped without --force: %v", err)
		}

		// On a terminal it asks; yes deletes.
		ios, out, errOut := testIO(true, "y\n")
		ios.InTTY = true
		if err := deleteRun(context.Background(), &deleteOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs"}); err != nil {
			t.Fatal(err)
		}
		if want := "chatq: delete queue jobs holding 2 messages? [y/N] chatq: deleted queue jobs and its 2 messages\n"; out.Len() != 0 || errOut.String() != want {
			t.Fatalf("terminal: %q %q", out, errOut)
		}

		// Piped with --force, JSON.
		ios, out, errOut = testIO(false, "")
		if err := deleteRun(context.Background(), &deleteOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "old", Force: true}); err != nil {
			t.Fatal(err)
		}
		var got queueDeleteJSON
		decode(t, out, &got)
		if got.Deleted != "old" || got.Messages != 1 || got.DeadLetterOf == nil || errOut.Len() != 0 {
			t.Fatalf("piped JSON: %+v %q", got, errOut)
		}
	})
}

func TestPurgeRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		newQueue(t, b, "jobs", delayq.Attributes{}, "a", "b")

		// On a terminal, no is exit 2 and nothing changes.
		ios, out, errOut := testIO(true, "n\n")
		ios.InTTY = true
		err := purgeRun(context.Background(), &deleteOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs"})
		if cmdutil.ExitCode(err, false) != cmdutil.ExitUsage || out.Len() != 0 || !strings.Contains(errOut.String(), "purge queue jobs, deleting its 2 messages? [y/N]") {
			t.Fatalf("declined: %v %q %q", err, out, errOut)
		}
		// Piped with --force: the count, alone on stdout.
		ios, out, errOut = testIO(false, "")
		if err := purgeRun(context.Background(), &deleteOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Force: true}); err != nil {
			t.Fatal(err)
		}
		if out.String() != "2\n" || errOut.Len() != 0 {
			t.Fatalf("piped: %q %q", out, errOut)
		}
		ios, out, _ = testIO(false, "")
		if err := purgeRun(context.Background(), &deleteOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "jobs"}); err != nil {
			t.Fatal(err)
		}
		var got queuePurgeJSON
		decode(t, out, &got)
		if got.Purged != 0 {
			t.Fatalf("purge of an empty queue: %+v", got)
		}
	})
}
