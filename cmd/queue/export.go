package queue

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queueExportOptions struct {
	f     *cmdutil.Factory
	cmd   *cobra.Command
	queue string
	file  string
}

func newQueueExportCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueExportOptions{f: f}
	cmd := &cobra.Command{
		Use:   "export QUEUE [-f FILE]",
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
(stored by another client) also has message_base64, its exact bytes. The
last line counts the messages, so that chatq queue import can tell a
truncated file. chatq queue import reads it all back.

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
  chatq queue export jobs | jq -c 'select(.state == "ready") | .message'`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue = cmd, args[0]
			return queueExportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.file, "file", "f", "", "write to FILE instead of stdout")
	return cmd
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
}

func queueExportRun(ctx context.Context, opts *queueExportOptions) error {
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	// One read-only script: the attributes and the count, O(log n).
	st, err := q.Stats(ctx, opts.queue)
	if err != nil {
		return queueErr(err)
	}
	out := opts.f.IO.Out
	var tmp *os.File
	if opts.file != "" && opts.file != "-" {
		tmp, err = os.CreateTemp(filepath.Dir(opts.file), "."+filepath.Base(opts.file)+".*.tmp")
		if err != nil {
			return fmt.Errorf("export to %s: %w", opts.file, err)
		}
		defer func() {
			if tmp != nil {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}()
		out = tmp
	}
	w := bufio.NewWriterSize(out, 256<<10)
	head := exportHeader{Format: exportFormat, Version: 1, ExportedAt: st.Now.UnixMilli(), Queue: exportQueue{
		Name: opts.queue, VT: int64(st.VT.Seconds()), Delay: int64(st.Delay.Seconds()), MaxSize: st.MaxSize,
		MaxReceives: st.MaxReceives, DeadLetter: st.DeadLetter, Created: st.Created.Unix(), Modified: st.Modified.Unix(),
		TotalSent: st.TotalSent, TotalRecv: st.TotalRecv, Msgs: st.Messages,
	}}
	if err := iostreams.WriteJSONLine(w, head); err != nil {
		return err
	}
	prog := opts.f.IO.NewProgress("exporting", int(st.Messages))
	n, err := q.Export(ctx, opts.queue, func(page []delayq.Message) error {
		for _, p := range page {
			msg, b64 := bodyJSON(p.Body)
			if err := iostreams.WriteJSONLine(w, exportMessage{ID: p.ID, Message: msg, MessageBase64: b64, State: p.State,
				Due: p.VisibleAt.UnixMilli(), RC: p.RC, FR: ms(p.FR), Sent: p.Sent.UnixMilli()}); err != nil {
				return err
			}
		}
		prog.Add(len(page))
		return nil
	})
	prog.Done()
	if err != nil {
		w.Flush()
		return queueErr(fmt.Errorf("export of %s stopped after %d messages: %w", opts.queue, n, err))
	}
	var end exportEnd
	end.End.Messages = n
	if err := iostreams.WriteJSONLine(w, end); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if tmp != nil {
		if err := tmp.Sync(); err != nil {
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		if err := os.Rename(tmp.Name(), opts.file); err != nil {
			return fmt.Errorf("export to %s: %w", opts.file, err)
		}
		tmp = nil
	}
	// Pushes and receives during the export show in the counters.
	changed := false
	if after, err := q.Stats(ctx, opts.queue); err == nil && (after.TotalSent != st.TotalSent || after.TotalRecv != st.TotalRecv) {
		changed = true
		opts.f.IO.Infof("note: the queue changed during the export (%d pushes, %d receives): messages pushed or deleted meanwhile may or may not be in it; stop consumers and producers for an exact copy",
			after.TotalSent-st.TotalSent, after.TotalRecv-st.TotalRecv)
	}
	if opts.file != "" && opts.file != "-" {
		if opts.f.JSON() {
			return opts.f.IO.WriteJSON(queueExportJSON{Queue: opts.queue, File: opts.file, Messages: n, Changed: changed})
		}
		infoTTY(opts.f, "exported %s of queue %s to %s", plural(int64(n), "message"), opts.queue, opts.file)
	}
	return nil
}
