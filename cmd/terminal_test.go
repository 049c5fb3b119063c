package cmd

import (
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// Bodies holding terminal escape sequences are shown escaped on a terminal,
// and byte for byte when piped.
func TestTerminalOutputIsEscaped(t *testing.T) {
	const hostile = "\x1b]0;owned\x07\x1b[2Jhi\u009b"
	const shown = `\x1b]0;owned\x07\x1b[2Jhi\u009b`
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		for _, setup := range [][]string{
			{"queue", "create", "jobs"},
			{"queue", "push", "jobs", hostile},
			{"list", "rpush", "items", hostile},
			{"chat", "create", "--from", "joe", "--to", "jeff", hostile},
		} {
			if code, _, stderr := runQueue(t, b, false, "", setup...); code != 0 {
				t.Fatalf("%q: %d %s", setup, code, stderr)
			}
		}
		for _, args := range [][]string{
			{"queue", "peek", "jobs"},
			{"list", "lrange", "items", "0", "-1"},
			{"chat", "history", "1"},
			{"chat", "pending", "jeff", "--peek"},
		} {
			_, tty, _ := runQueue(t, b, true, "", args...)
			if strings.ContainsAny(tty, "\x1b\x07") || strings.Contains(tty, "\u009b") || !strings.Contains(tty, shown) {
				t.Errorf("%q on a terminal: %q, want %q in it and no control characters", args, tty, shown)
			}
			_, piped, _ := runQueue(t, b, false, "", args...)
			if !strings.Contains(piped, hostile) {
				t.Errorf("%q piped: %q, want the bytes as stored", args, piped)
			}
		}
	})
	if got := iostreams.TerminalSafe("a\\b\xffc"); got != `a\\b\xffc` {
		t.Errorf("TerminalSafe: %q", got)
	}
}
