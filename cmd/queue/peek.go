package queue

import (
	"context"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queuePeekOptions struct {
	f     *cmdutil.Factory
	cmd   *cobra.Command
	queue string
	n     int
}

func newQueuePeekCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queuePeekOptions{f: f}
	cmd := &cobra.Command{
		Use:   "peek QUEUE [-n N]",
		Short: "Show messages without receiving them, by due time",
		Long: `Show the first N messages by the time they become visible, with their state
(ready, delayed or inflight) and receive count, without receiving them:
nothing changes.`,
		Example: `  chatq queue peek jobs
  chatq queue peek jobs -n 100 -o json`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue = cmd, args[0]
			return queuePeekRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.n, "count", "n", 10, "show up to N messages")
	return cmd
}

type peekJSON struct {
	messageJSON
	VisibleAt int64  `json:"visible_at"`
	State     string `json:"state"`
}

func queuePeekRun(ctx context.Context, opts *queuePeekOptions) error {
	if opts.n < 1 {
		return cmdutil.UsageErrorf("invalid -n %d: must be at least 1", opts.n)
	}
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	ps, err := q.Peek(ctx, opts.queue, opts.n)
	if err != nil {
		return queueErr(err)
	}
	if opts.f.JSON() {
		out := make([]peekJSON, 0, len(ps))
		for _, p := range ps {
			out = append(out, peekJSON{messageJSON: toMessageJSON(p.Message), VisibleAt: p.VisibleAt.UnixMilli(), State: string(p.State)})
		}
		if err := opts.f.WriteJSON(out); err != nil {
			return err
		}
	} else {
		t := opts.f.NewTable("ID", "STATE", "VISIBLE_AT", "RC", "MESSAGE").WhenEmpty("no messages")
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
