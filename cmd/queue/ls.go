package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/rsmq"
	"github.com/spf13/cobra"
)

type lsOptions struct {
	cmdutil.Output
	Kinds func() (*queues.Registry, error)
	Long  bool
	Kind  string
}

// NewCmdLs returns `chatq queue ls` (runF: see cmdutil.RunWith).
func NewCmdLs(f *cmdutil.Factory, runF func(context.Context, *lsOptions) error) *cobra.Command {
	opts := &lsOptions{}
	cmd := &cobra.Command{
		Use:   "ls [-l]",
		Short: "List the queues of every kind (RSMQ's, BullMQ's, asynq's, stream groups); -l with their counts",
		Long: `List the namespace's RSMQ queues (RSMQ listQueues), then the queues of the
other kinds on the server, each by the address every queue command takes:
bullmq:[PREFIX:]QUEUE, asynq:QUEUE, stream:KEY/GROUP (docs/kinds.md).
--kind K lists one kind's. Discovery is bounded calls: SSCAN of RSMQ's and
asynq's registries, SCAN (COUNT 500) for BullMQ's meta keys and streams.
No queues prints nothing ([] with -o json; "no queues" on stderr on a
terminal) and exits 0, or 3 with -e.

With -l (long), each queue's row has what an operator looks at first:

  MESSAGES      all its messages
  READY         due now
  DELAYED       never received and not yet due
  INFLIGHT      received and invisible until the visibility timeout ends
  OLDEST_READY  how long the ready message that has waited longest has been
                due ("-" when none is ready); see queue stats
  RETRY         failed, to run again later (asynq's retry)
  DEAD          failed for good (BullMQ's failed, asynq's archived, a
                stream group's dead letters)
  DONE          finished and kept (BullMQ's and asynq's completed)
  PAUSED        yes when its workers take no new jobs
  DEAD_LETTER   its dead-letter queue, "(missing)" after it when that queue
                does not exist

A state the queue's kind does not have shows "-" (null in JSON).

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
  chatq queue ls -l --jq '.[] | select(.oldest_ready_ms > 60000) | .name'
  chatq queue ls -l --kind bullmq
  chatq queue ls -l --jq '.[] | select(.dead > 0) | .name'   # queues of any kind with dead jobs`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.RunWith(f, opts, runF, lsRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Kinds = kindsClient(f, cmd)
			return nil, nil
		}),
	}
	cmd.Flags().BoolVarP(&opts.Long, "long", "l", false, "show each queue's counts, oldest ready age and dead-letter queue")
	cmd.Flags().StringVar(&opts.Kind, "kind", "", "list only the queues of one kind: rsmq, bullmq, asynq or stream")
	return cmdutil.MarkRead(cmd)
}

type queueName struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// queueLongJSON is one queue of ls -l -o json: the fields of queue stats
// that matter in a listing, or error. The counts of a state the queue's
// kind does not have are null.
type queueLongJSON struct {
	Name              string `json:"name"`
	Kind              string `json:"kind"`
	Msgs              *int64 `json:"msgs"`
	Ready             *int64 `json:"ready"`
	Delayed           *int64 `json:"delayed"`
	InFlight          *int64 `json:"inflight"`
	Retry             *int64 `json:"retry"`
	Dead              *int64 `json:"dead"`
	Done              *int64 `json:"done"`
	Paused            *bool  `json:"paused"`
	OldestReadyMs     any    `json:"oldest_ready_ms"`
	DeadLetter        string `json:"dead_letter"`
	DeadLetterMissing bool   `json:"dead_letter_missing"`
	SplitExact        bool   `json:"split_exact"`
	// Other: the kind's own states and sub-counts (BullMQ's
	// waiting-children, prioritized), omitted when none.
	Other    map[string]int64 `json:"other,omitempty"`
	Version  string           `json:"version,omitempty"`
	ReadOnly string           `json:"read_only,omitempty"`
	Error    string           `json:"error,omitempty"`
}

// listed is one queue found: its kind and address.
type listed struct {
	kind    queues.Kind
	address string
}

