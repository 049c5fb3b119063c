package queue

import (
	"context"
	"strings"
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
		Use:   "ack QUEUE ID|RECEIPT...",
		Short: "Acknowledge (delete) received messages (RSMQ deleteMessage)",
		Long: `Delete received messages so they do not come back, in one round trip.

Name each message by its id (RSMQ's semantics: whoever holds the message,
it is deleted) or by the receipt poll printed for your delivery (ID.RC.FR):
a receipt acks only while no later receive has taken the message. A stale
receipt (the visibility timeout ended and the message was received again)
deletes nothing, since the other delivery now handles it.

Ids that are not in the queue (already acked, popped or dead-lettered) and
stale receipts are listed on stderr and make the command exit 1; the others
are still acked. JSON: {"acked":N,"missing":[...],"stale":[...]}.`,
		Example: `  chatq queue ack jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv
  chatq queue ack jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv.1.1795268834364
  chatq queue poll jobs -n 10 -o json | jq -r '.[].receipt' | xargs chatq queue ack jobs`,
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
	Stale   []string `json:"stale"`
}

func queueAckRun(ctx context.Context, opts *queueAckOptions) error {
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	// The ids and receipts are checked before any call; with some not
	// acked r says which and err why (not in the queue, or stale).
	r, err := q.Ack(ctx, opts.queue, opts.ids...)
	if r == nil {
		return queueErr(err)
	}
	if opts.f.JSON() {
		out := queueAckJSON{Acked: r.Acked, Missing: r.Missing, Stale: r.Stale}
		if out.Missing == nil {
			out.Missing = []string{}
		}
		if out.Stale == nil {
			out.Stale = []string{}
		}
		if err := opts.f.IO.WriteJSON(out); err != nil {
			return err
		}
	}
	for _, id := range r.Missing {
		opts.f.IO.Infof("not in queue %s: %s", opts.queue, id)
	}
	for _, id := range r.Stale {
		opts.f.IO.Infof("stale receipt, not acked: %s", id)
	}
	if err != nil {
		return queueErr(err)
	}
	infoTTY(opts.f, "acked %s", plural(int64(r.Acked), "message"))
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
		Use:   "retry QUEUE ID|RECEIPT [--delay DUR]",
		Short: "Make a message due again now or after a delay (RSMQ changeMessageVisibility)",
		Long: `Make a message due again, now or after --delay, instead of waiting for its
visibility timeout to end. Its receive count is kept.

Name it by its id (RSMQ's changeMessageVisibility: whoever holds it) or by
the receipt of your delivery (ID.RC.FR, as poll prints it): a stale receipt
(the message was received again since) changes nothing and exits 1.`,
		Example: `  chatq queue retry jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv
  chatq queue retry jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv --delay 10m
  chatq queue retry "$CHATQ_QUEUE" "$CHATQ_RECEIPT" --delay 1m   # inside queue work`,
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
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	at, err := q.ChangeVisibility(ctx, opts.queue, opts.id, opts.delay)
	if err != nil {
		return queueErr(err)
	}
	if opts.f.JSON() {
		// A receipt is ID.RC.FR (checked by ChangeVisibility).
		id, _, _ := strings.Cut(opts.id, ".")
		return opts.f.IO.WriteJSON(queueRetryJSON{ID: id, VisibleAt: at.UnixMilli()})
	}
	infoTTY(opts.f, "%s due at %s", opts.id, stamp(at))
	return nil
}
