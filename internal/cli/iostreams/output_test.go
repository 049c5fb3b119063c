package iostreams

import (
	"bytes"
	"testing"
)

// On a terminal an empty table says so on stderr rather than printing a
// bare header; piped, it prints nothing at all.
func TestTableWhenEmpty(t *testing.T) {
	for _, tt := range []struct {
		tty             bool
		empty           string
		rows            [][]any
		wantOut, wantEr string
	}{
		{tty: true, empty: "no queues", wantEr: "chatq: no queues\n"},
		{tty: true, wantOut: "NAME\n"},
		{tty: false, empty: "no queues"},
		{tty: true, empty: "no queues", rows: [][]any{{"jobs"}}, wantOut: "NAME\njobs\n"},
		{tty: false, empty: "no queues", rows: [][]any{{"a\tb\\"}}, wantOut: "a\\tb\\\\\n"},
	} {
		var out, errOut bytes.Buffer
		s := &IOStreams{Out: &out, ErrOut: &errOut, OutTTY: tt.tty}
		tb := s.NewTable("NAME").WhenEmpty(tt.empty)
		for _, r := range tt.rows {
			tb.Row(r...)
		}
		if err := tb.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != tt.wantOut || errOut.String() != tt.wantEr {
			t.Errorf("tty=%v empty=%q rows=%v: stdout %q stderr %q, want %q %q", tt.tty, tt.empty, tt.rows, out.String(), errOut.String(), tt.wantOut, tt.wantEr)
		}
	}
}
