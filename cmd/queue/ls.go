package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queueLsOptions struct {
	f    *cmdutil.Factory
	cmd  *cobra.Command
	long bool
}

func newQueueLsCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueLsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "ls [-l]",
		Short: "List the namespace's queues (RSMQ listQueues); -l with their counts",
		Long: `List the namespace's queues (RSMQ listQueues). No queues prints nothing ([]
with -o json; "no queues" on stderr on a terminal) and exits 0, or 3 with -e.

With -l (long), each queue's row has what an operator looks at first:

  MESSAGES      all its messages
  READY         due now
  DELAYED       never received and not yet due
  INFLIGHT      received and invisible until the visibility timeout ends
  OLDEST_READY  how long the ready message that has waited longest has been
                due ("-" when none is ready); see queue stats
  DEAD_LETTER   its dead-letter queue, "(missing)" after it when that queue
                does not exist

The counts come from the stats script (O(log n) each, at one instant of
server time per queue), 20 queues a round trip (a pipeline runs back to back in the server); the registry is read with
SSCAN. ls -l never writes: a queue whose index of received messages is
incomplete (an rsmq client received from it) shows its split as the index
has it (split_exact false in JSON; queue stats rebuilds it). A queue whose
counts cannot be read (a key of the wrong type, a name in the registry
without a queue) shows the error in its row; ls then exits 1.`,
		Example: `  chatq queue ls
  chatq queue ls --namespace myapp -o json
  chatq queue ls -l
  chatq queue ls -l -o json | jq '.[] | select(.oldest_ready_ms > 60000) | .name'`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd = cmd
			return queueLsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.long, "long", "l", false, "show each queue's counts, oldest ready age and dead-letter queue")
	return cmd
}

type queueName struct {
	Name string `json:"name"`
}

// queueLongJSON is one queue of ls -l -o json: the fields of queue stats
// that matter in a listing, or error.
type queueLongJSON struct {
	Name              string `json:"name"`
	Msgs              *int64 `json:"msgs"`
	Ready             *int64 `json:"ready"`
	Delayed           *int64 `json:"delayed"`
	InFlight          *int64 `json:"inflight"`
	OldestReadyMs     any    `json:"oldest_ready_ms"`
	DeadLetter        string `json:"dead_letter"`
	DeadLetterMissing bool   `json:"dead_letter_missing"`
	SplitExact        bool   `json:"split_exact"`
	Error             string `json:"error,omitempty"`
}

func queueLsRun(ctx context.Context, opts *queueLsOptions) error {
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	names, err := listQueues(ctx, q)
	if err != nil {
		return err
	}
	if opts.long {
		return queueLsLong(ctx, opts, q, names)
	}
	if opts.f.JSON() {
		out := make([]queueName, 0, len(names))
		for _, n := range names {
			out = append(out, queueName{n})
		}
		if err := opts.f.IO.WriteJSON(out); err != nil {
			return err
		}
	} else {
		t := opts.f.IO.NewTable("NAME").WhenEmpty("no queues")
		for _, n := range names {
			t.Row(n)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(names) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}

// queueLsLong prints ls -l: the stats of names, read in pipelines of 20 (statsPipeline).
func queueLsLong(ctx context.Context, opts *queueLsOptions, q *delayq.Client, names []string) error {
	rows, err := q.StatsEach(ctx, names)
	if err != nil {
		return err
	}
	failed, inexact := 0, 0
	out := make([]queueLongJSON, 0, len(rows))
	t := opts.f.IO.NewTable("NAME", "MESSAGES", "READY", "DELAYED", "INFLIGHT", "OLDEST_READY", "DEAD_LETTER").WhenEmpty("no queues")
	for _, r := range rows {
		if r.Err != nil {
			failed++
			msg := r.Err.Error()
			if errors.Is(r.Err, delayq.ErrQueueNotFound) {
				msg = "not found: the registry names it, but the queue does not exist"
			}
			out = append(out, queueLongJSON{Name: r.Name, Error: msg})
			t.Row(r.Name, "-", "-", "-", "-", "-", "-", "error: "+msg)
			continue
		}
		s := &r
		if !s.SplitExact {
			inexact++
		}
		j := queueLongJSON{Name: s.Name, Msgs: &s.Messages, Ready: &s.Ready, Delayed: &s.Delayed, InFlight: &s.InFlight,
			DeadLetter: s.DeadLetter, DeadLetterMissing: s.DeadLetterMissing, SplitExact: s.SplitExact}
		if s.OldestReady != nil {
			j.OldestReadyMs = s.OldestReadyAge.Milliseconds()
		}
		out = append(out, j)
		dl := "-"
		if s.DeadLetter != "" {
			dl = s.DeadLetter
			if s.DeadLetterMissing {
				dl += " (missing)"
			}
		}
		t.Row(s.Name, s.Messages, s.Ready, s.Delayed, s.InFlight, oldestReady(s), dl)
	}
	if opts.f.JSON() {
		err = opts.f.IO.WriteJSON(out)
	} else {
		err = t.Flush()
	}
	if err != nil {
		return err
	}
	if inexact > 0 {
		opts.f.IO.Infof("warning: delayed and inflight of %s may be off: an rsmq client received from them (`chatq queue stats QUEUE` rebuilds the index)", plural(int64(inexact), "queue"))
	}
	for _, r := range rows {
		if r.Err == nil && r.DeadLetterMissing {
			opts.f.IO.Infof("warning: queue %s names %s as its dead-letter queue, which does not exist: the policy is off", r.Name, r.DeadLetter)
		}
	}
	if failed > 0 {
		return fmt.Errorf("the counts of %s could not be read (see the rows marked error)", plural(int64(failed), "queue"))
	}
	if len(names) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}
