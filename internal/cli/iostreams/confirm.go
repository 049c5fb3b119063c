package iostreams

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CanPrompt says whether a command may ask a question: stdin and stderr
// are terminals (a person is there to answer). Off a terminal, commands
// that would ask refuse and name the flag that answers for them.
func (s *IOStreams) CanPrompt() bool { return s.InTTY && s.ErrTTY }

// Confirm asks a yes/no question on stderr ("chatq: QUESTION [y/N] ") and
// reads the answer from stdin: "y" or "yes" (any case) is yes; anything
// else, an empty line or the end of input is no. It returns ctx's error
// when ctx ends first (Ctrl-C).
func (s *IOStreams) Confirm(ctx context.Context, question string) (bool, error) {
	fmt.Fprintf(s.ErrOut, "chatq: %s [y/N] ", question)
	type answer struct {
		line string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		line, err := readLine(s.In)
		got <- answer{line, err}
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(s.ErrOut)
		return false, ctx.Err()
	case a := <-got:
		if a.err != nil && !errors.Is(a.err, io.EOF) {
			return false, a.err
		}
		if a.err != nil {
			fmt.Fprintln(s.ErrOut)
		}
		switch strings.ToLower(strings.TrimSpace(a.line)) {
		case "y", "yes":
			return true, nil
		}
		return false, nil
	}
}

// readLine reads up to a newline one byte at a time, so that nothing after
// it is taken from in (a later question reads the next line).
func readLine(in io.Reader) (string, error) {
	var b strings.Builder
	var c [1]byte
	for {
		n, err := in.Read(c[:])
		if n == 1 {
			if c[0] == '\n' {
				return b.String(), nil
			}
			b.WriteByte(c[0])
		}
		if err != nil {
			return b.String(), err
		}
	}
}

// Count renders n with thousands separators, as people read it: 1,899.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
