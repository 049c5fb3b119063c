package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type lsOptions struct {
	IO     *iostreams.IOStreams
	JSON   bool
	Client func() (*delayq.Client, error)
	Long   bool
}

// NewCmdLs returns `chatq queue ls`. runF, when set (tests), replaces the
// run function and gets the options after flags are parsed.
func NewCmdLs(f *cmdutil.Factory, runF func(context.Context, *lsOptions) error) *cobra.Command {
	opts := &lsOptions{IO: f.IO}
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
  chatq queue ls -l --jq '.[] | select(.oldest_ready_ms > 60000) | .name'`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Client = f.JSON(), queueClient(f, cmd)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return lsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Long, "long", "l", false, "show each queue's counts, oldest ready age and dead-letter queue")
	return cmdutil.MarkRead(cmd)
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

func lsRun(ctx context.Context, opts *lsOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	names, err := listQueues(ctx, q)
	if err != nil {
		return err
	}
	if opts.Long {
		return lsLong(ctx, opts, q, names)
	}
	if opts.JSON {
		out := make([]queueName, 0, len(names))
		for _, n := range names {
			out = append(out, queueName{n})
		}
		if err := opts.IO.WriteJSON(out); err != nil {
			return err
		}
	} else {
		t := opts.IO.NewTable("NAME").WhenEmpty("no queues")
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

// lsLong prints ls -l: the stats of names, read in pipelines of 20 (StatsEach).
func lsLong(ctx context.Context, opts *lsOptions, q *delayq.Client, names []string) error {
	rows, err := q.StatsEach(ctx, names)
	if err != nil {
		return err
	}
	failed, inexact := 0, 0
	out := make([]queueLongJSON, 0, len(rows))
	t := opts.IO.NewTable("NAME", "MESSAGES", "READY", "DELAYED", "INFLIGHT", "OLDEST_READY", "DEAD_LETTER").WhenEmpty("no queues")
	// A piped table writes its rows at once: with -o json, only the JSON.
	row := func(cells ...any) {
		if !opts.JSON {
			t.Row(cells...)
		}
	}
	for _, r := range rows {
		if r.Err != nil {
			failed++
			msg := r.Err.Error()
			if errors.Is(r.Err, delayq.ErrQueueNotFound) {
				msg = "not found: the registry names it, but the queue does not exist"
			}
			out = append(out, queueLongJSON{Name: r.Name, Error: msg})
			row(r.Name, "-", "-", "-", "-", "-", "-", "error: "+msg)
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
		row(s.Name, s.Messages, s.Ready, s.Delayed, s.InFlight, oldestReady(s), dl)
	}
	if opts.JSON {
		err = opts.IO.WriteJSON(out)
	} else {
		err = t.Flush()
	}
	if err != nil {
		return err
	}
	if inexact > 0 {
		opts.IO.Infof("warning: delayed and inflight of %s may be off: an rsmq client received from them (`chatq queue stats QUEUE` rebuilds the index)", plural(int64(inexact), "queue"))
	}
	for _, r := range rows {
		if r.Err == nil && r.DeadLetterMissing {
			opts.IO.Infof("warning: queue %s names %s as its dead-letter queue, which does not exist: the policy is off", r.Name, r.DeadLetter)
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
