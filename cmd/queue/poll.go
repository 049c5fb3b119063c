package queue

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type pollOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error)
	// Persistent is the retry loop of a waiting poll.
	Persistent func(giveUpAfter time.Duration) *conn.Persistent
	Queue      string
	VT         *time.Duration // --vt, if given
	Wait       time.Duration
	N          int
	Pop        bool
	// GiveUpAfter ends a waiting poll's reconnecting after the server was
	// away this long.
	GiveUpAfter time.Duration
	// Timeout (--timeout) bounds the repeats of a pop whose reply was lost
	// (conn.Repeat); the pop carries a token, so a repeat is safe.
	Timeout time.Duration
}

// NewCmdPoll returns `chatq queue poll` (runF: see cmdutil.RunWith).
func NewCmdPoll(f *cmdutil.Factory, runF func(context.Context, *pollOptions) error) *cobra.Command {
	opts := &pollOptions{}
	var vt time.Duration
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
retried: without --pop its messages come back after their visibility
timeout; a --pop carries a token, so the server answers its repeat with
the messages it popped (kept 10 minutes) and pops no others. A pop whose
reply was lost and whose repeats all failed within --timeout exits 4.

Text output: one line per message, ID, RC and MESSAGE (tab-separated when
piped; tabs and newlines in the message escaped); it has no receipt: --jq
'.[].receipt' prints them, one per line. JSON: an array of
{"id","message","rc","fr","sent"} as RSMQ returns them (fr and sent in Unix
milliseconds), plus "receipt": ID.RC.FR, naming this delivery. Ack or retry
by receipt to act only while no later receive has taken the message (see
'chatq queue ack').`,
		Example: `  chatq queue poll jobs
  chatq queue poll jobs -n 10 --vt 5m -o json
  chatq queue poll jobs -n 10 --jq '.[].receipt' | xargs chatq queue ack jobs
  chatq queue poll jobs --wait 30s --pop`,
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, pollRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue, opts.VT = args[0], given(cmd.Flags(), "vt", vt)
			opts.Client, opts.Persistent = queueClient(f, cmd), f.Persistent
			if cfg := f.Config(); cfg != nil {
				opts.Timeout = cfg.Timeout
			}
			return nil, opts.validate()
		}),
	}
	fl := cmd.Flags()
	fl.DurationVar(&vt, "vt", 0, "visibility timeout (default: the queue's)")
	fl.DurationVar(&opts.Wait, "wait", 0, "when nothing is due, wait up to this long")
	fl.DurationVar(&opts.GiveUpAfter, "give-up-after", 0, "with --wait, exit 1 when the server has been unreachable this long (0: keep reconnecting until --wait ends)")
	fl.IntVarP(&opts.N, "count", "n", 1, "receive up to N messages")
	fl.BoolVar(&opts.Pop, "pop", false, "delete messages as they are received (at-most-once)")
	cmd.MarkFlagsMutuallyExclusive("vt", "pop")
	return cmdutil.MarkWrite(cmd, "chatq queue stats QUEUE")
}

func (o *pollOptions) validate() error {
	if o.N < 1 {
		return cmdutil.UsageErrorf("invalid -n %d: must be at least 1", o.N)
	}
	if o.VT != nil {
		if err := delayq.CheckDuration("--vt", *o.VT, time.Millisecond); err != nil {
			return err
		}
	}
	if o.Wait < 0 {
		return cmdutil.UsageErrorf("invalid --wait %s: must not be negative", o.Wait)
	}
	return checkName(o.Queue)
}

// messageJSON is RSMQ's received message: fr and sent in Unix ms; plus,
// for a received message, the receipt naming its delivery (peek and get:
// its latest delivery's).
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

func pollRun(ctx context.Context, opts *pollOptions) error {
	ro := delayq.ReceiveOptions{N: opts.N, Pop: opts.Pop, Wait: opts.Wait}
	if opts.VT != nil {
		ro.VT = orZero(*opts.VT)
	}
	q, err := opts.Client()
	if err != nil {
		return err
	}
	// What the receive that returned the messages said of the dead-letter
	// policy (an earlier attempt of a persistent poll moved nothing that
	// was returned).
	moved, missing := 0, false
	ro.Moved = func(n int, _ string) { moved += n }
	ro.DeadLetterMissing = func(string) { missing = true }
	// A pop carries a token, one for every try: a repeat after a lost
	// reply returns the messages the first popped and pops no others.
	if opts.Pop {
		ro.Token = rand.Text()
	}
	// A waiting poll rides out a restart or failover until --wait's
	// deadline, and retries a receive whose reply was lost: without --pop
	// its messages are hidden for the visibility timeout and come back
	// (at-least-once); a pop is repeated with its token.
	var r []delayq.Message
	var tries conn.Tries // of the pop's token
	switch {
	case opts.Wait <= 0 && opts.Pop:
		err = conn.Repeat(ctx, opts.Timeout, func(ctx context.Context) (err error) {
			moved, missing = 0, false
			ro.FirstTry = tries.First()
			r, err = q.Receive(ctx, opts.Queue, ro)
			return err
		})
	case opts.Wait <= 0:
		r, err = q.Receive(ctx, opts.Queue, ro)
	default:
		deadline := time.Now().Add(opts.Wait)
		p := opts.Persistent(opts.GiveUpAfter)
		lost := false // a pop whose reply was lost: it may have popped
		err = p.Run(ctx, func(ctx context.Context) error {
			ro.Wait = time.Until(deadline)
			if ro.Wait <= 0 {
				if !lost {
					r = nil
					return nil
				}
				// --wait is over, but the pop before may have
				// popped: ask once more, without waiting, with
				// its token, which answers with what it popped.
				ro.Wait = 0
			}
			var err error
			moved, missing = 0, false
			ro.FirstTry = opts.Pop && tries.First()
			r, err = q.Receive(ctx, opts.Queue, ro)
			if err == nil {
				p.Healthy()
			}
			lost = opts.Pop && (lost || conn.ReplyLost(err)) && err != nil
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
		opts.IO.Infof("warning: the dead-letter queue of %s does not exist: a message received too often was delivered again instead of moved (see `chatq queue stats %s`)", opts.Queue, opts.Queue)
	}
	if moved > 0 {
		opts.IO.Infof("moved %s received too often to the dead-letter queue", plural(int64(moved), "message"))
	}
	if opts.JSON {
		out := make([]messageJSON, 0, len(r))
		for _, m := range r {
			out = append(out, toMessageJSON(m))
		}
		if err := opts.IO.WriteJSON(out); err != nil {
			return err
		}
	} else {
		t := opts.IO.NewTable("ID", "RC", "MESSAGE").WhenEmpty("no messages due")
		for _, m := range r {
			t.Row(m.ID, m.RC, m.Body)
		}
		if err := t.Flush(); err != nil {
			return err
		}
		if len(r) > 0 && !opts.Pop {
			infoTTY(opts.IO, opts.JSON, "ack by id: chatq queue ack %s ID…; by receipt (only this delivery): --jq '.[].receipt' prints them", opts.Queue)
		}
	}
	if len(r) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}
