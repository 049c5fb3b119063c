package queue

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type importOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error)
	Queue  string
	File   string   // -f; "" or - is stdin
	Rest   []string // the arguments after QUEUE: only - (stdin) is allowed
}

// NewCmdImport returns `chatq queue import` (runF: see cmdutil.RunWith).
func NewCmdImport(f *cmdutil.Factory, runF func(context.Context, *importOptions) error) *cobra.Command {
	opts := &importOptions{}
	cmd := &cobra.Command{
		Use:   "import QUEUE [-f FILE | -]",
		Short: "Read an export back into a queue, keeping ids, due times and receive counts",
		Long: `Read what chatq queue export wrote (JSON Lines, from FILE with -f, else from
stdin) into QUEUE. Each message keeps its id, body, due time, receive
count, first receive and, in a dead-letter queue, the record of where it
came from (dead_lettered), so a restored message is due when it would have
been, a received one stays in flight until its visibility timeout ends,
and a dead letter still redrives to its queue; the queue's totalsent grows
by the messages imported (totalrecv stays).

A missing QUEUE is created from the export's first line (vt, delay,
maxsize, and the dead-letter policy when that queue exists). An existing
QUEUE keeps its own attributes; where they differ from the export's,
chatq says so on stderr.

Messages go in batches of at most 100 per server call, each batch checked
whole (JSON, id, body within maxsize, counts) before it is written, and
written atomically. An id that already holds the same body is skipped as
already present, so running an interrupted import again is safe (before
consumers ack what it imported: an acked message is gone, and imported
again); an id
that holds another body is a conflict: not written, reported, and the
import exits 1 at the end. A malformed line stops the import (exit 1)
with its number and how many messages were imported before it. A lost
reply exits 4: run the same command again.

Lines need only id, message (or message_base64) and due (or visible_at,
as peek -o json prints it); rc, fr and dead_lettered are optional, other
fields are ignored, so chatq queue peek --jq '.[]' imports too.

On a terminal it says on stderr what it imported, as export does; piped it
prints nothing, and -o json prints {"imported","already_present",…}.`,
		Example: `  chatq queue export jobs -f jobs.jsonl
  chatq queue import jobs-restored -f jobs.jsonl
  chatq --url redis://other:6379 queue import jobs - < jobs.jsonl
  chatq queue import jobs -f jobs.jsonl -o json   # {"imported":…,"already_present":…,"conflicts":…}`,
		Args: cmdutil.RangeArgs(1, 2),
		RunE: cmdutil.RunWith(f, opts, runF, importRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue, opts.Rest = args[0], args[1:]
			opts.Client = queueClient(f, cmd)
			return nil, opts.validate()
		}),
	}
	cmd.Flags().StringVarP(&opts.File, "file", "f", "", "read FILE (- or none: stdin)")
	return cmdutil.MarkWrite(cmd, "chatq queue stats QUEUE")
}

func (o *importOptions) validate() error {
	if len(o.Rest) > 0 {
		if o.Rest[0] != "-" || o.File != "" {
			return cmdutil.UsageErrorf("give the input as -f FILE or -, not %q", o.Rest[0])
		}
		o.File = "-"
	}
	return delayq.CheckName(o.Queue)
}

// importLine is any line of an export, or a message as peek -o json
// prints it; fields import does not use (state, sent) are ignored.
type importLine struct {
	Format        *string          `json:"format"`
	Version       int              `json:"version"`
	Queue         *exportQueue     `json:"queue"`
	End           *json.RawMessage `json:"end"`
	ID            *string          `json:"id"`
	Message       *string          `json:"message"`
	MessageBase64 *string          `json:"message_base64"`
	Due           *json.Number     `json:"due"`
	VisibleAt     *json.Number     `json:"visible_at"`
	RC            *json.Number     `json:"rc"`
	FR            *json.Number     `json:"fr"`
	DeadLettered  *struct {
		From string       `json:"from"`
		RC   *json.Number `json:"rc"`
		At   *json.Number `json:"at"`
	} `json:"dead_lettered"`
}

