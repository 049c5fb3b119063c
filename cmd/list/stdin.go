package list

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/shardlist"
)

// A push from stdin streams: lines are read into batches and each batch is
// pushed as it fills, so that memory stays bounded whatever the input's
// size (docs/performance.md, "Bulk loads").
const (
	// maxLine is the longest line taken, in bytes: a longer one is refused
	// when it is met, before the rest of it is read.
	maxLine = 16 << 20
	// stdinBatch and stdinBatchBytes bound a batch: the package's 500
	// items per script call, fewer once they reach 1 MiB (a longer line
	// goes alone).
	stdinBatch      = 500
	stdinBatchBytes = 1 << 20
)

// lineBatch is a run of lines read from stdin: items[0] is line first.
type lineBatch struct {
	first int
	items []string
	read  int64 // bytes of input they took, for the progress bar
	// end is set on the last batch: io.EOF, or why reading stopped (a bad
	// line, numbered line first+len(items), or a read error).
	end error
}

// badLine is a line of stdin refused when it was read.
type badLine struct {
	line          int
	problem, hint string
}

func (e *badLine) Error() string { return fmt.Sprintf("line %d %s", e.line, e.problem) }

// tooLong is the badLine of a line over maxLine.
func tooLong(line int) *badLine {
	return &badLine{line, "is longer than the 16 MiB chatq takes",
		"chatq list stores text items of up to 16 MiB: store a larger value elsewhere (a file, an object store) and push its name"}
}

