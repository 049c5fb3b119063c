package iostreams

import (
	"bytes"
	"errors"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/jsonfilter"
)

func jq(t *testing.T, expr string) *jsonfilter.Filter {
	t.Helper()
	f, err := jsonfilter.JQ(expr, func() []string { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Under a filter, WriteJSON and WriteJSONLine print what the filter makes of
// each value, a stream line by line; a failure is kept for FilterErr and the
// next values are still filtered; other writes pass through.
func TestFilteredOutput(t *testing.T) {
	var out bytes.Buffer
	s := &IOStreams{Out: &out}
	s.SetFilter(jq(t, ".id"))
	if err := s.WriteJSON(map[string]any{"id": "a", "n": 1}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{map[string]any{"id": "b"}, []int{1}, map[string]any{"id": 3}} {
		_ = WriteJSONLine(s.Out, v)
	}
	_, _ = s.Out.Write([]byte("help text\n"))
	if got := out.String(); got != "a\nb\n3\nhelp text\n" {
		t.Errorf("stdout %q", got)
	}
	var re *jsonfilter.RuntimeError
	if err := s.FilterErr(); !errors.As(err, &re) {
		t.Errorf("FilterErr: %v, want the failure on [1]", err)
	}
	if err := (&IOStreams{Out: &out}).FilterErr(); err != nil {
		t.Errorf("no filter: FilterErr %v", err)
	}
}

// On a terminal, raw strings cannot carry escape sequences to it; newlines
// and tabs still act. Piped, they are printed byte for byte.
func TestFilteredOutputTerminalSafe(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		s := &IOStreams{Out: &out, OutTTY: tty}
		s.SetFilter(jq(t, ".m"))
		if err := s.WriteJSON(map[string]string{"m": "a\x1b]0;owned\x07\tb\\c\nd"}); err != nil {
			t.Fatal(err)
		}
		want := "a\x1b]0;owned\x07\tb\\c\nd\n"
		if tty {
			want = "a\\x1b]0;owned\\x07\tb\\c\nd\n"
		}
		if out.String() != want {
			t.Errorf("tty %v: %q, want %q", tty, out.String(), want)
		}
	}
}
