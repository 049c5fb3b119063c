package queue

import (
	"context"
	"fmt"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queueDeleteOptions struct {
	f     *cmdutil.Factory
	cmd   *cobra.Command
	queue string
}

func newQueueDeleteCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueDeleteOptions{f: f}
	return &cobra.Command{
		Use:     "delete QUEUE",
		Short:   "Delete a queue and its messages (RSMQ deleteQueue)",
		Example: `  chatq queue delete jobs`,
		Args:    cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue = cmd, args[0]
			return queueDeleteRun(cmd.Context(), opts)
		},
	}
}

type queueDeleteJSON struct {
	Deleted string `json:"deleted"`
}

func queueDeleteRun(ctx context.Context, opts *queueDeleteOptions) error {
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	if err := q.Delete(ctx, opts.queue); err != nil {
		return queueErr(err)
	}
	infoTTY(opts.f, "deleted queue %s", opts.queue)
	if opts.f.JSON() {
		return opts.f.WriteJSON(queueDeleteJSON{opts.queue})
	}
	return nil
}

func newQueuePurgeCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueDeleteOptions{f: f}
	return &cobra.Command{
		Use:     "purge QUEUE",
		Short:   "Delete every message of a queue, keeping the queue; prints how many",
		Example: `  chatq queue purge jobs`,
		Args:    cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue = cmd, args[0]
			return queuePurgeRun(cmd.Context(), opts)
		},
	}
}

type queuePurgeJSON struct {
	Purged int64 `json:"purged"`
}

func queuePurgeRun(ctx context.Context, opts *queueDeleteOptions) error {
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	n, err := q.Purge(ctx, opts.queue)
	if err != nil {
		return queueErr(err)
	}
	if opts.f.JSON() {
		return opts.f.WriteJSON(queuePurgeJSON{n})
	}
	fmt.Fprintln(opts.f.IO.Out, n)
	return nil
}