// readBatches reads stdin into batches and sends them on out, until the
// input ends or is bad (the last batch says why) or done is closed. A batch
// is sent as soon as it is full. With typed, a terminal's input, the lines
// read so far are also sent before a read that may wait for the next (none
// buffered) if the pusher is idle, so that they are stored as they are
// typed; piped input goes in full batches only, so that where a push stops
// does not depend on how the pipe happened to deliver its bytes.
func readBatches(in io.Reader, typed bool, out chan<- lineBatch, done <-chan struct{}) {
	br := bufio.NewReaderSize(in, 1<<20)
	b := lineBatch{first: 1}
	size := 0
	next := func() { b, size = lineBatch{first: b.first + len(b.items)}, 0 }
	send := func() bool {
		select {
		case out <- b:
		case <-done:
			return false
		}
		next()
		return true
	}
	var long []byte // a line longer than br's buffer, as it is read
	for {
		if typed && len(b.items) > 0 && br.Buffered() == 0 {
			select {
			case out <- b: // out is unbuffered: the pusher is idle
				next()
			default:
			}
		}
		chunk, err := br.ReadSlice('\n')
		b.read += int64(len(chunk))
		if err == bufio.ErrBufferFull || long != nil {
			long = append(long, chunk...)
			if len(long) > maxLine+1 { // +1: its newline
				b.end = tooLong(b.first + len(b.items))
				send()
				return
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			chunk = long
		}
		if len(chunk) > 0 {
			item := trimEOL(chunk)
			long = nil
			line := b.first + len(b.items)
			if len(item) > maxLine {
				b.end = tooLong(line)
			} else if problem, hint := itemProblem(item); problem != "" {
				b.end = &badLine{line, problem, hint}
			}
			if b.end != nil {
				send()
				return
			}
			if len(b.items) > 0 && size+len(item) > stdinBatchBytes && !send() {
				return
			}
			b.items = append(b.items, item)
			size += len(item)
			if (len(b.items) == stdinBatch || size >= stdinBatchBytes) && !send() {
				return
			}
		}
		if err != nil {
			b.end = io.EOF
			if err != io.EOF {
				b.end = fmt.Errorf("reading line %d: %w", b.first+len(b.items), err)
			}
			send()
			return
		}
	}
}

// trimEOL is a line without its end: a newline, then a carriage return
// (twice, as iostreams.ReadLines and the push from arguments took them).
func trimEOL(l []byte) string { return iostreams.TrimLineEnding(string(l)) }

// pushStdin pushes the lines of stdin in batches as they are read. It
// stops at the first bad line, a failed batch, or an interrupt (after the
// batch in flight), and then says which lines are in the list and how to
// resume: lines are pushed in order and a batch is stored whole, so the
// lines stored are always 1 to some n (and, after a lost reply, maybe up
// to some m).
func (o *pushOptions) pushStdin(ctx context.Context, c *shardlist.Client) error {
	o.IO.NoteStdin("items, one per line,")
	// Each batch carries a token of its own (tokenPush).
	push := o.tokenPush(c)
	prog := o.IO.NewProgress("pushing (bytes of stdin)", int(inputSize(o.IO.In)))
	defer prog.Done()
	batches := make(chan lineBatch) // unbuffered: see readBatches
	done := make(chan struct{})
	defer close(done)
	go readBatches(o.IO.In, o.IO.InTTY, batches, done)
	stored, pushed := 0, false
	var length int64
	for {
		var b lineBatch
		select {
		case b = <-batches:
		case <-ctx.Done():
			return o.stopped(ctx, c, stored, 0, ctx.Err())
		}
		if b.end != nil && b.end != io.EOF {
			// A bad line or a read error: the lines read with it are
			// not pushed, so that an input of one batch is pushed whole
			// or not at all.
			return o.stopped(ctx, c, stored, 0, b.end)
		}
		if len(b.items) > 0 {
			if ctx.Err() != nil {
				return o.stopped(ctx, c, stored, 0, ctx.Err())
			}
			// The batch in flight is waited for (bounded by the read
			// timeout) so that what was stored is known.
			n, err := push(context.WithoutCancel(ctx), o.Key, b.items...)
			var pe *shardlist.PushError
			switch {
			case errors.As(err, &pe):
				return o.stopped(ctx, c, stored+pe.Stored, pe.Uncertain, pe.Err)
			case err != nil:
				return o.stopped(ctx, c, stored, 0, err)
			}
			stored, length, pushed = stored+len(b.items), n, true
		}
		prog.Add(int(b.read))
		switch {
		case b.end == io.EOF && !pushed:
			// No line: the push of nothing answers the length.
			n, err := push(ctx, o.Key)
			if err != nil {
				return o.stopped(ctx, c, 0, 0, err)
			}
			return o.printLength(n)
		case b.end == io.EOF:
			return o.printLength(length)
		}
	}
}

// stopped reports a push from stdin that stopped after lines 1-stored
// (and maybe the uncertain lines after them: their reply was lost)
// because of err.
func (o *pushOptions) stopped(ctx context.Context, c *shardlist.Client, stored, uncertain int, err error) error {
	var bad *badLine
	isBad := errors.As(err, &bad)
	switch {
	case stored > 0 || uncertain > 0:
	case isBad:
		return withHint(cmdutil.UsageErrorf("%v: nothing pushed", bad), bad.hint)
	case ctx.Err() != nil:
		o.IO.Infof("nothing was stored before the interrupt")
		return err
	default:
		// As for any push: a lost reply exits 4, with how to check.
		return listError(c, o.Key, err)
	}
	hint := o.resumeHint(stored, uncertain)
	if isBad {
		// Exit 1, not 2: a usage error would say that nothing changed.
		hint = fmt.Sprintf("lines 1-%d are in the list, none after them; correct line %d, then push from line %d (tail -n +%d FILE | chatq list %spush %s -)",
			stored, bad.line, stored+1, stored+1, o.Side.name(), o.Key)
		if bad.hint != "" {
			hint = bad.hint + "; " + hint
		}
	}
	what := fmt.Sprintf("push to list %s stopped after storing %d lines", o.Key, stored)
	if uncertain > 0 {
		what += fmt.Sprintf("; the next %d may also be stored (the reply was lost)", uncertain)
	}
	return o.report(ctx, fmt.Errorf("%s: %w", what, err), hint)
}

// inputSize is the size of stdin when it is a regular file (for the
// progress bar), else 0 (no bar).
func inputSize(in io.Reader) int64 {
	f, ok := in.(*os.File)
	if !ok {
		return 0
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	return st.Size()
}
