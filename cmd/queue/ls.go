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
		return opts.f.WriteJSON(out)
	}
	t := opts.f.NewTable("NAME")
	for _, n := range names {
		t.Row(n)
	}
	return t.Flush()
}
