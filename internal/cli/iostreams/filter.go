package iostreams

import (
	"bufio"
	"bytes"
	"io"
	"sync"

	"github.com/chatq-dev/chatq/internal/cli/jsonfilter"
)

// filteredOut is stdout under --jq or --template: each JSON value a command
// prints through WriteJSON or WriteJSONLine goes through the filter, one
// value at a time (so a stream is filtered line by line); anything else
// written to it (help) passes through unchanged.
type filteredOut struct {
	w      io.Writer
	filter *jsonfilter.Filter
	tty    bool
	mu     sync.Mutex
	err    error // the filter's first failure
}

func (o *filteredOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.w.Write(p)
}

// writeValue filters one encoded JSON value. A failure is kept for
// FilterErr, since streaming commands go on after a line they could not
// print, and the next values are still filtered.
func (o *filteredOut) writeValue(data []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.w
	var buf bytes.Buffer
	if o.tty {
		w = &buf
	}
	err := o.filter.Apply(w, data, o.tty)
	if o.tty {
		// Raw strings and templates print messages as they are; on a
		// terminal, escape sequences in them must not act.
		_, _ = io.WriteString(o.w, terminalSafeLines(buf.String()))
	}
	if err != nil && o.err == nil {
		o.err = err
	}
	return err
}

// SetFilter makes every JSON value printed on s.Out go through f (--jq,
// --template). It is called once, before the command runs.
func (s *IOStreams) SetFilter(f *jsonfilter.Filter) {
	s.Out = &filteredOut{w: s.Out, filter: f, tty: s.OutTTY}
}

// FilterErr returns the first failure of the --jq or --template filter on
// the command's output, nil when none (or no filter).
func (s *IOStreams) FilterErr() error {
	if o, ok := s.Out.(*filteredOut); ok {
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.err
	}
	return nil
}

// LineWriter is where a command writes many JSON Lines: buffered, ended by
// Flush.
type LineWriter interface {
	io.Writer
	Flush() error
}

// BufferLines returns w buffered with size bytes for writing JSON Lines.
// Under --jq or --template, when w is the filtered stdout, it returns w
// unbuffered, so that each value written with WriteJSONLine still goes
// through the filter.
func BufferLines(w io.Writer, size int) LineWriter {
	if o, ok := w.(*filteredOut); ok {
		return unbuffered{o}
	}
	return bufio.NewWriterSize(w, size)
}

type unbuffered struct{ *filteredOut }

func (unbuffered) Flush() error { return nil }
