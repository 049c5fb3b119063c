// Package iostreams is chatq's terminal and output: the streams a command
// reads and writes and whether each is a terminal, JSON, tables and
// progress bars that behave differently on a terminal and piped, yes/no
// questions, and text made safe to show on a terminal.
package iostreams

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are the streams a command reads and writes, so tests can run
// commands without a terminal.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutTTY and ErrTTY say whether Out and ErrOut are terminals: tables and
	// chatter for people on a terminal, plain lines when piped. InTTY says
	// whether In is one: a command reading "-" then says it is waiting.
	OutTTY bool
	ErrTTY bool
	InTTY  bool
}

// SystemIO returns the process's standard streams.
func SystemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: IsTerminal(os.Stdout), ErrTTY: IsTerminal(os.Stderr), InTTY: IsTerminal(os.Stdin),
	}
}

// IsTerminal reports whether f is a terminal: one the terminal driver
// answers for (a TTY or a pseudo-terminal), not any character device, so
// that /dev/null is not one.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Infof writes a "chatq: …" line to stderr.
func (s *IOStreams) Infof(format string, a ...any) {
	fmt.Fprintf(s.ErrOut, "chatq: "+format+"\n", a...)
}

// NoteStdin says, when stdin is a terminal, that the command is reading
// what from it, so that a "-" typed by mistake does not look like a hang.
func (s *IOStreams) NoteStdin(what string) {
	if s.InTTY {
		s.Infof("reading %s from stdin (a terminal): type it, then Ctrl-D; Ctrl-C cancels", what)
	}
}
