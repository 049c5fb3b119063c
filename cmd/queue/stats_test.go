package queue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestStatsFlags(t *testing.T) {
	tests := []flagCase[statsOptions]{
		{args: []string{"jobs"}, want: statsOptions{Queue: "jobs"}},
		{args: []string{"-o", "json", "jobs", "--no-reindex"}, want: statsOptions{Output: cmdutil.Output{JSON: true}, Queue: "jobs", NoReindex: true}},
		{args: []string{"QUEUES"}, wantErr: "registry"},
		{args: []string{""}, wantErr: "queue name"},
		{args: []string{}, wantErr: "accepts 1 arg(s)"},
	}
	checkFlags(t, NewCmdStats, func(o *statsOptions) { o.IO, o.Client = nil, nil }, tests)
}

func TestStatsRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		newQueue(t, b, "gone", delayq.Attributes{})
		newQueue(t, b, "jobs", delayq.Attributes{VT: time.Minute, MaxReceives: 3, DeadLetter: "gone"}, "a", "b")
		q, _ := testClient(b)()
		if _, err := q.Delete(context.Background(), "gone", -1); err != nil {
			t.Fatal(err)
		}

		// On a terminal: a table with a header; the missing dead-letter
		// queue is warned about.
		ios, out, errOut := testIO(true, "")
		if err := statsRun(context.Background(), &statsOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs"}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out.String(), "\n")
		if !strings.HasPrefix(lines[0], "FIELD ") || !strings.Contains(out.String(), "\nready         2\n") ||
			!strings.Contains(out.String(), "3 receives, then gone (missing: off)") {
			t.Fatalf("terminal: %q", out)
		}
		if !strings.Contains(errOut.String(), "chatq: warning: queue jobs names gone as its dead-letter queue") {
			t.Fatalf("terminal stderr: %q", errOut)
		}

		// Piped: tab-separated rows, no header.
		ios, out, _ = testIO(false, "")
		if err := statsRun(context.Background(), &statsOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs"}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "name\tjobs\nmessages\t2\n") {
			t.Fatalf("piped: %q", out)
		}
		ios, out, _ = testIO(false, "")
		if err := statsRun(context.Background(), &statsOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "jobs"}); err != nil {
			t.Fatal(err)
		}
		var s queueStatsJSON
		decode(t, out, &s)
		if s.Name != "jobs" || s.Msgs != 2 || s.Ready != 2 || s.VT != 60 || !s.DeadLetterMissing || s.OldestReadyID == nil {
			t.Fatalf("JSON: %+v", s)
		}

		ios, _, _ = testIO(false, "")
		err := statsRun(context.Background(), &statsOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "nope"})
		if !errors.Is(err, delayq.ErrQueueNotFound) || !strings.Contains(hintOf(err), "chatq queue create nope") {
			t.Fatalf("missing queue: %v", err)
		}
	})
}
