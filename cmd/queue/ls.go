package queue

import (
	"context"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/spf13/cobra"
)

type queueLsOptions struct {
	f   *cmdutil.Factory
	cmd *cobra.Command
}

func newQueueLsCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueLsOptions{f: f}
	return &cobra.Command{
		Use:   "ls",
		Short: "List the namespace's queues (RSMQ listQueues)",
		Long: `List the namespace's queues (RSMQ listQueues). No queues prints nothing ([]
with -o json; "no queues" on stderr on a terminal) and exits 0, or 3 with -e.`,
		Example: `  chatq queue ls
  chatq queue ls --namespace myapp -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd = cmd
			return queueLsRun(cmd.Context(), opts)
		},
	}
}

type queueName struct {
	Name string `json:"name"`
}

func queueLsRun(ctx context.Context, opts *queueLsOptions) error {
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	names, err := q.List(ctx)
	if err != nil {
		return err
	}
	if opts.f.JSON() {
		out := make([]queueName, 0, len(names))
		for _, n := range names {
			out = append(out, queueName{n})
		}
		if err := opts.f.WriteJSON(out); err != nil {
			return err
		}
	} else {
		t := opts.f.NewTable("NAME").WhenEmpty("no queues")
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
