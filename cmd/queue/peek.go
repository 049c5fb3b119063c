package queue

import (
	"context"
	"slices"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type peekOptions struct {
	IO        *iostreams.IOStreams
	JSON      bool
	Client    func() (*delayq.Client, error)
	Queue     string
	N         int
	State     string
	OlderThan *time.Duration // --older-than, if given
}

// NewCmdPeek returns `chatq queue peek`. runF, when set (tests), replaces
// the run function and gets the options after flags are parsed and
// validated.
func NewCmdPeek(f *cmdutil.Factory, runF func(context.Context, *peekOptions) error) *cobra.Command {
	opts := &peekOptions{IO: f.IO}
	var olderThan time.Duration
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
  chatq queue peek jobs --state ready --older-than 1h -n 1000 --jq '.[].id'`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Queue, opts.OlderThan = args[0], given(cmd.Flags(), "older-than", olderThan)
			opts.JSON, opts.Client = f.JSON(), queueClient(f, cmd)
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return peekRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.N, "count", "n", 10, "show up to N messages")
	cmd.Flags().StringVar(&opts.State, "state", "", "only messages in this state: ready, delayed or inflight")
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "only messages sent longer ago than this (e.g. 10m, 2h)")
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(peekStates, cobra.ShellCompDirectiveNoFileComp))
	return cmdutil.MarkRead(cmd)
}

// peekStates are the values of delayq.PeekOptions.State.
var peekStates = []string{"ready", "delayed", "inflight"}

type peekJSON struct {
	messageJSON
	VisibleAt int64  `json:"visible_at"`
	State     string `json:"state"`
}

func (o *peekOptions) validate() error {
	if o.N < 1 {
		return cmdutil.UsageErrorf("invalid -n %d: must be at least 1", o.N)
	}
	if o.State != "" && !slices.Contains(peekStates, o.State) {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --state %q", o.State),
			"want ready (due now), delayed (not due, never received) or inflight (held by a consumer)")
	}
	if o.OlderThan != nil && *o.OlderThan <= 0 {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --older-than %s: must be positive", *o.OlderThan),
			"give an age such as 90s, 10m or 24h")
	}
	return delayq.CheckName(o.Queue)
}

func peekRun(ctx context.Context, opts *peekOptions) error {
	po := delayq.PeekOptions{N: opts.N, State: opts.State}
	if opts.OlderThan != nil {
		po.OlderThan = *opts.OlderThan
	}
	q, err := opts.Client()
	if err != nil {
		return err
	}
	ps, err := q.Peek(ctx, opts.Queue, po)
	if err != nil {
		return queueErr(err)
	}
	if opts.JSON {
		out := make([]peekJSON, 0, len(ps))
		for _, p := range ps {
			out = append(out, peekJSON{messageJSON: toMessageJSON(p), VisibleAt: p.VisibleAt.UnixMilli(), State: p.State})
		}
		if err := opts.IO.WriteJSON(out); err != nil {
			return err
		}
	} else {
		t := opts.IO.NewTable("ID", "STATE", "VISIBLE_AT", "RC", "MESSAGE").WhenEmpty("no messages")
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
