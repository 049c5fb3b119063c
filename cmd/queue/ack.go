package queue

import (
	"context"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type ackOptions struct {
	IO     *iostreams.IOStreams
	JSON   bool
	Client func() (*delayq.Client, error)
	Queue  string
	Refs   []string // ids or receipts
}

// NewCmdAck returns `chatq queue ack`. runF, when set (tests), replaces the
// run function and gets the options after flags are parsed and validated.
func NewCmdAck(f *cmdutil.Factory, runF func(context.Context, *ackOptions) error) *cobra.Command {
	opts := &ackOptions{IO: f.IO}
	cmd := &cobra.Command{
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
  chatq queue poll jobs -n 10 --jq '.[].receipt' | xargs chatq queue ack jobs`,
		Args: cmdutil.MinArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Queue, opts.Refs = args[0], args[1:]
			opts.JSON, opts.Client = f.JSON(), queueClient(f, cmd)
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return ackRun(cmd.Context(), opts)
		},
	}
	return cmdutil.MarkWrite(cmd, "chatq queue peek QUEUE")
}

// validate checks the queue name; Ack checks the ids and receipts before
// any call.
func (o *ackOptions) validate() error { return delayq.CheckName(o.Queue) }

type queueAckJSON struct {
	Acked   int      `json:"acked"`
	Missing []string `json:"missing"`
	Stale   []string `json:"stale"`
}

func ackRun(ctx context.Context, opts *ackOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	// With some not acked r says which and err why (not in the queue, or
	// stale).
	r, err := q.Ack(ctx, opts.Queue, opts.Refs...)
	if r == nil {
		return queueErr(err)
	}
	if opts.JSON {
		out := queueAckJSON{Acked: r.Acked, Missing: r.Missing, Stale: r.Stale}
		if out.Missing == nil {
			out.Missing = []string{}
		}
		if out.Stale == nil {
			out.Stale = []string{}
		}
		if err := opts.IO.WriteJSON(out); err != nil {
			return err
		}
	}
	for _, id := range r.Missing {
		opts.IO.Infof("not in queue %s: %s", opts.Queue, id)
	}
	for _, id := range r.Stale {
		opts.IO.Infof("stale receipt, not acked: %s", id)
	}
	if err != nil {
		return queueErr(err)
	}
	infoTTY(opts.IO, opts.JSON, "acked %s", plural(int64(r.Acked), "message"))
	return nil
}

type retryOptions struct {
	IO     *iostreams.IOStreams
	JSON   bool
	Client func() (*delayq.Client, error)
	Queue  string
	Ref    string // an id or a receipt
	Delay  time.Duration
}

// NewCmdRetry returns `chatq queue retry`. runF, when set (tests), replaces
// the run function and gets the options after flags are parsed and
// validated.
func NewCmdRetry(f *cmdutil.Factory, runF func(context.Context, *retryOptions) error) *cobra.Command {
	opts := &retryOptions{IO: f.IO}
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
			opts.Queue, opts.Ref = args[0], args[1]
			opts.JSON, opts.Client = f.JSON(), queueClient(f, cmd)
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return retryRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Delay, "delay", 0, "due after this delay")
	return cmdutil.MarkWrite(cmd, "chatq queue peek QUEUE")
}

// validate checks --delay and the queue name; ChangeVisibility checks the
// id or receipt before any call.
func (o *retryOptions) validate() error {
	if err := delayq.CheckDuration("--delay", o.Delay, time.Millisecond); err != nil {
		return err
	}
	return delayq.CheckName(o.Queue)
}

type queueRetryJSON struct {
	ID        string `json:"id"`
	VisibleAt int64  `json:"visible_at"`
}

func retryRun(ctx context.Context, opts *retryOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	at, err := q.ChangeVisibility(ctx, opts.Queue, opts.Ref, opts.Delay)
	if err != nil {
		return queueErr(err)
	}
	if opts.JSON {
		// A receipt is ID.RC.FR (checked by ChangeVisibility).
		id, _, _ := strings.Cut(opts.Ref, ".")
		return opts.IO.WriteJSON(queueRetryJSON{ID: id, VisibleAt: at.UnixMilli()})
	}
	infoTTY(opts.IO, opts.JSON, "%s due at %s", opts.Ref, stamp(at))
	return nil
}
