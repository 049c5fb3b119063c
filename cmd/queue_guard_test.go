package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// runTerminal runs a chatq command line with stdin and stderr on a
// (fake) terminal, so that it may ask; answer is what the person types.
func runTerminal(t *testing.T, b redistest.Backend, answer string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &iostreams.IOStreams{In: strings.NewReader(answer), Out: &out, ErrOut: &errOut, InTTY: true, ErrTTY: true}
	full := append([]string{"--url", b.URL, "--prefix", b.Prefix}, args...)
	code = Run(context.Background(), full, io, func(string) string { return "" })
	return code, out.String(), errOut.String()
}

// Delete and purge of a queue holding messages ask on a terminal; "y"
// destroys, anything else (or no answer) keeps it and exits 2. An empty
// queue is not asked about.
func TestQueueGuardAsks(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		for _, setup := range [][]string{
			{"queue", "create", "jobs"},
			{"queue", "create", "empty"},
			{"queue", "push", "jobs", "a"},
			{"queue", "push", "jobs", "b"},
		} {
			if code, _, errOut := runQueue(t, b, false, "", setup...); code != 0 {
				t.Fatalf("%q: %d %s", setup, code, errOut)
			}
		}
		for _, answer := range []string{"n\n", "\n", "", "nope\n"} {
			code, _, errOut := runTerminal(t, b, answer, "queue", "purge", "jobs")
			if code != 2 || !strings.Contains(errOut, "chatq: purge queue jobs, deleting its 2 messages? [y/N] ") || !strings.Contains(errOut, "not purged") || strings.Contains(errOut, "usage:") {
				t.Fatalf("purge answered %q: %d %q", answer, code, errOut)
			}
			code, _, errOut = runTerminal(t, b, answer, "queue", "delete", "jobs")
			if code != 2 || !strings.Contains(errOut, "chatq: delete queue jobs holding 2 messages? [y/N] ") || !strings.Contains(errOut, "not deleted") {
				t.Fatalf("delete answered %q: %d %q", answer, code, errOut)
			}
		}
		if code, out, _ := runQueue(t, b, false, "", "-o", "json", "queue", "stats", "jobs"); code != 0 || !strings.Contains(out, `"msgs":2,`) {
			t.Fatalf("after declining: %d %s", code, out)
		}
		if code, out, errOut := runTerminal(t, b, "y\n", "queue", "purge", "jobs"); code != 0 || out != "2\n" {
			t.Fatalf("purge answered y: %d %q %q", code, out, errOut)
		}
		runQueue(t, b, false, "", "queue", "push", "jobs", "c")
		if code, _, errOut := runTerminal(t, b, "YES\n", "queue", "delete", "jobs"); code != 0 || !strings.Contains(errOut, "deleted queue jobs and its 1 message") {
			t.Fatalf("delete answered YES: %d %q", code, errOut)
		}
		// Empty: no question, even with nothing to read.
		if code, out, errOut := runTerminal(t, b, "", "queue", "purge", "empty"); code != 0 || out != "0\n" || strings.Contains(errOut, "[y/N]") {
			t.Fatalf("purge of an empty queue: %d %q %q", code, out, errOut)
		}
		if code, _, errOut := runTerminal(t, b, "", "queue", "delete", "empty"); code != 0 || strings.Contains(errOut, "[y/N]") {
			t.Fatalf("delete of an empty queue: %d %q", code, errOut)
		}
	})
}

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1899: "1,899", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := iostreams.Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// onRead answers questions line by line and runs before(i) before the
// i-th line is read: what happens while a person reads the question.
type onRead struct {
	lines  []string
	before func(i int)
	i, off int
}

func (r *onRead) Read(p []byte) (int, error) {
	if r.i >= len(r.lines) {
		return 0, io.EOF
	}
	if r.off == 0 {
		r.before(r.i)
	}
	n := copy(p[:1], r.lines[r.i][r.off:])
	if r.off += n; r.off == len(r.lines[r.i]) {
		r.i, r.off = r.i+1, 0
	}
	return n, nil
}

// A message pushed while the question waits is not destroyed by the yes
// to the smaller count: the script finds more than allowed, and chatq asks
// again with the new count.
func TestQueueGuardAsksAgainWhenTheQueueGrew(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		for _, setup := range [][]string{{"queue", "create", "jobs"}, {"queue", "push", "jobs", "a"}} {
			if code, _, errOut := runQueue(t, b, false, "", setup...); code != 0 {
				t.Fatalf("%q: %d %s", setup, code, errOut)
			}
		}
		for _, verb := range []string{"purge", "delete"} {
			in := &onRead{lines: []string{"y\n", "n\n"}, before: func(i int) {
				if i == 0 {
					runQueue(t, b, false, "", "queue", "push", "jobs", "pushed while asking")
				}
			}}
			var out, errOut bytes.Buffer
			streams := &iostreams.IOStreams{In: in, Out: &out, ErrOut: &errOut, InTTY: true, ErrTTY: true}
			code := Run(context.Background(), []string{"--url", b.URL, "--prefix", b.Prefix, "queue", verb, "jobs"}, streams, func(string) string { return "" })
			n := map[string]int{"purge": 1, "delete": 2}[verb]
			if code != 2 || !strings.Contains(errOut.String(), iostreams.Count(int64(n))+" message") || !strings.Contains(errOut.String(), iostreams.Count(int64(n+1))+" messages? [y/N]") {
				t.Fatalf("%s: %d %q", verb, code, errOut.String())
			}
			code, o, _ := runQueue(t, b, false, "", "-o", "json", "queue", "stats", "jobs")
			if code != 0 || !strings.Contains(o, fmt.Sprintf(`"msgs":%d,`, n+1)) {
				t.Fatalf("after %s: %d %s", verb, code, o)
			}
		}
	})
}

// ls -l on a terminal: aligned columns under a header; piped: tab-separated.
func TestQueueLsLongTerminal(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		for _, setup := range [][]string{
			{"queue", "create", "dead"},
			{"queue", "create", "a-longer-name", "--max-receives", "2", "--dead-letter", "dead"},
			{"queue", "push", "a-longer-name", "--at", "1", "x"},
		} {
			if code, _, errOut := runQueue(t, b, false, "", setup...); code != 0 {
				t.Fatalf("%q: %d %s", setup, code, errOut)
			}
		}
		code, out, _ := runQueue(t, b, true, "", "queue", "ls", "-l")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME           MESSAGES  READY  DELAYED  INFLIGHT  RETRY  DEAD  DONE  OLDEST_READY  PAUSED  DEAD_LETTER") ||
			!strings.HasPrefix(lines[1], "a-longer-name  1         1      0        0         -      -     -     ") || !strings.HasSuffix(lines[1], " days    -       dead") ||
			!strings.HasPrefix(lines[2], "dead           0         0      0        0         -      -     -     -             -       -") {
			t.Fatalf("ls -l on a terminal: %d\n%s", code, out)
		}
	})
}
