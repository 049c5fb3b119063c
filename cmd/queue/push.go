package queue

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type pushOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error)
	Queue  string
	Body   string         // the message, or - for stdin
	At     string         // --at
	Delay  *time.Duration // --delay, if given
	Lines  bool
	JSONL  bool
	// due is when a message becomes due, from At or Delay (validate).
	due delayq.PushOptions
	// Timeout (--timeout) bounds the repeats of a push whose reply was
	// lost (conn.Repeat); the push carries a token, so a repeat is safe.
	Timeout time.Duration
}

// NewCmdPush returns `chatq queue push` (runF: see cmdutil.RunWith).
func NewCmdPush(f *cmdutil.Factory, runF func(context.Context, *pushOptions) error) *cobra.Command {
	opts := &pushOptions{}
	var delay time.Duration
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
in batches (up to 100 messages or 1 MiB per script call, each call atomic),
and their ids are printed one per line (a JSON array with -o json). If the
push stops part way (the queue deleted, the server away past --timeout,
Ctrl-C, which waits for the batch in flight), chatq says how many messages
were stored and how to resume without duplicates. Each batch carries a
token: one whose reply was lost is sent again, and the server answers the
repeat with the batch's ids and stores nothing more. A terminal shows a
progress bar.

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
  chatq queue peek old -n 100 --jq '.[]' | chatq queue push jobs --jsonl -`,
		Args: cmdutil.ExactArgs(2),
		RunE: cmdutil.RunWith(f, opts, runF, pushRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue, opts.Body = args[0], args[1]
			opts.Delay = given(cmd.Flags(), "delay", delay)
			opts.Client = queueClient(f, cmd)
			if cfg := f.Config(); cfg != nil {
				opts.Timeout = cfg.Timeout
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().StringVar(&opts.At, "at", "", "due at this time: RFC 3339 or Unix seconds")
	cmd.Flags().DurationVar(&delay, "delay", 0, "due after this delay (default: the queue's delay)")
	cmd.Flags().BoolVar(&opts.Lines, "lines", false, "with -, push each line of stdin as a message")
	cmd.Flags().BoolVar(&opts.JSONL, "jsonl", false, `with -, push each line of stdin as a JSON string or {"message":…,"delay"|"at":…}`)
	cmd.MarkFlagsMutuallyExclusive("at", "delay")
	cmd.MarkFlagsMutuallyExclusive("lines", "jsonl")
	return cmdutil.MarkWrite(cmd, "chatq queue peek QUEUE")
}

// validate checks the flags and the queue name, and sets the due time.
// Bodies are read and checked by the run: stdin may block.
func (o *pushOptions) validate() error {
	if o.At != "" {
		at, err := parseAt(o.At)
		if err != nil {
			return err
		}
		o.due.At = at
	}
	if o.Delay != nil {
		if err := delayq.CheckDuration("--delay", *o.Delay, time.Millisecond); err != nil {
			return err
		}
		o.due.Delay = orZero(*o.Delay)
	}
	if err := delayq.CheckName(o.Queue); err != nil {
		return err
	}
	switch {
	case o.Lines && o.Body != "-":
		return cmdutil.UsageErrorf("--lines reads stdin: give - as the message")
	case o.JSONL && o.Body != "-":
		return cmdutil.UsageErrorf("--jsonl reads stdin: give - as the message")
	}
	return nil
}

type queuePushJSON struct {
	ID        string `json:"id"`
	VisibleAt int64  `json:"visible_at"`
	Sent      int64  `json:"sent"`
}

func pushRun(ctx context.Context, opts *pushOptions) error {
	if opts.Lines || opts.JSONL {
		return pushBulk(ctx, opts)
	}
	body := opts.Body
	if body == "-" {
		opts.IO.NoteStdin("the message")
		b, err := io.ReadAll(iostreams.Interruptible(ctx, opts.IO.In))
		if err != nil {
			return stdinErr(ctx, opts.IO, "the message", err)
		}
		body = iostreams.TrimLineEnding(string(b))
	}
	// Push refuses it too, but says neither "nothing pushed" nor how to
	// send binary data.
	if !utf8.ValidString(body) {
		return invalidUTF8(0)
	}
	q, err := opts.Client()
	if err != nil {
		return err
	}
	// One token for every try: a repeat after a lost reply returns the
	// first push's answer and stores nothing more.
	due := opts.due
	due.Token = rand.Text()
	var p *delayq.Pushed
	var tries conn.Tries
	err = conn.Repeat(ctx, opts.Timeout, func(ctx context.Context) (err error) {
		due.FirstTry = tries.First()
		p, err = q.Push(ctx, opts.Queue, body, due)
		return err
	})
	if err != nil {
		return queueErr(err)
	}
	warnNotNotified(opts.IO, p)
	if opts.JSON {
		return opts.IO.WriteJSON(queuePushJSON{ID: p.ID, VisibleAt: p.VisibleAt.UnixMilli(), Sent: p.Sent.UnixMilli()})
	}
	fmt.Fprintln(opts.IO.Out, p.ID)
	if p.VisibleAt.After(p.Sent) {
		infoTTY(opts.IO, opts.JSON, "due at %s (in %s)", stamp(p.VisibleAt), roughly(p.VisibleAt.Sub(p.Sent)))
	}
	return nil
}

// pushBulk pushes each line of stdin (--lines), or each JSON line
// (--jsonl), as a message: every line is read and checked before the first
// is pushed, so that a bad line writes nothing.
func pushBulk(ctx context.Context, opts *pushOptions) error {
	read, flag := readLines, "--lines"
	if opts.JSONL {
		read, flag = readJSONL, "--jsonl"
	}
	in, err := read(ctx, opts)
	if err != nil {
		return err
	}
	q, err := opts.Client()
	if err != nil {
		return err
	}
	// One token for the push: each batch records its answer under it, so
	// a repeat after a lost reply returns the batch's ids and stores
	// nothing more. Each batch's first try looks nothing up (the token is
	// new); its repeats, by Do, do.
	if len(in.due) > 0 {
		in.due[0].Token, in.due[0].FirstTry = rand.Text(), true
	}
	w := &pushWriter{opts: opts, prog: opts.IO.NewProgress("pushing", len(in.bodies))}
	ps, err := q.PushMany(ctx, opts.Queue, in.bodies, delayq.PushManyOptions{
		Due: in.due,
		Do: func(ctx context.Context, call func(context.Context) error) error {
			return conn.Repeat(ctx, opts.Timeout, call)
		},
		Progress: w.batch,
	})
	w.prog.Done()
	if err != nil {
		return in.pushErr(ctx, opts, w, ps, flag, err)
	}
	return w.end(ps)
}

// bulkInput is what a bulk push read: the bodies, their due times (one
// for all, or one each) and the input line of each (nil: body i is line
// i+1).
type bulkInput struct {
	bodies []string
	due    []delayq.PushOptions
	lines  []int
}

// line is the input line of message k (from 1), or the line after the
// last for k past the end.
func (in *bulkInput) line(k int) int {
	switch {
	case in.lines == nil:
		return k
	case k <= len(in.lines):
		return in.lines[k-1]
	}
	return in.lines[len(in.lines)-1] + 1
}

// readLines reads --lines' messages, one per line of stdin.
func readLines(ctx context.Context, opts *pushOptions) (*bulkInput, error) {
	opts.IO.NoteStdin("messages, one per line,")
	lines, err := iostreams.ReadLines(iostreams.Interruptible(ctx, opts.IO.In))
	if err != nil {
		return nil, stdinErr(ctx, opts.IO, "messages", err)
	}
	for i, l := range lines {
		if !utf8.ValidString(l) {
			return nil, invalidUTF8(i + 1)
		}
	}
	return &bulkInput{bodies: lines, due: []delayq.PushOptions{opts.due}}, nil
}

// pushWriter prints the ids of a bulk push: in text as each batch is
// stored, in JSON as one array once the push ends (or stops).
type pushWriter struct {
	opts    *pushOptions
	prog    *iostreams.Progress
	batches int
}

// batch prints the ids of a batch stored.
func (w *pushWriter) batch(ps []delayq.Pushed) {
	if w.batches++; w.batches == 1 {
		warnNotNotified(w.opts.IO, &ps[0])
	}
	if !w.opts.JSON {
		for _, p := range ps {
			fmt.Fprintln(w.opts.IO.Out, p.ID)
		}
	}
	w.prog.Add(len(ps))
}

// end prints the JSON array of every message stored.
func (w *pushWriter) end(ps []delayq.Pushed) error {
	if !w.opts.JSON {
		return nil
	}
	ids := make([]queuePushJSON, len(ps))
	for i, p := range ps {
		ids[i] = queuePushJSON{ID: p.ID, VisibleAt: p.VisibleAt.UnixMilli(), Sent: p.Sent.UnixMilli()}
	}
	return w.opts.IO.WriteJSON(ids)
}

// pushErr reports a bulk push that stopped: a message refused before
// anything was stored names its line; a push that stopped part way prints
// the ids stored (in text they were, batch by batch) and says how many
// messages were stored and how to resume without duplicates. A batch is
// one atomic call, so a lost reply leaves all of its lines stored or none.
func (in *bulkInput) pushErr(ctx context.Context, opts *pushOptions, w *pushWriter, ps []delayq.Pushed, flag string, err error) error {
	var pe *delayq.PushError
	if !errors.As(err, &pe) {
		return queueErr(err)
	}
	interrupted := ctx.Err() != nil && !conn.ReplyLost(pe.Err)
	if pe.Stored == 0 && pe.Uncertain == 0 && !interrupted {
		if pe.Position == 0 {
			return queueErr(pe.Err)
		}
		if flag == "--jsonl" {
			return queueErr(fmt.Errorf("line %d: %w: nothing pushed", in.line(pe.Position), pe.Err))
		}
		return queueErr(fmt.Errorf("line %d: %w", in.line(pe.Position), pe.Err))
	}
	_ = w.end(ps)
	n, total, end := pe.Stored, pe.Total, pe.Stored+pe.Uncertain
	resume := func(k int) string {
		return fmt.Sprintf("`tail -n +%d FILE | chatq queue push %s %s -`", in.line(k), opts.Queue, flag)
	}
	if interrupted {
		// An interrupt prints no error: say what was stored here.
		opts.IO.Infof("stored %d of %d messages before the interrupt; resume with %s", n, total, resume(n+1))
		return pe.Err
	}
	hint := fmt.Sprintf("%d of %d messages were stored (their ids are printed); resume with %s", n, total, resume(n+1))
	if conn.ReplyLost(pe.Err) {
		lost := fmt.Sprintf("line %d may have been too (its reply was lost)", in.line(n+1))
		if end-n > 1 {
			lost = fmt.Sprintf("lines %d-%d may have been too, all of them or none (one atomic call, whose reply was lost)", in.line(n+1), in.line(end))
		}
		hint = fmt.Sprintf("%d of %d messages were stored, and %s: look for the message of line %d with `chatq queue peek %s` or `chatq queue export %s`, then resume with %s if it is there, else with %s",
			n, total, lost, in.line(n+1), opts.Queue, opts.Queue, resume(end+1), resume(n+1))
	}
	return cmdutil.WithHint(queueErr(fmt.Errorf("after %d of %d messages: %w", n, total, pe.Err)), hint)
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
func warnNotNotified(ios *iostreams.IOStreams, p *delayq.Pushed) {
	if !p.Notified {
		ios.Infof("warning: stored, but this user may not publish on channel %s: consumers waiting with --wait wake at their next deadline instead of at once", p.Channel)
		ios.Infof("hint: allow the channel, e.g. `ACL SETUSER NAME &*` (Redis 7 gives new users no channels)")
	}
}

// parseAt parses --at: RFC 3339 (fractions allowed) or Unix seconds
// (decimals allowed).
func parseAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) <= 9 && isDigits(whole) && (frac == "" || isDigits(frac)) && len(whole) <= 11 {
		sec, _ := strconv.ParseInt(whole, 10, 64)
		nsec, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		return time.Unix(sec, nsec), nil
	}
	return time.Time{}, cmdutil.WithHint(cmdutil.UsageErrorf("invalid --at %q: want RFC 3339 or Unix seconds", s),
		"e.g. --at 2026-05-01T09:00:00Z, --at 2026-05-01T11:00:00+02:00 or --at 1777626000")
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// stdinErr is the error of a read of what from stdin. Interrupted (Ctrl-C,
// SIGTERM) while it waited for input, it says that nothing was pushed, as
// these commands read all of stdin before the first write, and how to
// resume; the command then exits 130.
func stdinErr(ctx context.Context, ios *iostreams.IOStreams, what string, err error) error {
	if ctx.Err() != nil {
		ios.Infof("nothing was pushed: interrupted while reading %s from stdin (all of it is read before the first write); run the command again", what)
		return ctx.Err()
	}
	return fmt.Errorf("reading %s from stdin: %w", what, err)
}
