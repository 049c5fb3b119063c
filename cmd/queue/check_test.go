package queue

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestCheckFlags(t *testing.T) {
	tests := []flagCase[checkOptions]{
		{args: []string{"jobs", "--max-ready", "10"}, want: checkOptions{Queues: []string{"jobs"}, Thresholds: []threshold{{"max-ready", 10}}}},
		// the order of the checks, whatever the order of the flags
		{args: []string{"-o", "json", "a", "b", "--max-dead", "0", "--max-oldest", "1m30s", "--max-inflight", "3", "--max-ready", "0"},
			want: checkOptions{Output: cmdutil.Output{JSON: true}, Queues: []string{"a", "b"}, Thresholds: []threshold{{"max-ready", 0}, {"max-oldest", 90000}, {"max-inflight", 3}, {"max-dead", 0}}}},
		{args: []string{"jobs"}, wantErr: "no threshold to check"},
		{args: []string{"--max-ready", "1"}, wantErr: "requires at least 1 arg"},
		{args: []string{"QUEUES", "--max-ready", "1"}, wantErr: "registry"},
		{args: []string{"jobs", "--max-ready", "-1"}, wantErr: "invalid --max-ready -1: not negative"},
		{args: []string{"jobs", "--max-oldest", "-1s"}, wantErr: "invalid --max-oldest -1s: not negative"},
		{args: []string{"jobs", "--max-oldest", "soon"}, wantErr: "invalid argument"},
	}
	checkFlags(t, NewCmdCheck, func(o *checkOptions) { o.IO, o.Client, o.Kinds = nil, nil, nil }, tests)
}

func TestCheckRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		newQueue(t, b, "dead", delayq.Attributes{}, "x", "y")
		newQueue(t, b, "jobs", delayq.Attributes{MaxReceives: 3, DeadLetter: "dead"}, "a", "b", "c")
		run := func(tty, js bool, queues []string, ts ...threshold) (string, string, error) {
			ios, out, errOut := testIO(tty, "")
			err := checkRun(ctx, &checkOptions{Output: cmdutil.Output{IO: ios, JSON: js}, Client: testClient(b), Queues: queues, Thresholds: ts})
			return out.String(), errOut.String(), err
		}

		// All hold: nothing on stdout; a line on a terminal's stderr only.
		out, errOut, err := run(true, false, []string{"jobs"}, threshold{"max-ready", 3}, threshold{"max-dead", 2})
		if err != nil || out != "" || !strings.Contains(errOut, "all thresholds hold (1 queue)") {
			t.Errorf("all hold on a terminal: %v %q %q", err, out, errOut)
		}
		if out, errOut, err = run(false, false, []string{"jobs"}, threshold{"max-ready", 3}); err != nil || out != "" || errOut != "" {
			t.Errorf("all hold, piped: %v %q %q", err, out, errOut)
		}

		// Breaches: exit 5, a line each (a header on a terminal); the dead
		// letters are those of the dead-letter queue, read though not
		// named.
		out, _, err = run(false, false, []string{"jobs"}, threshold{"max-ready", 2}, threshold{"max-oldest", 3600000}, threshold{"max-dead", 1})
		if cmdutil.ExitCode(err, false) != 5 || out != "jobs\tmax-ready\t3\t2\njobs\tmax-dead\t2\t1\n" {
			t.Errorf("piped breaches: exit %d (%v), %q", cmdutil.ExitCode(err, false), err, out)
		}
		if !strings.Contains(err.Error(), "2 thresholds breached: jobs max-ready 3 > 2; jobs max-dead 2 > 1") {
			t.Errorf("error %q", err)
		}
		if out, _, _ = run(true, false, []string{"jobs"}, threshold{"max-ready", 2}); !strings.HasPrefix(out, "QUEUE ") {
			t.Errorf("terminal breaches: %q", out)
		}

		// JSON: every check; a missing queue has its error, and a breach
		// elsewhere still exits 5.
		out, errOut, err = run(false, true, []string{"jobs", "gone"}, threshold{"max-ready", 2}, threshold{"max-inflight", 0})
		var res struct {
			OK     bool
			Queues []struct {
				Queue, Error string
				OK           bool
				Checks       []struct {
					Check        string
					Value, Limit int64
					OK           bool
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if res.OK || len(res.Queues) != 2 || res.Queues[0].OK || len(res.Queues[0].Checks) != 2 || res.Queues[0].Checks[0].Value != 3 ||
			!res.Queues[0].Checks[1].OK || res.Queues[1].Error == "" || len(res.Queues[1].Checks) != 0 {
			t.Errorf("JSON: %s", out)
		}
		if cmdutil.ExitCode(err, false) != 5 || !strings.Contains(errOut, `queue "gone": queue not found`) {
			t.Errorf("a breach and a missing queue: exit %d, stderr %q", cmdutil.ExitCode(err, false), errOut)
		}
		// Only a missing queue: exit 1, not found.
		if _, _, err = run(false, false, []string{"gone"}, threshold{"max-ready", 2}); cmdutil.ExitCode(err, false) != 1 || !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Errorf("a missing queue: %v", err)
		}

		// A ready message due a while: max-oldest, in ms.
		q, _ := testClient(b)()
		if _, err := q.Import(ctx, "jobs", func(yield func(delayq.Message, error) bool) {
			yield(delayq.Message{ID: "0000000000oldoldoldoldoldoldoldo", Body: "old", VisibleAt: time.UnixMilli(1000)}, nil)
		}); err != nil {
			t.Fatal(err)
		}
		out, _, err = run(false, false, []string{"jobs"}, threshold{"max-oldest", 60000})
		if cmdutil.ExitCode(err, false) != 5 || !strings.HasPrefix(out, "jobs\tmax-oldest\t") || !strings.HasSuffix(out, " days\t1m0s\n") {
			t.Errorf("max-oldest: %v %q", err, out)
		}
	})
}
