package queue

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queuePushOptions struct {
	f     *cmdutil.Factory
	cmd   *cobra.Command
	queue string
	body  string
	at    string
	delay time.Duration
	lines bool
}

func newQueuePushCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queuePushOptions{f: f}
	cmd := &cobra.Command{
		Use:   "push QUEUE [--at TIME | --delay DUR] MESSAGE|-",
		Short: "Push a message, due now, after a delay or at a time; prints its id",
		Long: `Push a message (RSMQ sendMessage) and print its id. With - the message is
read from stdin (one trailing newline removed). It becomes due after the
queue's delay, after --delay, or --at TIME (RFC 3339, or Unix seconds);
both are measured on the Redis server's clock. A message longer than the
queue's maxsize (in UTF-16 code units, as RSMQ counts) is refused (exit 2)
before anything is written. The push is published on RSMQ's realtime
channel <ns>:rt:<queue>, which wakes waiting polls.

With --lines and -, each line of stdin is a message of its own: every line is
checked against maxsize before the first is pushed, they are pushed in order
(one round trip each), and their ids are printed one per line (a JSON array
with -o json). A terminal shows a progress bar for long inputs.`,
		Example: `  chatq queue push jobs 'resize image 42'
  chatq queue push jobs --delay 90s 'send reminder'
  chatq queue push jobs --at 2026-05-01T09:00:00Z 'open the gates'
  jq -c . task.json | chatq queue push jobs -
  chatq queue push jobs --lines - < tasks.txt`,
		Args: cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue, opts.body = cmd, args[0], args[1]
			return queuePushRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.at, "at", "", "due at this time: RFC 3339 or Unix seconds")
	cmd.Flags().DurationVar(&opts.delay, "delay", 0, "due after this delay (default: the queue's delay)")
	cmd.Flags().BoolVar(&opts.lines, "lines", false, "with -, push each line of stdin as a message")
	cmd.MarkFlagsMutuallyExclusive("at", "delay")
	return cmd
}

type queuePushJSON struct {
	ID        string `json:"id"`
	VisibleAt int64  `json:"visible_at"`
	Sent      int64  `json:"sent"`
}