type queueImportJSON struct {
	Queue          string   `json:"queue"`
	Created        bool     `json:"created"`
	Imported       int      `json:"imported"`
	AlreadyPresent int      `json:"already_present"`
	Conflicts      int      `json:"conflicts"`
	ConflictIDs    []string `json:"conflict_ids"`
	// Line is where a malformed line stopped the import (0: it did not).
	Line int `json:"line,omitempty"`
}

func importRun(ctx context.Context, opts *importOptions) error {
	in := opts.IO.In
	if opts.File != "" && opts.File != "-" {
		fh, err := os.Open(opts.File)
		if err != nil {
			return cmdutil.WithHint(err, "give the file chatq queue export -f wrote, or - for stdin")
		}
		defer fh.Close()
		in = fh
	} else {
		opts.IO.NoteStdin("an export (JSON Lines)")
		in = iostreams.Interruptible(ctx, in)
	}
	q, err := opts.Client()
	if err != nil {
		return err
	}
	attrs, err := q.Stats(ctx, opts.Queue)
	if err != nil && !errors.Is(err, delayq.ErrQueueNotFound) {
		return queueErr(err)
	}
	r := &exportReader{opts: opts, q: q, in: newLineReader(in), attrs: attrs, exists: attrs != nil, res: queueImportJSON{Queue: opts.Queue}}
	ir, err := q.Import(ctx, opts.Queue, r.messages(ctx))
	return r.report(ctx, ir, err)
}

// exportReader reads an export (or the messages of peek -o json) for
// Import: it handles the header and the end line itself and yields the
// messages, keeping the input line of each recent one, so that an import
// that stopped names its lines.
type exportReader struct {
	opts   *importOptions
	q      *delayq.Client
	in     *lineReader
	attrs  *delayq.Stats // the queue's when the import began (nil: missing)
	exists bool          // the queue is there: found, or created from the header
	res    queueImportJSON
	prog   *iostreams.Progress
	// stopped is set when the input stopped the import (the error it
	// yielded is Import's error then): at line bad, why, or when reading
	// failed after the current line, readErr.
	stopped bool
	bad     int
	why     string
	readErr error

	total               int64 // the header's count of messages, for the progress bar
	headerSeen, endSeen bool
	endCount            int // the end line's count of messages
	read                int // messages read
	// lines[k % 256] is the input line of message k: the messages an
	// Import that stopped names are of its last batch (at most 100) or
	// the one read after it, all among the last 256.
	lines [256]int
}

// messages yields the input's messages, checking each line's JSON and
// fields; Import checks the messages themselves (id, counts, maxsize).
func (r *exportReader) messages(ctx context.Context) iter.Seq2[delayq.Message, error] {
	return func(yield func(delayq.Message, error) bool) {
		for {
			b, ok := r.in.next()
			if !ok {
				break
			}
			m, isMessage, err := r.line(ctx, b)
			if err != nil {
				r.stopped = true
				yield(delayq.Message{}, err)
				return
			}
			if !isMessage {
				continue
			}
			r.read++
			r.lines[r.read%len(r.lines)] = r.in.line
			r.prog.Add(1)
			if !yield(m, nil) {
				return
			}
		}
		if err := r.in.err(); err != nil {
			r.stopped, r.readErr = true, err
			yield(delayq.Message{}, err)
		}
	}
}

