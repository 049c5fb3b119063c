package iostreams

import (
	"bytes"
	"strings"
)

// Test returns streams for a command's tests: stdin reads stdin, stdout and
// stderr are written to the buffers returned; tty says whether all three
// are to pass for a terminal (tables and chatter) or are piped.
func Test(tty bool, stdin string) (s *IOStreams, out, errOut *bytes.Buffer) {
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	s = &IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: errOut, OutTTY: tty, ErrTTY: tty, InTTY: tty}
	return s, out, errOut
}
