package queue

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/iostreams"
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
	jsonl bool
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
with -o json). A terminal shows a progress bar for long inputs.

With --jsonl and -, each line of stdin is one JSON value, so a body may hold
newlines: a JSON string (the body), or an object with "message" (the body)
and optionally "delay" (a duration as --delay takes it, "90s", or a number
of seconds, 1.5) or "at" (as --at takes it: RFC 3339, or Unix seconds as a
string or a number); a line with neither gets --delay/--at or the queue's
delay. Other fields are ignored, so the objects peek -o json and export
print push as they are (as new messages: new ids, receive count 0, due by
delay/at, not by their old due time). Blank lines are skipped. Every line is
checked first (JSON, UTF-8, maxsize, delay and at); a bad one is reported
with its number and nothing is pushed (exit 2), as with --lines.`,
		Example: `  chatq queue push jobs 'resize image 42'
  chatq queue push jobs --delay 90s 'send reminder'
  chatq queue push jobs --at 2026-05-01T09:00:00Z 'open the gates'
  jq -c . task.json | chatq queue push jobs -
  chatq queue push jobs --lines - < tasks.txt
  printf '%s\n' '"two\nlines"' '{"message":"later","delay":"90s"}' | chatq queue push jobs --jsonl -
  chatq queue peek old -n 100 -o json | jq -c '.[]' | chatq queue push jobs --jsonl -`,
		Args: cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue, opts.body = cmd, args[0], args[1]
			return queuePushRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.at, "at", "", "due at this time: RFC 3339 or Unix seconds")
	cmd.Flags().DurationVar(&opts.delay, "delay", 0, "due after this delay (default: the queue's delay)")
	cmd.Flags().BoolVar(&opts.lines, "lines", false, "with -, push each line of stdin as a message")
	cmd.Flags().BoolVar(&opts.jsonl, "jsonl", false, `with -, push each line of stdin as a JSON string or {"message":…,"delay"|"at":…}`)
	cmd.MarkFlagsMutuallyExclusive("at", "delay")
	cmd.MarkFlagsMutuallyExclusive("lines", "jsonl")
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
		po.Delay = orZero(opts.delay)
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
	if opts.jsonl {
		if opts.body != "-" {
			return cmdutil.UsageErrorf("--jsonl reads stdin: give - as the message")
		}
		return queuePushJSONL(ctx, opts, po)
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
	warnNotNotified(opts, p)
	if opts.f.JSON() {
		return opts.f.IO.WriteJSON(queuePushJSON{ID: p.ID, VisibleAt: p.VisibleAt.UnixMilli(), Sent: p.Sent.UnixMilli()})
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
	lines, err := iostreams.ReadLines(opts.f.IO.In)
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
	// One read-only script, O(log n) at any queue size.
	st, err := q.Stats(ctx, opts.queue)
	if err != nil {
		return queueErr(err)
	}
	if st.MaxSize >= 0 {
		for i, l := range lines {
			if n := len16(l); n > st.MaxSize {
				return queueErr(fmt.Errorf("line %d: %w (%d > maxsize %d)", i+1, delayq.ErrMessageTooLong, n, st.MaxSize))
			}
		}
	}
	items := make([]pushItem, len(lines))
	for i, l := range lines {
		items[i] = pushItem{line: i + 1, body: l, po: po}
	}
	return pushItems(ctx, opts, q, items, "--lines")
}

// pushItem is one message of a bulk push: its input line, body and due time.
type pushItem struct {
	line int
	body string
	po   delayq.PushOptions
}

// pushItems pushes checked items in order, one round trip each, printing
// each id as it is stored (a JSON array at the end with -o json).
func pushItems(ctx context.Context, opts *queuePushOptions, q *delayq.Client, items []pushItem, flag string) error {
	prog := opts.f.IO.NewProgress("pushing", len(items))
	defer prog.Done()
	ids := make([]queuePushJSON, 0, len(items))
	for _, it := range items {
		p, err := q.Push(ctx, opts.queue, it.body, it.po)
		if err != nil {
			return partialPush(ctx, opts, ids, items, flag, err)
		}
		if len(ids) == 0 {
			warnNotNotified(opts, p)
		}
		ids = append(ids, queuePushJSON{ID: p.ID, VisibleAt: p.VisibleAt.UnixMilli(), Sent: p.Sent.UnixMilli()})
		if !opts.f.JSON() {
			fmt.Fprintln(opts.f.IO.Out, p.ID)
		}
		prog.Add(1)
	}
	if opts.f.JSON() {
		return opts.f.IO.WriteJSON(ids)
	}
	return nil
}

// partialPush reports a bulk push that failed part way: the ids stored are
// printed (they were, line by line, in text), and the hint says how many
// lines were stored and how to resume without duplicates.
func partialPush(ctx context.Context, opts *queuePushOptions, ids []queuePushJSON, items []pushItem, flag string, err error) error {
	if opts.f.JSON() {
		_ = opts.f.IO.WriteJSON(ids)
	}
	n, total := len(ids), len(items)
	// The input line of message k (1-based), for the resume command.
	lineOf := func(k int) int {
		if k <= len(items) {
			return items[k-1].line
		}
		return items[len(items)-1].line + 1
	}
	resume := fmt.Sprintf("`tail -n +%d FILE | chatq queue push %s %s -`", lineOf(n+1), opts.queue, flag)
	if ctx.Err() != nil {
		// An interrupt prints no error: say what was stored here.
		opts.f.IO.Infof("stored %d of %d messages before the interrupt; resume with %s", n, total, resume)
		return err
	}
	hint := fmt.Sprintf("%d of %d messages were stored (their ids are printed); resume with %s", n, total, resume)
	if conn.ReplyLost(err) {
		hint = fmt.Sprintf("%d of %d messages were stored, and line %d may have been too (its reply was lost): check with `chatq queue peek %s -n 1000`, then resume with %s, or from line %d if it was",
			n, total, lineOf(n+1), opts.queue, resume, lineOf(n+2))
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
func warnNotNotified(opts *queuePushOptions, p *delayq.Pushed) {
	if !p.Notified {
		opts.f.IO.Infof("warning: stored, but this user may not publish on channel %s: consumers waiting with --wait wake at their next deadline instead of at once", p.Channel)
		opts.f.IO.Infof("hint: allow the channel, e.g. `ACL SETUSER NAME &*` (Redis 7 gives new users no channels)")
	}
}