// line reads one line: the header (the queue created from it, or its
// differences said), the end line, or a message.
func (r *exportReader) line(ctx context.Context, b []byte) (delayq.Message, bool, error) {
	var l importLine
	if err := decodeLine(b, &l); err != nil {
		return delayq.Message{}, false, r.malformed(err.Error())
	}
	switch {
	case r.endSeen:
		return delayq.Message{}, false, r.malformed("a line after the export's end line")
	case l.Queue != nil && l.ID == nil:
		if r.headerSeen || r.read > 0 {
			return delayq.Message{}, false, r.malformed("an export's first line in the middle of the input")
		}
		if l.Format == nil || *l.Format != exportFormat || l.Version != 1 {
			return delayq.Message{}, false, r.malformed(fmt.Sprintf("not a %s version 1 header", exportFormat))
		}
		r.headerSeen, r.total = true, l.Queue.Msgs
		return delayq.Message{}, false, r.header(ctx, l.Queue)
	case l.End != nil && l.ID == nil:
		var e struct {
			Messages int `json:"messages"`
		}
		if err := json.Unmarshal(*l.End, &e); err != nil {
			return delayq.Message{}, false, r.malformed("an end line without a message count")
		}
		r.endSeen, r.endCount = true, e.Messages
		return delayq.Message{}, false, nil
	}
	if !r.exists {
		queue := r.opts.Queue
		return delayq.Message{}, false, cmdutil.WithHint(queueErr(fmt.Errorf("queue %q: %w, and the input does not start with an export's header line to create it from", queue, delayq.ErrQueueNotFound)),
			"create it first with `chatq queue create "+queue+"`, or import a file chatq queue export wrote")
	}
	if r.prog == nil {
		r.prog = r.opts.IO.NewProgress("importing", int(r.total))
	}
	m, err := parseMessage(b, &l)
	if err != nil {
		return m, false, r.malformed(err.Error())
	}
	return m, true, nil
}

// malformed refuses the current line.
func (r *exportReader) malformed(why string) error {
	r.bad, r.why = r.in.line, why
	return errors.New(why)
}

// header creates the queue from an export's attributes when it is missing,
// or says where the existing queue's differ.
func (r *exportReader) header(ctx context.Context, h *exportQueue) error {
	opts := r.opts
	if a := r.attrs; a != nil {
		diff := func(what string, have, want any) {
			if fmt.Sprint(have) != fmt.Sprint(want) {
				opts.IO.Infof("note: queue %s keeps its own %s %v (the export's is %v)", opts.Queue, what, have, want)
			}
		}
		diff("vt", a.VT, time.Duration(h.VT)*time.Second)
		diff("delay", a.Delay, time.Duration(h.Delay)*time.Second)
		diff("maxsize", a.MaxSize, h.MaxSize)
		diff("max receives", a.MaxReceives, h.MaxReceives)
		diff("dead-letter queue", strconv.Quote(a.DeadLetter), strconv.Quote(h.DeadLetter))
		return nil
	}
	// An exported vt or delay of 0 is 0, not the package's default.
	cfg := delayq.Attributes{VT: orZero(time.Duration(h.VT) * time.Second), Delay: orZero(time.Duration(h.Delay) * time.Second), MaxSize: h.MaxSize,
		MaxReceives: h.MaxReceives, DeadLetter: h.DeadLetter}
	err := r.q.Create(ctx, opts.Queue, cfg)
	if err != nil && cfg.DeadLetter != "" && (errors.Is(err, delayq.ErrQueueNotFound) || strings.Contains(err.Error(), "dead-letter")) {
		// The dead-letter queue is missing here (or a Cluster, where
		// policies are refused): create the queue without the policy.
		opts.IO.Infof("warning: created %s without its dead-letter policy (%d receives, then %s): %v", opts.Queue, cfg.MaxReceives, cfg.DeadLetter, err)
		opts.IO.Infof("hint: set it later with `chatq queue set %s --max-receives %d --dead-letter %s`", opts.Queue, cfg.MaxReceives, cfg.DeadLetter)
		cfg.MaxReceives, cfg.DeadLetter = 0, ""
		err = r.q.Create(ctx, opts.Queue, cfg)
	}
	switch {
	case err == nil:
		r.res.Created = true
		infoTTY(opts.IO, opts.JSON, "created queue %s from the export's attributes", opts.Queue)
	case errors.Is(err, delayq.ErrQueueExists):
		// Created by someone else meanwhile: import into it.
	case errors.Is(err, delayq.ErrInvalid):
		return cmdutil.WithHint(fmt.Errorf("the export's attributes: %w", err), "create the queue yourself with `chatq queue create`, then import into it")
	default:
		return queueErr(err)
	}
	r.exists = true
	return nil
}

