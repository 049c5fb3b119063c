package queue

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/cli/search"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type exportOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error)
	Queue  string
	File   string // -f; "" or - is stdout
	Filter filterFlags
}

// NewCmdExport returns `chatq queue export` (runF: see cmdutil.RunWith).
func NewCmdExport(f *cmdutil.Factory, runF func(context.Context, *exportOptions) error) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export QUEUE [-f FILE] [--state S] [--older-than DUR] [--grep PATTERN [--regexp]] [--min-receives N] [--inflight-for DUR]",
		Short: "Write a queue's attributes and messages as JSON Lines, for a backup or a move",
		Long: `Write queue QUEUE as JSON Lines to stdout, or to FILE with -f (written
beside it under a temporary name and renamed when complete):

  {"format":"chatq-queue-export","version":1,"exported_at":MS,"queue":{...}}
  {"id":"...","message":"...","state":"ready","due":MS,"rc":0,"fr":null,"sent":MS}
  ...
  {"end":{"messages":N}}

The first line holds the queue's attributes (as stats -o json names them);
then one line per message: its id, body, state (ready, delayed or
inflight), due time (visible-at, Unix ms), receive count, first receive
(Unix ms or null) and push time (from the id). A body that is not UTF-8
(stored by another client) also has message_base64, its exact bytes. A
message a dead-letter move brought here has "dead_lettered":{"from","rc",
"at"} (where it came from, its receive count there, when it moved). The
last line counts the messages, so that chatq queue import can tell a
truncated file. chatq queue import reads it all back, records included.

The filters of queue peek select what is written: --state, --older-than,
--grep PATTERN (a substring of the body or id, matched by the server, so
only matches cross the network; with --regexp a regular expression,
matched here), --min-receives and --inflight-for. With --grep,
--min-receives or --inflight-for, stderr says how many messages were
examined and how many were written.

It only reads (a read-only user can export), in pages of at most about
250 messages and 1 MiB per server call, and holds one page in memory, so
any size of queue streams. The messages come in no particular order. A
live export (consumers and producers running) includes every message that
is in the queue for the whole export, each with its state when its page
was read; a message pushed or deleted meanwhile may or may not be in it;
a message can appear twice only when the queue lost most of its messages
during the export (import skips the second copy). chatq says on stderr
when the queue changed during the export. For an exact point-in-time copy,
stop the queue's consumers and producers first.`,
		Example: `  chatq queue export jobs > jobs.jsonl
  chatq queue export jobs -f jobs.jsonl && chatq queue import jobs-copy -f jobs.jsonl
  chatq queue export jobs --jq 'select(.state == "ready") | .message'
  chatq queue export jobs --grep '"customer":"c42"' -f c42.jsonl
  chatq queue export jobs-dead --jq 'select(.dead_lettered.from == "payments") | .id'
  chatq queue export bullmq:mail --state dead -f failed.jsonl   # another kind: its jobs, read-only`,
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, exportRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue = args[0]
			opts.Filter.read(cmd.Flags())
			opts.Client = queueClient(f, cmd)
			if isKindAddress(opts.Queue) {
				if err := opts.Filter.validateKind(); err != nil {
					return nil, err
				}
				target := targetOf(f, cmd, args[0])
				return func(ctx context.Context) error { return kindExportRun(ctx, target, opts) }, nil
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().StringVarP(&opts.File, "file", "f", "", "write to FILE instead of stdout")
	opts.Filter.addState(cmd)
	opts.Filter.Search.Add(cmd.Flags(), "body or id")
	opts.Filter.addSelect(cmd.Flags())
	return cmdutil.MarkRead(cmd)
}

func (o *exportOptions) validate() error {
	if err := o.Filter.validate(); err != nil {
		return err
	}
	return checkName(o.Queue)
}

// exportFormat names the format of the first line; import refuses another.
const exportFormat = "chatq-queue-export"

// exportHeader is the first line of an export.
type exportHeader struct {
	Format     string      `json:"format"`
	Version    int         `json:"version"`
	ExportedAt int64       `json:"exported_at"`
	Queue      exportQueue `json:"queue"`
}

// exportQueue is the queue's attributes, named as stats -o json names them.
type exportQueue struct {
	Name        string `json:"name"`
	VT          int64  `json:"vt"`
	Delay       int64  `json:"delay"`
	MaxSize     int    `json:"maxsize"`
	MaxReceives int    `json:"max_receives"`
	DeadLetter  string `json:"dead_letter"`
	Created     int64  `json:"created"`
	Modified    int64  `json:"modified"`
	TotalSent   int64  `json:"totalsent"`
	TotalRecv   int64  `json:"totalrecv"`
	Msgs        int64  `json:"msgs"`
}

// exportMessage is one message line.
type exportMessage struct {
	ID            string `json:"id"`
	Message       string `json:"message"`
	MessageBase64 string `json:"message_base64,omitempty"`
	State         string `json:"state"`
	Due           int64  `json:"due"`
	RC            int64  `json:"rc"`
	FR            any    `json:"fr"`
	Sent          int64  `json:"sent"`
	// DeadLettered is the record of the dead-letter move that brought it
	// here, if any.
	DeadLettered *deadLetteredJSON `json:"dead_lettered,omitempty"`
}

