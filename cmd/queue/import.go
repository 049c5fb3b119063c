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

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queueImportOptions struct {
	f     *cmdutil.Factory
	cmd   *cobra.Command
	queue string
	file  string
}

func newQueueImportCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueImportOptions{f: f}
	cmd := &cobra.Command{
		Use:   "import QUEUE [-f FILE | -]",
		Short: "Read an export back into a queue, keeping ids, due times and receive counts",
		Long: `Read what chatq queue export wrote (JSON Lines, from FILE with -f, else from
stdin) into QUEUE. Each message keeps its id, body, due time, receive
count and first receive, so a restored message is due when it would have
been and a received one stays in flight until its visibility timeout ends;
the queue's totalsent grows by the messages imported (totalrecv stays).

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
as peek -o json prints it); rc and fr are optional, other fields are
ignored, so chatq queue peek -o json | jq -c '.[]' imports too.`,
		Example: `  chatq queue export jobs -f jobs.jsonl
  chatq queue import jobs-restored -f jobs.jsonl
  chatq --url redis://other:6379 queue import jobs - < jobs.jsonl
  chatq queue import jobs -f jobs.jsonl -o json   # {"imported":…,"already_present":…,"conflicts":…}`,
		Args: cmdutil.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue = cmd, args[0]
			if len(args) == 2 {
				if args[1] != "-" || opts.file != "" {
					return cmdutil.UsageErrorf("give the input as -f FILE or -, not %q", args[1])
				}
				opts.file = "-"
			}
			return queueImportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.file, "file", "f", "", "read FILE (- or none: stdin)")
	return cmd
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
	opts    *queueImportOptions
	q       *delayq.Client
	attrs   *delayq.Stats
	res     queueImportJSON
	batch   []delayq.Message
	lines   []int
	bytes   int
	inBatch map[string]bool
	prog    *iostreams.Progress
}

func queueImportRun(ctx context.Context, opts *queueImportOptions) error {
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	in := opts.f.IO.In
	if opts.file != "" && opts.file != "-" {
		fh, err := os.Open(opts.file)
		if err != nil {
			return cmdutil.WithHint(err, "give the file chatq queue export -f wrote, or - for stdin")
		}
		defer fh.Close()
		in = fh
	} else {
		opts.f.IO.NoteStdin("an export (JSON Lines)")
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	im := &importer{opts: opts, q: q, res: queueImportJSON{Queue: opts.queue, ConflictIDs: []string{}}, inBatch: map[string]bool{}}
	err = im.run(ctx, newLineReader(in))
	if im.prog != nil {
		im.prog.Done()
	}
	if opts.f.JSON() {
		if werr := opts.f.IO.WriteJSON(im.res); err == nil {
			err = werr
		}
	} else if im.attrs != nil {
		fmt.Fprintf(opts.f.IO.Out, "imported %s into %s (%d already present, %s)\n",
			plural(int64(im.res.Imported), "message"), opts.queue, im.res.AlreadyPresent, plural(int64(im.res.Conflicts), "conflict"))
	}
	if err != nil {
		return err
	}
	if im.res.Conflicts > 0 {
		return cmdutil.WithHint(fmt.Errorf("%s: ids that hold other messages in %s were not imported", plural(int64(im.res.Conflicts), "conflict"), opts.queue),
			"see them with `chatq queue peek`; import into a new queue to keep both, or ack the ones in the way and import again")
	}
	return nil
}

func (im *importer) run(ctx context.Context, r *lineReader) error {
	opts := im.opts
	attrs, err := im.q.Stats(ctx, opts.queue)
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
				return cmdutil.WithHint(queueErr(fmt.Errorf("queue %q: %w, and the input does not start with an export's header line to create it from", opts.queue, delayq.ErrQueueNotFound)),
					"create it first with `chatq queue create "+opts.queue+"`, or import a file chatq queue export wrote")
			}
			if im.prog == nil {
				im.prog = opts.f.IO.NewProgress("importing", int(total))
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
		opts.f.IO.Infof("warning: the input ends without the export's end line: the export may have been cut short (%d messages read)", messages)
	case endSeen && endCount != messages:
		opts.f.IO.Infof("warning: the export's end line counts %d messages, the input held %d: lines are missing or were added", endCount, messages)
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
				opts.f.IO.Infof("note: queue %s keeps its own %s %v (the export's is %v)", opts.queue, what, have, want)
			}
		}
		diff("vt", a.VT, time.Duration(h.VT)*time.Second)
		diff("delay", a.Delay, time.Duration(h.Delay)*time.Second)
		diff("maxsize", a.MaxSize, h.MaxSize)
		diff("max receives", a.MaxReceives, h.MaxReceives)
		diff("dead-letter queue", strconv.Quote(a.DeadLetter), strconv.Quote(h.DeadLetter))
		return nil
	}
	cfg := delayq.Attributes{VT: time.Duration(h.VT) * time.Second, Delay: time.Duration(h.Delay) * time.Second, MaxSize: h.MaxSize,
		MaxReceives: h.MaxReceives, DeadLetter: h.DeadLetter}
	err := im.q.Create(ctx, opts.queue, cfg)
	if err != nil && cfg.DeadLetter != "" && (errors.Is(err, delayq.ErrQueueNotFound) || strings.Contains(err.Error(), "dead-letter")) {
		// The dead-letter queue is missing here (or a Cluster, where
		// policies are refused): create the queue without the policy.
		opts.f.IO.Infof("warning: created %s without its dead-letter policy (%d receives, then %s): %v", opts.queue, cfg.MaxReceives, cfg.DeadLetter, err)
		opts.f.IO.Infof("hint: set it later with `chatq queue set %s --max-receives %d --dead-letter %s`", opts.queue, cfg.MaxReceives, cfg.DeadLetter)
		cfg.MaxReceives, cfg.DeadLetter = 0, ""
		err = im.q.Create(ctx, opts.queue, cfg)
	}
	switch {
	case err == nil:
		im.res.Created = true
		infoTTY(opts.f, "created queue %s from the export's attributes", opts.queue)
	case errors.Is(err, delayq.ErrQueueExists):
		// Created by someone else meanwhile: import into it.
	case errors.Is(err, delayq.ErrInvalid):
		return cmdutil.WithHint(fmt.Errorf("the export's attributes: %w", err), "create the queue yourself with `chatq queue create`, then import into it")
	default:
		return queueErr(err)
	}
	a, err := im.q.Stats(ctx, opts.queue)
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
	if err := delayq.CheckImport([]delayq.Message{m}); err != nil {
		return m, err
	}
	if max := im.attrs.MaxSize; max >= 0 {
		if n := len16(m.Body); n > max {
			return m, fmt.Errorf("message %s: %d UTF-16 units, over %s's maxsize %d (raise it with `chatq queue set %s --maxsize N`)", m.ID, n, im.opts.queue, max, im.opts.queue)
		}
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

// flush imports the batch in one script call.
func (im *importer) flush(ctx context.Context) error {
	if len(im.batch) == 0 {
		return nil
	}
	opts := im.opts
	first, last := im.lines[0], im.lines[len(im.lines)-1]
	r, err := im.q.Import(ctx, opts.queue, im.batch)
	if err != nil {
		done := plural(int64(im.res.Imported), "message")
		switch {
		case ctx.Err() != nil:
			opts.f.IO.Infof("imported %s before the interrupt; run the same command again to finish (what is there already is skipped)", done)
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
			opts.f.IO.Infof("conflict: message %s holds another body in %s: not imported", id, opts.queue)
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
