package queue

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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
	IO     *iostreams.IOStreams
	JSON   bool
	Client func() (*delayq.Client, error)
	Queue  string
	File   string   // -f; "" or - is stdin
	Rest   []string // the arguments after QUEUE: only - (stdin) is allowed
}

// NewCmdImport returns `chatq queue import` (runF: see cmdutil.RunE).
func NewCmdImport(f *cmdutil.Factory, runF func(context.Context, *importOptions) error) *cobra.Command {
	opts := &importOptions{IO: f.IO}
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
		RunE: cmdutil.RunE(opts, runF, importRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue, opts.Rest = args[0], args[1:]
			opts.JSON, opts.Client = f.JSON(), queueClient(f, cmd)
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

// maxConflictIDs is how many conflicting ids are listed (the count is
// complete), so that memory stays flat whatever the input.
const maxConflictIDs = 100

// importBatch is the most messages of one Import call.
const importBatch = 100

// importBatchBytes ends a batch early when its bodies reach it.
const importBatchBytes = 1 << 20

type importer struct {
	opts    *importOptions
	q       *delayq.Client
	attrs   *delayq.Stats
	res     queueImportJSON
	batch   []delayq.Message
	lines   []int
	bytes   int
	inBatch map[string]bool
	prog    *iostreams.Progress
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
	im := &importer{opts: opts, q: q, res: queueImportJSON{Queue: opts.Queue, ConflictIDs: []string{}}, inBatch: map[string]bool{}}
	err = im.run(ctx, newLineReader(in))
	if im.prog != nil {
		im.prog.Done()
	}
	if opts.JSON {
		if werr := opts.IO.WriteJSON(im.res); err == nil {
			err = werr
		}
	} else if im.attrs != nil {
		// Where export says what it did: on stderr, on a terminal.
		infoTTY(opts.IO, opts.JSON, "imported %s into %s (%d already present, %s)",
			plural(int64(im.res.Imported), "message"), opts.Queue, im.res.AlreadyPresent, plural(int64(im.res.Conflicts), "conflict"))
	}
	if err != nil {
		return err
	}
	if im.res.Conflicts > 0 {
		return cmdutil.WithHint(fmt.Errorf("%s: ids that hold other messages in %s were not imported", plural(int64(im.res.Conflicts), "conflict"), opts.Queue),
			"see them with `chatq queue peek`; import into a new queue to keep both, or ack the ones in the way and import again")
	}
	return nil
}

func (im *importer) run(ctx context.Context, r *lineReader) error {
	opts := im.opts
	attrs, err := im.q.Stats(ctx, opts.Queue)
	if err != nil && !errors.Is(err, delayq.ErrQueueNotFound) {
		return queueErr(err)
	}
	im.attrs = attrs
	var total int64
	headerSeen, endSeen, endCount, messages := false, false, -1, 0
	for {
		b, ok := r.next()
		if !ok {
			break
		}
		var l importLine
		if err := decodeLine(b, &l); err != nil {
			return im.malformed(r.line, err.Error())
		}
		switch {
		case endSeen:
			return im.malformed(r.line, "a line after the export's end line")
		case l.Queue != nil && l.ID == nil:
			if headerSeen || messages > 0 {
				return im.malformed(r.line, "an export's first line in the middle of the input")
			}
			if l.Format == nil || *l.Format != exportFormat || l.Version != 1 {
				return im.malformed(r.line, fmt.Sprintf("not a %s version 1 header", exportFormat))
			}
			headerSeen, total = true, l.Queue.Msgs
			if err := im.header(ctx, l.Queue); err != nil {
				return err
			}
		case l.End != nil && l.ID == nil:
			var e struct {
				Messages int `json:"messages"`
			}
			if err := json.Unmarshal(*l.End, &e); err != nil {
				return im.malformed(r.line, "an end line without a message count")
			}
			endSeen, endCount = true, e.Messages
		default:
			if im.attrs == nil {
				return cmdutil.WithHint(queueErr(fmt.Errorf("queue %q: %w, and the input does not start with an export's header line to create it from", opts.Queue, delayq.ErrQueueNotFound)),
					"create it first with `chatq queue create "+opts.Queue+"`, or import a file chatq queue export wrote")
			}
			if im.prog == nil {
				im.prog = opts.IO.NewProgress("importing", int(total))
			}
			m, err := im.message(b, &l)
			if err != nil {
				return im.malformed(r.line, err.Error())
			}
			messages++
			if im.inBatch[m.ID] || len(im.batch) == importBatch || im.bytes+len(m.Body) > importBatchBytes && len(im.batch) > 0 {
				if err := im.flush(ctx); err != nil {
					return err
				}
			}
			im.batch = append(im.batch, m)
			im.lines = append(im.lines, r.line)
			im.inBatch[m.ID] = true
			im.bytes += len(m.Body)
		}
	}
	if err := r.err(); err != nil {
		if ctx.Err() != nil {
			opts.IO.Infof("imported %s before the interrupt; run the same import again to resume: ids already present are skipped", plural(int64(im.res.Imported), "message"))
			return ctx.Err()
		}
		return fmt.Errorf("reading line %d: %w (imported %d messages before it)", r.line+1, err, im.res.Imported)
	}
	if im.attrs == nil {
		return cmdutil.WithHint(cmdutil.UsageErrorf("the input holds no export: nothing imported"), "give the file chatq queue export wrote")
	}
	if err := im.flush(ctx); err != nil {
		return err
	}
	switch {
	case headerSeen && !endSeen:
		opts.IO.Infof("warning: the input ends without the export's end line: the export may have been cut short (%d messages read)", messages)
	case endSeen && endCount != messages:
		opts.IO.Infof("warning: the export's end line counts %d messages, the input held %d: lines are missing or were added", endCount, messages)
	}
	return nil
}

// header creates the queue from an export's attributes when it is missing,
// or says where the existing queue's differ.
func (im *importer) header(ctx context.Context, h *exportQueue) error {
	opts := im.opts
	if im.attrs != nil {
		a := im.attrs
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
	err := im.q.Create(ctx, opts.Queue, cfg)
	if err != nil && cfg.DeadLetter != "" && (errors.Is(err, delayq.ErrQueueNotFound) || strings.Contains(err.Error(), "dead-letter")) {
		// The dead-letter queue is missing here (or a Cluster, where
		// policies are refused): create the queue without the policy.
		opts.IO.Infof("warning: created %s without its dead-letter policy (%d receives, then %s): %v", opts.Queue, cfg.MaxReceives, cfg.DeadLetter, err)
		opts.IO.Infof("hint: set it later with `chatq queue set %s --max-receives %d --dead-letter %s`", opts.Queue, cfg.MaxReceives, cfg.DeadLetter)
		cfg.MaxReceives, cfg.DeadLetter = 0, ""
		err = im.q.Create(ctx, opts.Queue, cfg)
	}
	switch {
	case err == nil:
		im.res.Created = true
		infoTTY(opts.IO, opts.JSON, "created queue %s from the export's attributes", opts.Queue)
	case errors.Is(err, delayq.ErrQueueExists):
		// Created by someone else meanwhile: import into it.
	case errors.Is(err, delayq.ErrInvalid):
		return cmdutil.WithHint(fmt.Errorf("the export's attributes: %w", err), "create the queue yourself with `chatq queue create`, then import into it")
	default:
		return queueErr(err)
	}
	a, err := im.q.Stats(ctx, opts.Queue)
	if err != nil {
		return queueErr(err)
	}
	im.attrs = a
	return nil
}

// message checks one message line fully: nothing of a batch is written
// unless all of it passes.
func (im *importer) message(b []byte, l *importLine) (delayq.Message, error) {
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
	err = delayq.CheckImport([]delayq.Message{m}, &im.attrs.Attributes)
	if errors.Is(err, delayq.ErrMessageTooLong) {
		err = fmt.Errorf("%w (raise it with `chatq queue set %s --maxsize N`)", err, im.opts.Queue)
	}
	return m, err
}

// msNumber reads a whole, non-negative number.
func msNumber(what string, n *json.Number) (int64, error) {
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s %s: want a whole number, not negative", what, n.String())
	}
	return v, nil
}

// flush imports the batch in one script call.
func (im *importer) flush(ctx context.Context) error {
	if len(im.batch) == 0 {
		return nil
	}
	opts := im.opts
	first, last := im.lines[0], im.lines[len(im.lines)-1]
	r, err := im.q.Import(ctx, opts.Queue, im.batch)
	if err != nil {
		done := plural(int64(im.res.Imported), "message")
		switch {
		case ctx.Err() != nil:
			opts.IO.Infof("imported %s before the interrupt; run the same command again to finish (what is there already is skipped)", done)
			return err
		case conn.ReplyLost(err):
			return cmdutil.WithHint(fmt.Errorf("lines %d-%d: %w (%s imported before them; they may be too)", first, last, err, done),
				"run the same command again: an import skips the messages already there, so a re-run is safe")
		case errors.Is(err, delayq.ErrMessageTooLong):
			return queueErr(fmt.Errorf("lines %d-%d: %w: nothing of them written (%s imported before them)", first, last, err, done))
		}
		return queueErr(fmt.Errorf("lines %d-%d: %w (%s imported before them)", first, last, err, done))
	}
	im.res.Imported += r.Imported
	im.res.AlreadyPresent += len(r.Present)
	for _, id := range r.Conflicts {
		im.res.Conflicts++
		if len(im.res.ConflictIDs) < maxConflictIDs {
			im.res.ConflictIDs = append(im.res.ConflictIDs, id)
			opts.IO.Infof("conflict: message %s holds another body in %s: not imported", id, opts.Queue)
		}
	}
	if im.prog != nil {
		im.prog.Add(len(im.batch))
	}
	im.batch, im.lines, im.bytes = im.batch[:0], im.lines[:0], 0
	clear(im.inBatch)
	return nil
}

// malformed stops the import at line n.
func (im *importer) malformed(n int, why string) error {
	im.res.Line = n
	return cmdutil.WithHint(fmt.Errorf("line %d: %s: stopped after importing %s", n, why, plural(int64(im.res.Imported), "message")),
		"fix that line and run the same command again: the messages already imported are skipped")
}