// parseMessage reads a message line's fields; Import checks the message.
func parseMessage(b []byte, l *importLine) (delayq.Message, error) {
	var m delayq.Message
	if l.ID == nil {
		return m, fmt.Errorf("no id: want a message line of an export (id, message, due)")
	}
	m.ID = *l.ID
	switch {
	case l.MessageBase64 != nil:
		body, err := base64.StdEncoding.DecodeString(*l.MessageBase64)
		if err != nil {
			return m, fmt.Errorf("message_base64 is not standard base64: %v", err)
		}
		m.Body = string(body)
	case l.Message != nil:
		if changedBody(b, *l.Message) {
			return m, fmt.Errorf("message has a \\u escape of a lone surrogate, which UTF-8 cannot hold")
		}
		m.Body = *l.Message
	default:
		return m, fmt.Errorf("message %s has no message field", m.ID)
	}
	due := l.Due
	if due == nil {
		due = l.VisibleAt
	}
	if due == nil {
		return m, fmt.Errorf("message %s has no due time (due, Unix ms)", m.ID)
	}
	n, err := msNumber("due", due)
	if err != nil {
		return m, err
	}
	m.VisibleAt = time.UnixMilli(n)
	if l.RC != nil {
		if m.RC, err = msNumber("rc", l.RC); err != nil {
			return m, err
		}
	}
	if l.FR != nil {
		fr, err := msNumber("fr", l.FR)
		if err != nil {
			return m, err
		}
		m.FR = time.UnixMilli(fr)
	}
	if dl := l.DeadLettered; dl != nil {
		// The record of a dead-letter move: kept, so that a redrive of the
		// restored queue still knows the way back.
		if dl.RC == nil || dl.At == nil {
			return m, fmt.Errorf("message %s: dead_lettered wants from, rc and at", m.ID)
		}
		if m.DeadLetteredRC, err = msNumber("dead_lettered.rc", dl.RC); err != nil {
			return m, err
		}
		at, err := msNumber("dead_lettered.at", dl.At)
		if err != nil {
			return m, err
		}
		m.DeadLetteredFrom, m.DeadLetteredAt = dl.From, time.UnixMilli(at)
	}
	return m, nil
}

// msNumber reads a whole, non-negative number.
func msNumber(what string, n *json.Number) (int64, error) {
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s %s: want a whole number, not negative", what, n.String())
	}
	return v, nil
}

