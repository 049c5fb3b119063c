package queue

import (
	"context"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queuePollOptions struct {
	f     *cmdutil.Factory
	cmd   *cobra.Command
	queue string
	vt    time.Duration
	wait  time.Duration
	n     int
	pop   bool
	// giveUpAfter ends a waiting poll's reconnecting after the server was
	// away this long.
	giveUpAfter time.Duration
}

func newQueuePollCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queuePollOptions{f: f}
	cmd := &cobra.Command{
		Use:   "poll QUEUE [--vt DUR] [--wait DUR] [-n N] [--pop]",
		Short: "Receive due messages: hidden for the visibility timeout, or popped",
		Long: `Receive up to N due messages in one atomic step (RSMQ receiveMessage, or
popMessage with --pop). Each received message is hidden for the visibility
timeout (--vt, default the queue's) and comes back with its receive count
(rc) incremented unless acked with 'chatq queue ack' (at-least-once).
--pop deletes messages as they are received (at-most-once).

With --wait and nothing due, poll sleeps until the next message is due or
a push arrives on RSMQ's realtime channel, up to the given time; it does
not poll on a tick. Nothing received is not an error: exit 0 (3 with -e),
and [] with -o json. A receive that would exceed a dead-letter policy's
--max-receives moves the message instead, and says so on stderr.

A waiting poll rides out a restart or failover: it says so once on stderr,
reconnects with capped backoff and waits on until --wait's deadline
(--give-up-after ends that sooner). A receive whose reply was lost is
retried without --pop (its messages come back after their visibility
timeout); with --pop it exits 4, since popped messages may be gone.

Text output: one line per message, ID, RC and MESSAGE (tab-separated when
piped; tabs and newlines in the message escaped). JSON: an array of
{"id","message","rc","fr","sent"} as RSMQ returns them (fr and sent in Unix
milliseconds), plus "receipt": ID.RC.FR, naming this delivery. Ack or retry
by receipt to act only while no later receive has taken the message (see
'chatq queue ack').`,
		Example: `  chatq queue poll jobs
  chatq queue poll jobs -n 10 --vt 5m -o json
  chatq queue poll jobs -o json | jq -r '.[].receipt' | xargs chatq queue ack jobs
  chatq queue poll jobs --wait 30s --pop`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue = cmd, args[0]
			return queuePollRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&opts.vt, "vt", 0, "visibility timeout (default: the queue's)")
	fl.DurationVar(&opts.wait, "wait", 0, "when nothing is due, wait up to this long")
	fl.DurationVar(&opts.giveUpAfter, "give-up-after", 0, "with --wait, exit 1 when the server has been unreachable this long (0: keep reconnecting until --wait ends)")
	fl.IntVarP(&opts.n, "count", "n", 1, "receive up to N messages")
	fl.BoolVar(&opts.pop, "pop", false, "delete messages as they are received (at-most-once)")
	cmd.MarkFlagsMutuallyExclusive("vt", "pop")
	return cmd
}

// messageJSON is RSMQ's received message: fr and sent in Unix ms; plus,
// for a received message, the receipt naming its delivery (peek has none).
// MessageBase64 carries a body that is not valid UTF-8 (written by another
// client: chatq refuses to push one) byte for byte; message then has
// U+FFFD in place of the invalid bytes.
type messageJSON struct {
	ID            string `json:"id"`
	Message       string `json:"message"`
	MessageBase64 string `json:"message_base64,omitempty"`
	RC            int64  `json:"rc"`
	FR            any    `json:"fr"`
	Sent          int64  `json:"sent"`
	Receipt       string `json:"receipt,omitempty"`
}

func toMessageJSON(m delayq.Message) messageJSON {
	msg, b64 := bodyJSON(m.Body)
	return messageJSON{ID: m.ID, Message: msg, MessageBase64: b64, RC: m.RC, FR: ms(m.FR), Sent: m.Sent.UnixMilli(), Receipt: m.Receipt}
}

func queuePollRun(ctx context.Context, opts *queuePollOptions) error {
	ro := delayq.ReceiveOptions{N: opts.n, Pop: opts.pop, Wait: opts.wait}
	if opts.n < 1 {
		return cmdutil.UsageErrorf("invalid -n %d: must be at least 1", opts.n)
	}
	if opts.cmd.Flags().Changed("vt") {
		if err := checkFlagDuration("vt", opts.vt, false); err != nil {
			return err
		}
		ro.VT = orZero(opts.vt)
	}
	if opts.wait < 0 {
		return cmdutil.UsageErrorf("invalid --wait %s: must not be negative", opts.wait)
	}
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	// What the receive that returned the messages said of the dead-letter
	// policy (an earlier attempt of a persistent poll moved nothing that
	// was returned).
	moved, missing := 0, false
	ro.Moved = func(n int, _ string) { moved += n }
	ro.DeadLetterMissing = func(string) { missing = true }
	// A waiting poll rides out a restart or failover until --wait's
	// deadline. A receive whose reply was lost is retried only without
	// --pop: its messages are hidden for the visibility timeout and come
	// back (at-least-once); popped ones would be gone, so that exits 4.
	var r []delayq.Message
	if opts.wait <= 0 {
		r, err = q.Receive(ctx, opts.queue, ro)
	} else {
		deadline := time.Now().Add(opts.wait)
		p := opts.f.Persistent(opts.giveUpAfter)
		p.Retryable = func(err error) bool { return !opts.pop || !conn.ReplyLost(err) }
		err = p.Run(ctx, func(ctx context.Context) error {
			ro.Wait = time.Until(deadline)
			if ro.Wait <= 0 {
				r = nil
				return nil
			}
			var err error
			moved, missing = 0, false
			r, err = q.Receive(ctx, opts.queue, ro)
			if err == nil {
				p.Healthy()
			}
			return err
		})
		if err == nil && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err != nil {
		return queueErr(err)
	}
	if missing {
		opts.f.IO.Infof("warning: the dead-letter queue of %s does not exist: a message received too often was delivered again instead of moved (see `chatq queue stats %s`)", opts.queue, opts.queue)
	}
	if moved > 0 {
		opts.f.IO.Infof("moved %s received too often to the dead-letter queue", plural(int64(moved), "message"))
	}
	if opts.f.JSON() {
		out := make([]messageJSON, 0, len(r))
		for _, m := range r {
			out = append(out, toMessageJSON(m))
		}
		if err := opts.f.IO.WriteJSON(out); err != nil {
			return err
		}
	} else {
		t := opts.f.IO.NewTable("ID", "RC", "MESSAGE").WhenEmpty("no messages due")
		for _, m := range r {
			t.Row(m.ID, m.RC, m.Body)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(r) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}
