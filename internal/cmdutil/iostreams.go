package cmdutil

import (
	"fmt"
	"io"
	"os"
)

// IOStreams are the streams a command reads and writes, so tests can run
// commands without a terminal.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutTTY and ErrTTY say whether Out and ErrOut are terminals: tables and
	// chatter for people on a terminal, plain lines when piped.
	OutTTY bool
	ErrTTY bool
}

// SystemIO returns the process's standard streams.
func SystemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: IsTerminal(os.Stdout), ErrTTY: IsTerminal(os.Stderr),
	}
}

func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Infof writes a "chatq: …" line to stderr.
func (s *IOStreams) Infof(format string, a ...any) {
	fmt.Fprintf(s.ErrOut, "chatq: "+format+"\n", a...)
}