// report writes what the import did (JSON, or a line on a terminal) and
// returns its error: the conflicts, or where it stopped and how to resume.
func (r *exportReader) report(ctx context.Context, ir *delayq.ImportResult, err error) error {
	opts, res := r.opts, &r.res
	res.ConflictIDs = []string{}
	if ir != nil {
		res.Imported, res.AlreadyPresent, res.Conflicts = ir.Imported, ir.Present, ir.Conflicts
		res.ConflictIDs = append(res.ConflictIDs, ir.ConflictIDs...)
	}
	for _, id := range res.ConflictIDs {
		opts.IO.Infof("conflict: message %s holds another body in %s: not imported", id, opts.Queue)
	}
	err = r.stopErr(ctx, err)
	if err == nil {
		switch {
		case !r.exists:
			err = cmdutil.WithHint(cmdutil.UsageErrorf("the input holds no export: nothing imported"), "give the file chatq queue export wrote")
		case r.headerSeen && !r.endSeen:
			opts.IO.Infof("warning: the input ends without the export's end line: the export may have been cut short (%d messages read)", r.read)
		case r.endSeen && r.endCount != r.read:
			opts.IO.Infof("warning: the export's end line counts %d messages, the input held %d: lines are missing or were added", r.endCount, r.read)
		}
	}
	if r.prog != nil {
		r.prog.Done()
	}
	if opts.JSON {
		if werr := opts.IO.WriteJSON(res); err == nil {
			err = werr
		}
	} else if r.exists {
		// Where export says what it did: on stderr, on a terminal.
		infoTTY(opts.IO, opts.JSON, "imported %s into %s (%d already present, %s)",
			plural(int64(res.Imported), "message"), opts.Queue, res.AlreadyPresent, plural(int64(res.Conflicts), "conflict"))
	}
	if err != nil {
		return err
	}
	if res.Conflicts > 0 {
		return cmdutil.WithHint(fmt.Errorf("%s: ids that hold other messages in %s were not imported", plural(int64(res.Conflicts), "conflict"), opts.Queue),
			"see them with `chatq queue peek`; import into a new queue to keep both, or ack the ones in the way and import again")
	}
	return nil
}

// stopErr says where an import stopped, from the PushError Import returned:
// the lines of the batch that failed, or the line the input or Import
// refused, and that running the same command again resumes it.
func (r *exportReader) stopErr(ctx context.Context, err error) error {
	var pe *delayq.PushError
	if !errors.As(err, &pe) {
		return queueErr(err)
	}
	opts := r.opts
	done := plural(int64(r.res.Imported), "message")
	switch {
	case r.bad > 0:
		return r.stoppedAt(r.bad, r.why)
	case r.readErr != nil && ctx.Err() != nil:
		opts.IO.Infof("imported %s before the interrupt; run the same import again to resume: ids already present are skipped", done)
		return ctx.Err()
	case r.readErr != nil:
		return fmt.Errorf("reading line %d: %w (imported %d messages before it)", r.in.line+1, r.readErr, r.res.Imported)
	case r.stopped:
		return pe.Err // the header's Create, or a missing queue: said as it is
	case pe.Position > 0:
		// A message refused (its id, counts, or a body over maxsize):
		// nothing of its batch is written.
		why := pe.Err.Error()
		if errors.Is(pe.Err, delayq.ErrMessageTooLong) {
			why = fmt.Sprintf("%s (raise it with `chatq queue set %s --maxsize N`)", why, opts.Queue)
		}
		return r.stoppedAt(r.lineOf(pe.Position), why)
	case ctx.Err() != nil && !conn.ReplyLost(pe.Err):
		opts.IO.Infof("imported %s before the interrupt; run the same command again to finish (what is there already is skipped)", done)
		return pe.Err
	case pe.Uncertain > 0 && conn.ReplyLost(pe.Err):
		return cmdutil.WithHint(fmt.Errorf("lines %d-%d: %w (%s imported before them; they may be too)", r.lineOf(pe.Stored+1), r.lineOf(pe.Stored+pe.Uncertain), pe.Err, done),
			"run the same command again: an import skips the messages already there, so a re-run is safe")
	case pe.Total > pe.Stored:
		return queueErr(fmt.Errorf("lines %d-%d: %w (%s imported before them)", r.lineOf(pe.Stored+1), r.lineOf(pe.Total), pe.Err, done))
	}
	return queueErr(pe.Err)
}

// lineOf is the input line of message k (from 1), one of the last read.
func (r *exportReader) lineOf(k int) int { return r.lines[k%len(r.lines)] }

// stoppedAt is the error of an import that stopped at line n.
func (r *exportReader) stoppedAt(n int, why string) error {
	r.res.Line = n
	return cmdutil.WithHint(fmt.Errorf("line %d: %s: stopped after importing %s", n, why, plural(int64(r.res.Imported), "message")),
		"fix that line and run the same command again: the messages already imported are skipped")
}
