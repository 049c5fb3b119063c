package queue

import (
	"context"
	"slices"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queuePeekOptions struct {
	f         *cmdutil.Factory
	cmd       *cobra.Command
	queue     string
	n         int
	state     string
	olderThan time.Duration
}

func newQueuePeekCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queuePeekOptions{f: f}
	cmd := &cobra.Command{
		Use:   "peek QUEUE [-n N] [--state ready|delayed|inflight] [--older-than DUR]",
		Short: "Show messages without receiving them, by due time",
		Long: `Show the first N messages by the time they become visible, with their state
(ready, delayed or inflight) and receive count, without receiving them:
nothing changes.

--state keeps the messages in one state: ready (due now), delayed (not due,
never received) or inflight (received, not due: a consumer holds it; read
from chatq's index of received messages). --older-than keeps the messages
sent longer ago than DUR (the send time is in the id). Both together keep
the messages that pass both. A filter that matches few messages reads the
queue in many calls, each examining at most 1,000 messages, until N are
found or the queue ends; each page is read at its own instant.`,
		Example: `  chatq queue peek jobs
  chatq queue peek jobs -n 100 -o json
  chatq queue peek jobs --state inflight
  chatq queue peek jobs --state ready --older-than 1h -n 1000 -o json | jq -r '.[].id'`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue = cmd, args[0]
			return queuePeekRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.n, "count", "n", 10, "show up to N messages")
	cmd.Flags().StringVar(&opts.state, "state", "", "only messages in this state: ready, delayed or inflight")
	cmd.Flags().DurationVar(&opts.olderThan, "older-than", 0, "only messages sent longer ago than this (e.g. 10m, 2h)")
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(peekStates, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// peekStates are the values of delayq.PeekOptions.State.
var peekStates = []string{"ready", "delayed", "inflight"}

type peekJSON struct {
	messageJSON
	VisibleAt int64  `json:"visible_at"`
	State     string `json:"state"`
}

func queuePeekRun(ctx context.Context, opts *queuePeekOptions) error {
	if opts.n < 1 {
		return cmdutil.UsageErrorf("invalid -n %d: must be at least 1", opts.n)
	}
	if opts.state != "" && !slices.Contains(peekStates, opts.state) {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --state %q", opts.state),
			"want ready (due now), delayed (not due, never received) or inflight (held by a consumer)")
	}
	if opts.cmd.Flags().Changed("older-than") && opts.olderThan <= 0 {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --older-than %s: must be positive", opts.olderThan),
			"give an age such as 90s, 10m or 24h")
	}
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	ps, err := q.Peek(ctx, opts.queue, delayq.PeekOptions{N: opts.n, State: opts.state, OlderThan: opts.olderThan})
	if err != nil {
		return queueErr(err)
	}
	if opts.f.JSON() {
		out := make([]peekJSON, 0, len(ps))
		for _, p := range ps {
			out = append(out, peekJSON{messageJSON: toMessageJSON(p), VisibleAt: p.VisibleAt.UnixMilli(), State: p.State})
		}
		if err := opts.f.IO.WriteJSON(out); err != nil {
			return err
		}
	} else {
		t := opts.f.IO.NewTable("ID", "STATE", "VISIBLE_AT", "RC", "MESSAGE").WhenEmpty("no messages")
		for _, p := range ps {
			t.Row(p.ID, p.State, stamp(p.VisibleAt), p.RC, p.Body)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(ps) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}
