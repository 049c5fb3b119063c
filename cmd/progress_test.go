package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgressOnlyOnTerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, []byte(strings.Repeat("x\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()

	for _, tty := range []bool{false, true} {
		var errOut bytes.Buffer
		f := &Factory{IO: &IOStreams{In: in, ErrOut: &errOut, ErrTTY: tty}}
		p := f.newProgress("pushing")
		p.Add(100, 200)
		p.Done()
		got := errOut.String()
		if !tty && got != "" {
			t.Errorf("piped stderr got progress output %q", got)
		}
		if tty && !strings.Contains(got, "[##############################] 100% 100 items") {
			t.Errorf("terminal got %q, want a full bar", got)
		}
	}
}
