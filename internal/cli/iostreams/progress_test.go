package iostreams

import (
	"bytes"
	"strings"
	"testing"
)

func TestProgressOnlyOnTerminal(t *testing.T) {
	for _, tc := range []struct {
		tty   bool
		total int
		want  string
	}{
		{false, 20000, ""},
		{true, 20000, "[##############################] 100% 20000/20000\n"},
		{true, 10, ""}, // too small to be worth a bar
	} {
		var errOut bytes.Buffer
		s := &IOStreams{ErrOut: &errOut, ErrTTY: tc.tty}
		p := s.NewProgress("pushing", tc.total)
		p.Add(tc.total / 2)
		p.Add(tc.total - tc.total/2)
		p.Done()
		got := errOut.String()
		if tc.want == "" && got != "" || !strings.HasSuffix(got, tc.want) {
			t.Errorf("tty=%v total=%d: got %q, want suffix %q", tc.tty, tc.total, got, tc.want)
		}
	}
}
