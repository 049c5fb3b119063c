//go:build linux && !race

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestListPushStdinMemoryIsFlat: `list rpush KEY -` streams stdin in
// batches, so its peak RSS (the kernel's high-water mark for the process,
// rusage's ru_maxrss, as /proc/PID/status VmHWM) with 256 MiB of input is
// within a fixed bound of its peak with 1 MiB. Reading all of stdin first,
// as it did, took more than the input's size. A subprocess, against a
// redis-server of the test's own; not under the race detector, whose
// shadow memory grows with the heap the command touches.
func TestListPushStdinMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("pushes 257 MiB")
	}
	s := memoryServer(t)
	env := chatqEnv(t, "CHATQ_URL="+s.URL())
	small := pushRSS(t, env, "small", 1<<20)
	large := pushRSS(t, env, "large", 256<<20)
	t.Logf("peak RSS: %d KiB with 1 MiB of input, %d KiB with 256 MiB", small, large)
	// The bound is a few batches of 1 MiB and the runtime's slack, far
	// below the 256 MiB that reading the input first would add.
	const bound = 48 << 10 // KiB
	if large > small+bound {
		t.Errorf("peak RSS %d KiB with 256 MiB of input, %d KiB with 1 MiB: more than %d KiB apart", large, small, bound)
	}
}

// pushRSS pushes size bytes of 100-byte lines onto the list key, from a
// pipe fed as chatq reads it, and returns chatq's peak RSS in KiB, after
// checking that every line was stored.
func pushRSS(t *testing.T, env []string, key string, size int) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // a hang, not a budget
	defer cancel()
	c := exec.CommandContext(ctx, "chatq", "-o", "json", "list", "rpush", key, "-")
	c.Env = env
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	const lineLen = 100
	lines := size / lineLen
	go func() {
		w := bufio.NewWriter(in)
		for i := range lines {
			fmt.Fprintf(w, "%-*d\n", lineLen-1, i)
		}
		w.Flush()
		in.Close()
	}()
	if err := c.Wait(); err != nil {
		t.Fatalf("chatq list rpush %s -: %v: %s", key, err, errOut.String())
	}
	var got struct {
		Key    string
		Length int
	}
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil || got.Key != key || got.Length != lines {
		t.Fatalf("stdout %q (%v), want the length %d", out.String(), err, lines)
	}
	return c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}