func queuePushRun(ctx context.Context, opts *queuePushOptions) error {
	var po delayq.PushOptions
	if opts.at != "" {
		at, err := parseAt(opts.at)
		if err != nil {
			return err
		}
		po.At = at
	}
	if opts.cmd.Flags().Changed("delay") {
		if err := checkFlagDuration("delay", opts.delay, false); err != nil {
			return err
		}
		po.Delay, po.HasDelay = opts.delay, true
	}
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	if opts.lines {
		if opts.body != "-" {
			return cmdutil.UsageErrorf("--lines reads stdin: give - as the message")
		}
		return queuePushLines(ctx, opts, po)
	}
	body := opts.body
	if body == "-" {
		opts.f.IO.NoteStdin("the message")
		b, err := io.ReadAll(opts.f.IO.In)
		if err != nil {
			return fmt.Errorf("reading the message from stdin: %w", err)
		}
		body = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	if !utf8.ValidString(body) {
		return invalidUTF8(0)
	}
	p, err := q.Push(ctx, opts.queue, body, po)
	if err != nil {
		return queueErr(err)
	}
	warnNotNotified(opts, q.Channel(opts.queue), p)
	if opts.f.JSON() {
		return opts.f.WriteJSON(queuePushJSON{ID: p.ID, VisibleAt: p.VisibleAt.UnixMilli(), Sent: p.Sent.UnixMilli()})
	}
	fmt.Fprintln(opts.f.IO.Out, p.ID)
	if p.VisibleAt.After(p.Sent) {
		infoTTY(opts.f, "due at %s (in %s)", stamp(p.VisibleAt), roughly(p.VisibleAt.Sub(p.Sent)))
	}
	return nil
}

// queuePushLines pushes each line of stdin as a message, after checking
// every line against the queue's maxsize, so that a bad line writes nothing.
func queuePushLines(ctx context.Context, opts *queuePushOptions, po delayq.PushOptions) error {
	opts.f.IO.NoteStdin("messages, one per line,")
	lines, err := cmdutil.ReadLines(opts.f.IO.In)
	if err != nil {
		return fmt.Errorf("reading messages from stdin: %w", err)
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	for i, l := range lines {
		if !utf8.ValidString(l) {
			return invalidUTF8(i + 1)
		}
	}
	// The attributes only (one HMGET), not stats: O(1) at any queue size.
	st, err := q.Attributes(ctx, opts.queue)
	if err != nil {
		return queueErr(err)
	}
	if st.MaxSize >= 0 {
		for i, l := range lines {
			if n := delayq.Len16(l); n > st.MaxSize {
				return queueErr(fmt.Errorf("line %d: %w (%d > maxsize %d)", i+1, delayq.ErrMessageTooLong, n, st.MaxSize))
			}
		}
	}
	prog := opts.f.NewProgress("pushing", len(lines))
	defer prog.Done()
	ids := make([]queuePushJSON, 0, len(lines))
	for _, l := range lines {
		p, err := q.Push(ctx, opts.queue, l, po)
		if err != nil {
			return partialPush(ctx, opts, ids, len(lines), err)
		}
		if len(ids) == 0 {
			warnNotNotified(opts, q.Channel(opts.queue), p)
		}
		ids = append(ids, queuePushJSON{ID: p.ID, VisibleAt: p.VisibleAt.UnixMilli(), Sent: p.Sent.UnixMilli()})
		if !opts.f.JSON() {
			fmt.Fprintln(opts.f.IO.Out, p.ID)
		}
		prog.Add(1)
	}
	if opts.f.JSON() {
		return opts.f.WriteJSON(ids)
	}
	return nil
}

// partialPush reports a bulk push that failed part way: the ids stored are
// printed (they were, line by line, in text), and the hint says how many
// lines were stored and how to resume without duplicates.
func partialPush(ctx context.Context, opts *queuePushOptions, ids []queuePushJSON, total int, err error) error {
	if opts.f.JSON() {
		_ = opts.f.WriteJSON(ids)
	}
	n := len(ids)
	resume := fmt.Sprintf("`tail -n +%d FILE | chatq queue push %s --lines -`", n+1, opts.queue)
	if ctx.Err() != nil {
		// An interrupt prints no error: say what was stored here.
		opts.f.IO.Infof("stored %d of %d messages before the interrupt; resume with %s", n, total, resume)
		return err
	}
	hint := fmt.Sprintf("%d of %d messages were stored (their ids are printed); resume with %s", n, total, resume)
	if cmdutil.ReplyLost(err) {
		hint = fmt.Sprintf("%d of %d messages were stored, and line %d may have been too (its reply was lost): check with `chatq queue peek %s -n 1000`, then resume with %s, or from line %d if it was",
			n, total, n+1, opts.queue, resume, n+2)
	}
	return cmdutil.WithHint(queueErr(fmt.Errorf("after %d of %d messages: %w", n, total, err)), hint)
}

// invalidUTF8 refuses a body that is not UTF-8 (line 0: the one message):
// JSON output and Node consumers could not show it unchanged.
func invalidUTF8(line int) error {
	what := "the message is"
	if line > 0 {
		what = fmt.Sprintf("line %d is", line)
	}
	return cmdutil.WithHint(cmdutil.UsageErrorf("%s not valid UTF-8: nothing pushed", what),
		"encode binary data as text first, e.g. `base64 -w0 FILE | chatq queue push Q -`")
}

// warnNotNotified says once that a push was stored but not announced on
// the realtime channel (the user may not PUBLISH there).
func warnNotNotified(opts *queuePushOptions, channel string, p *delayq.Pushed) {
	if !p.Notified {
		opts.f.IO.Infof("warning: stored, but this user may not publish on channel %s: consumers waiting with --wait wake at their next deadline instead of at once", channel)
		opts.f.IO.Infof("hint: allow the channel, e.g. `ACL SETUSER NAME &*` (Redis 7 gives new users no channels)")
	}
}
