package queue

import (
	"context"
	"errors"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queueGetOptions struct {
	f     *cmdutil.Factory
	cmd   *cobra.Command
	queue string
	id    string
}

func newQueueGetCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueGetOptions{f: f}
	return &cobra.Command{
		Use:   "get QUEUE ID",
		Short: "Show one message by id, with its state, without receiving it",
		Long: `Show one message: its body, state (ready, delayed or inflight), receive
count, first receive, when it was sent (from the id) and when it becomes
visible, read at one instant of the server's time. Nothing changes.

ID may also be a receipt (ID.RC.FR). A message that is not in the queue
(acked, popped, dead-lettered, or never there) exits 1; a malformed id
exits 2. JSON: the fields of peek -o json for one message.`,
		Example: `  chatq queue get jobs hodb3yo4luDdAvOIizGxHU1g9i27CHH2
  chatq queue get jobs hodb3yo4luDdAvOIizGxHU1g9i27CHH2 -o json | jq -r .message`,
		Args: cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue, opts.id = cmd, args[0], args[1]
			return queueGetRun(cmd.Context(), opts)
		},
	}
}

func queueGetRun(ctx context.Context, opts *queueGetOptions) error {
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	m, err := q.Get(ctx, opts.queue, opts.id)
	if errors.Is(err, delayq.ErrInvalid) {
		// The queue name was checked: the id is bad (before any call).
		return cmdutil.WithHint(err, "a message id is the 32 characters push and poll print (e.g. hodb3yo4luDdAvOIizGxHU1g9i27CHH2), or a receipt ID.RC.FR; see `chatq queue peek QUEUE`")
	}
	if err != nil {
		return queueErr(err)
	}
	if opts.f.JSON() {
		return opts.f.IO.WriteJSON(peekJSON{messageJSON: toMessageJSON(*m), VisibleAt: m.VisibleAt.UnixMilli(), State: m.State})
	}
	t := opts.f.IO.NewTable("FIELD", "VALUE")
	t.Row("id", m.ID)
	t.Row("state", m.State)
	t.Row("rc", m.RC)
	t.Row("first_receive", stamp(m.FR))
	t.Row("sent", stamp(m.Sent))
	t.Row("visible_at", stamp(m.VisibleAt))
	t.Row("now", stamp(m.Now))
	t.Row("message", m.Body)
	return t.Flush()
}