// exportEnd is the last line.
type exportEnd struct {
	End struct {
		Messages int `json:"messages"`
	} `json:"end"`
}

type queueExportJSON struct {
	Queue    string `json:"queue"`
	File     string `json:"file"`
	Messages int    `json:"messages"`
	Changed  bool   `json:"changed"`
	Examined *int   `json:"examined,omitempty"` // with a filter: the messages read
}

func exportRun(ctx context.Context, opts *exportOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	// One read-only script: the attributes and the count, O(log n).
	st, err := q.Stats(ctx, opts.Queue)
	if err != nil {
		return queueErr(err)
	}
	file, err := createExport(opts.IO.Out, opts.File)
	if err != nil {
		return err
	}
	defer file.abandon()
	w := iostreams.BufferLines(file.out, 256<<10)
	head := exportHeader{Format: exportFormat, Version: 1, ExportedAt: st.Now.UnixMilli(), Queue: exportQueue{
		Name: opts.Queue, VT: int64(st.VT.Seconds()), Delay: int64(st.Delay.Seconds()), MaxSize: st.MaxSize,
		MaxReceives: st.MaxReceives, DeadLetter: st.DeadLetter, Created: st.Created.Unix(), Modified: st.Modified.Unix(),
		TotalSent: st.TotalSent, TotalRecv: st.TotalRecv, Msgs: st.Messages,
	}}
	if err := iostreams.WriteJSONLine(w, head); err != nil {
		return err
	}
	prog := opts.IO.NewProgress("exporting", int(st.Messages))
	po := opts.Filter.options()
	examined := 0
	po.Progress = func(n, _ int) {
		prog.Add(n - examined)
		examined = n
	}
	n, err := q.Export(ctx, opts.Queue, po, func(page []delayq.Message) error {
		for _, p := range page {
			msg, b64 := bodyJSON(p.Body)
			if err := iostreams.WriteJSONLine(w, exportMessage{ID: p.ID, Message: msg, MessageBase64: b64, State: p.State,
				Due: p.VisibleAt.UnixMilli(), RC: p.RC, FR: ms(p.FR), Sent: p.Sent.UnixMilli(), DeadLettered: toDeadLettered(p)}); err != nil {
				return err
			}
		}
		return nil
	})
	prog.Done()
	if err != nil {
		w.Flush()
		return queueErr(fmt.Errorf("export of %s stopped after %d messages: %w", opts.Queue, n, err))
	}
	var end exportEnd
	end.End.Messages = n
	if err := iostreams.WriteJSONLine(w, end); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := file.commit(); err != nil {
		return err
	}
	// Pushes and receives during the export show in the counters.
	changed := false
	if after, err := q.Stats(ctx, opts.Queue); err == nil && (after.TotalSent != st.TotalSent || after.TotalRecv != st.TotalRecv) {
		changed = true
		opts.IO.Infof("note: the queue changed during the export (%d pushes, %d receives): messages pushed or deleted meanwhile may or may not be in it; stop consumers and producers for an exact copy",
			after.TotalSent-st.TotalSent, after.TotalRecv-st.TotalRecv)
	}
	if opts.Filter.selecting() {
		search.Report(opts.IO, examined, n)
	}
	if opts.File != "" && opts.File != "-" {
		if opts.JSON {
			out := queueExportJSON{Queue: opts.Queue, File: opts.File, Messages: n, Changed: changed}
			if opts.Filter.selecting() || opts.Filter.State != "" || opts.Filter.OlderThan != nil {
				out.Examined = &examined
			}
			return opts.IO.WriteJSON(out)
		}
		infoTTY(opts.IO, opts.JSON, "exported %s of queue %s to %s", plural(int64(n), "message"), opts.Queue, opts.File)
	}
	return nil
}

// exportFile is where an export goes: stdout, or FILE written whole
// (a temporary file beside it, synced, then renamed into place), so that
// an export stopped midway never leaves a partial FILE.
type exportFile struct {
	out  io.Writer
	tmp  *os.File
	path string
}

// createExport opens the export's output: stdout when path is "" or "-".
func createExport(stdout io.Writer, path string) (*exportFile, error) {
	if path == "" || path == "-" {
		return &exportFile{out: stdout}, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("export to %s: %w", path, err)
	}
	return &exportFile{out: tmp, tmp: tmp, path: path}, nil
}

// commit puts the file in place once everything is written.
func (f *exportFile) commit() error {
	if f.tmp == nil {
		return nil
	}
	if err := f.tmp.Sync(); err != nil {
		return err
	}
	if err := f.tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.tmp.Name(), f.path); err != nil {
		return fmt.Errorf("export to %s: %w", f.path, err)
	}
	f.tmp = nil
	return nil
}

// abandon removes the temporary file of an export that did not commit.
func (f *exportFile) abandon() {
	if f.tmp != nil {
		f.tmp.Close()
		os.Remove(f.tmp.Name())
	}
}
