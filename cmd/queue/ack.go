package queue

import (
	"context"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queueAckOptions struct {
	f     *cmdutil.Factory
	cmd   *cobra.Command
	queue string
	ids   []string
}

func newQueueAckCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueAckOptions{f: f}
	return &cobra.Command{
		Use:   "ack QUEUE ID...",
		Short: "Acknowledge (delete) received messages (RSMQ deleteMessage)",
		Long: `Delete received messages so they do not come back, in one round trip. Ids
that are not in the queue (already acked, popped or dead-lettered) are
listed on stderr and make the command exit 1; the others are still acked.`,
		Example: `  chatq queue ack jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv
  chatq queue poll jobs -n 10 -o json | jq -r '.[].id' | xargs chatq queue ack jobs`,
		Args: cmdutil.MinArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue, opts.ids = cmd, args[0], args[1:]
			return queueAckRun(cmd.Context(), opts)
		},
	}
}

type queueAckJSON struct {
	Acked   int      `json:"acked"`
	Missing []string `json:"missing"`
}

func queueAckRun(ctx context.Context, opts *queueAckOptions) error {
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	unique := map[string]bool{}
	for _, id := range opts.ids {
		if err := delayq.CheckID(id); err != nil {
			return err
		}
		unique[id] = true
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	missing, err := q.Ack(ctx, opts.queue, opts.ids...)
	if err != nil && missing == nil {
		return queueErr(err)
	}
	if opts.f.JSON() {
		if missing == nil {
			missing = []string{}
		}
		if err := opts.f.WriteJSON(queueAckJSON{Acked: len(unique) - len(missing), Missing: missing}); err != nil {
			return err
		}
	}
	for _, id := range missing {
		opts.f.IO.Infof("not in queue %s: %s", opts.queue, id)
	}
	if err != nil {
		return queueErr(err)
	}
	infoTTY(opts.f, "acked %s", plural(int64(len(unique)), "message"))
	return nil
}

type queueRetryOptions struct {
	f     *cmdutil.Factory
	cmd   *cobra.Command
	queue string
	id    string
	delay time.Duration
}

func newQueueRetryCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueRetryOptions{f: f}
	cmd := &cobra.Command{
		Use:   "retry QUEUE ID [--delay DUR]",
		Short: "Make a message due again now or after a delay (RSMQ changeMessageVisibility)",
		Long: `Make a message due again, now or after --delay, instead of waiting for its
visibility timeout to end. Its receive count is kept.`,
		Example: `  chatq queue retry jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv
  chatq queue retry jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv --delay 10m`,
		Args: cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue, opts.id = cmd, args[0], args[1]
			return queueRetryRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.delay, "delay", 0, "due after this delay")
	return cmd
}

type queueRetryJSON struct {
	ID        string `json:"id"`
	VisibleAt int64  `json:"visible_at"`
}

func queueRetryRun(ctx context.Context, opts *queueRetryOptions) error {
	if err := checkFlagDuration("delay", opts.delay, false); err != nil {
		return err
	}
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	if err := delayq.CheckID(opts.id); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	at, err := q.Retry(ctx, opts.queue, opts.id, opts.delay)
	if err != nil {
		return queueErr(err)
	}
	if opts.f.JSON() {
		return opts.f.WriteJSON(queueRetryJSON{ID: opts.id, VisibleAt: at.UnixMilli()})
	}
	infoTTY(opts.f, "%s due at %s", opts.id, stamp(at))
	return nil
}