func lsRun(ctx context.Context, opts *lsOptions) error {
	reg, err := opts.Kinds()
	if err != nil {
		return err
	}
	found, refused, err := discoverAll(ctx, reg, opts.Kind)
	if err != nil {
		return err
	}
	if len(refused) > 0 {
		// Not silent: the listing is short of what the server holds.
		opts.IO.Infof("note: %s queues not listed: this user may not look for them (`chatq acl --kind %s` prints what it needs)", strings.Join(refused, ", "), refused[0])
	}
	if opts.Long {
		return lsLong(ctx, opts, found)
	}
	if opts.JSON {
		out := make([]queueName, 0, len(found))
		for _, q := range found {
			out = append(out, queueName{q.address, q.kind.Name()})
		}
		if err := opts.IO.WriteJSON(out); err != nil {
			return err
		}
	} else {
		t := opts.IO.NewTable("NAME").WhenEmpty("no queues")
		for _, q := range found {
			t.Row(q.address)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(found) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}

// lsLong prints ls -l: RSMQ's queues with their stats, read in pipelines
// of 20 (StatsEach), then every other kind's queues with their counts.
func lsLong(ctx context.Context, opts *lsOptions, found []listed) error {
	var names []string
	var rq *delayq.Client
	for _, q := range found {
		if k, ok := q.kind.(*rsmq.Kind); ok {
			names, rq = append(names, q.address), k.Client()
		}
	}
	var rows []delayq.Stats
	if len(names) > 0 {
		var err error
		if rows, err = rq.StatsEach(ctx, names); err != nil {
			return err
		}
	}
	failed, inexact := 0, 0
	out := make([]queueLongJSON, 0, len(found))
	t := opts.IO.NewTable("NAME", "MESSAGES", "READY", "DELAYED", "INFLIGHT", "RETRY", "DEAD", "DONE", "OLDEST_READY", "PAUSED", "DEAD_LETTER").WhenEmpty("no queues")
	// A piped table writes its rows at once: with -o json, only the JSON.
	row := func(j queueLongJSON, oldest, dl string) {
		out = append(out, j)
		if opts.JSON {
			return
		}
		if j.Error != "" {
			t.Row(j.Name, "-", "-", "-", "-", "-", "-", "-", "-", "-", "error: "+j.Error)
			return
		}
		t.Row(j.Name, count(j.Msgs), count(j.Ready), count(j.Delayed), count(j.InFlight), count(j.Retry), count(j.Dead), count(j.Done), oldest, yesNo(j.Paused), dl)
	}
	for _, r := range rows {
		if r.Err != nil {
			failed++
			msg := r.Err.Error()
			if errors.Is(r.Err, delayq.ErrQueueNotFound) {
				msg = "not found: the registry names it, but the queue does not exist"
			}
			row(queueLongJSON{Name: r.Name, Kind: "rsmq", Error: msg}, "", "")
			continue
		}
		s := &r
		if !s.SplitExact {
			inexact++
		}
		j := queueLongJSON{Name: s.Name, Kind: "rsmq", Msgs: &s.Messages, Ready: &s.Ready, Delayed: &s.Delayed, InFlight: &s.InFlight,
			DeadLetter: s.DeadLetter, DeadLetterMissing: s.DeadLetterMissing, SplitExact: s.SplitExact}
		if s.OldestReady != nil {
			j.OldestReadyMs = s.OldestReadyAge.Milliseconds()
		}
		dl := "-"
		if s.DeadLetter != "" {
			dl = s.DeadLetter
			if s.DeadLetterMissing {
				dl += " (missing)"
			}
		}
		row(j, oldestReady(s), dl)
	}
	for _, q := range found {
		if _, ok := q.kind.(*rsmq.Kind); ok {
			continue
		}
		j := queueLongJSON{Name: q.address, Kind: q.kind.Name()}
		c, err := countsOf(ctx, q)
		if err != nil {
			failed++
			j.Error = err.Error()
			row(j, "", "")
			continue
		}
		j.fill(c)
		oldest := "-"
		if c.OldestReady != nil {
			oldest = roughly(*c.OldestReady)
		}
		row(j, oldest, "-")
	}
	var err error
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
	if len(found) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}

// fill sets j's counts from c.
func (j *queueLongJSON) fill(c *queues.Counts) {
	total := c.Total()
	j.Msgs, j.Ready, j.Delayed, j.InFlight, j.Retry, j.Dead, j.Done = &total, c.Ready, c.Delayed, c.Inflight, c.Retry, c.Dead, c.Done
	j.Paused, j.Other, j.Version, j.ReadOnly, j.SplitExact = c.Paused, c.Other, c.Version, c.ReadOnly, true
	if c.OldestReady != nil {
		j.OldestReadyMs = c.OldestReady.Milliseconds()
	}
}

// countsOf reads the counts of q.
func countsOf(ctx context.Context, q listed) (*queues.Counts, error) {
	qu, err := q.kind.Open(q.address[len(q.kind.Name())+1:])
	if err != nil {
		return nil, err
	}
	return qu.Counts(ctx)
}

// count is a count in a table: "-" for a state the kind has not.
func count(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}

func yesNo(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "yes"
	}
	return "no"
}
