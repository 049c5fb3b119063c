package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The reliability tests run chatq as the separate processes an operator
// runs (the test binary, installed on PATH as chatq by testscript.Main), so
// that exit codes are real and a process can be killed.

// chatqEnv is the environment of a chatq process: this one's, without any
// CHATQ_ setting or config file of the machine's, plus settings.
func chatqEnv(t *testing.T, settings ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CHATQ_") && !strings.HasPrefix(kv, "REDISCLI_AUTH=") &&
			!strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	return append(append(env, "XDG_CONFIG_HOME="+t.TempDir()), settings...)
}

// chatqPath is the chatq binary the tests run.
func chatqPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chatq")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// result is how one chatq process ended.
type result struct {
	args           []string
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("chatq %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// runOnce runs one chatq command to its end.
func runOnce(ctx context.Context, env []string, args ...string) result {
	return runStdin(ctx, env, "", args...)
}

// runStdin runs one chatq command to its end, with stdin as its input. A
// command that has not ended two minutes later is a hang: it gets SIGQUIT,
// so that its stderr shows where each goroutine was.
func runStdin(ctx context.Context, env []string, stdin string, args ...string) result {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "chatq", args...)
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGQUIT) }
	c.WaitDelay = 10 * time.Second
	c.Env = env
	c.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	code := c.ProcessState.ExitCode()
	if err != nil && code < 0 {
		code = -1
		errOut.WriteString(err.Error())
	}
	return result{args: args, code: code, stdout: out.String(), stderr: errOut.String()}
}

// mustRun runs a setup command, failing t unless it exits 0.
func mustRun(t *testing.T, env []string, args ...string) string {
	t.Helper()
	r := runOnce(t.Context(), env, args...)
	if r.code != 0 {
		t.Fatal(r)
	}
	return r.stdout
}

// proc is a long-running chatq process.
type proc struct {
	args        []string
	cmd         *exec.Cmd
	out, errOut lockedBuffer
	done        chan struct{}
	code        int
}

// startChatq starts a long-running chatq command, killed when t ends if it
// is still running.
func startChatq(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{args: args, done: make(chan struct{})}
	p.cmd = exec.Command("chatq", args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errOut
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		if p.running() {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// interrupt sends SIGINT and returns the exit code, or -1 when the process
// has not ended a minute later (it is then killed).
func (p *proc) interrupt() int {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
		return p.code
	case <-time.After(time.Minute):
		p.quit()
		return -1
	}
}

// unignoreInterrupt makes the chatq processes the tests start take SIGINT
// as a terminal's Ctrl-C would have them: a test binary started with SIGINT
// ignored (a shell starts its background jobs so) would pass that on to
// every child, and a child ignores a SIGINT that comes before it begins to
// handle the signal (as it starts) instead of ending, so that a test that
// interrupts it waits in vain. Catching SIGINT here, into a channel nobody
// reads, keeps this process deaf to it as it was, while a child starts with
// SIGINT's default action. A process that does not ignore SIGINT is left
// as it is, so that Ctrl-C stops a test run.
func unignoreInterrupt() {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return // not Linux: nothing known
	}
	for line := range strings.Lines(string(status)) {
		mask, ok := strings.CutPrefix(line, "SigIgn:")
		if !ok {
			continue
		}
		bits, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
		if err == nil && bits&(1<<(uint(syscall.SIGINT)-1)) != 0 {
			signal.Notify(make(chan os.Signal, 1), os.Interrupt)
		}
		return
	}
}

// interruptedAtStart says whether the process ended by SIGINT itself: it
// was interrupted before it handled the signal (as it started), and so did
// nothing yet.
func (p *proc) interruptedAtStart() bool {
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}

// quit ends a hung process with SIGQUIT, so that its stderr shows where
// each goroutine was, or SIGKILL ten seconds later.
func (p *proc) quit() {
	_ = p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) String() string {
	code := "running"
	if !p.running() {
		code = fmt.Sprintf("exit %d", p.code)
	}
	return fmt.Sprintf("chatq %s: %s\nstderr: %s", strings.Join(p.args, " "), code, p.errOut.String())
}

// jsonLines decodes each line of s that is a JSON object into a new T.
func jsonLines[T any](s string) []T {
	var out []T
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v T
		if json.Unmarshal(sc.Bytes(), &v) == nil {
			out = append(out, v)
		}
	}
	return out
}

// tally counts the deliveries of what was sent: lost are sent and never
// delivered, dups delivered more than once, strays delivered and never sent
// (by a command that failed: its write may have applied).
type tally struct {
	mu        sync.Mutex
	sent      map[string]bool
	delivered map[string]int
}

func newTally() *tally { return &tally{sent: map[string]bool{}, delivered: map[string]int{}} }

func (t *tally) send(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sent[id] = true
}

func (t *tally) deliver(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.delivered[id]++
}

// reset forgets the deliveries, to count them again from the consumers'
// whole output.
func (t *tally) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.delivered = map[string]int{}
}

// counts returns how many were sent, delivered (counting each once), lost,
// delivered more than once, and delivered without being sent.
func (t *tally) counts() (sent, delivered, lost, dups, strays int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l, d, s := t.odds()
	return len(t.sent), len(t.delivered), len(l), len(d), len(s)
}

// odd names the ids lost, duplicated or delivered without being sent (at
// most 20 of each), for a failing test's message.
func (t *tally) odd() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lost, dups, strays := t.odds()
	first := func(ids []string) []string { return ids[:min(len(ids), 20)] }
	return fmt.Sprintf("lost %v, duplicated %v, not sent %v", first(lost), first(dups), first(strays))
}

// odds returns, sorted, the ids sent but not delivered, delivered more than
// once, and delivered without being sent. t.mu is held.
func (t *tally) odds() (lost, dups, strays []string) {
	for id := range t.sent {
		switch n := t.delivered[id]; {
		case n == 0:
			lost = append(lost, id)
		case n > 1:
			dups = append(dups, id)
		}
	}
	for id := range t.delivered {
		if !t.sent[id] {
			strays = append(strays, id)
		}
	}
	slices.Sort(lost)
	slices.Sort(dups)
	slices.Sort(strays)
	return lost, dups, strays
}

// waitUntil polls cond until it holds or a generous deadline passes (a
// deadline for a hang, not a performance budget), reporting which.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// countDelivered counts again, from their output so far, the chat messages
// a `chat watch -o json` printed and the jobs a `queue work -o json` acked.
func countDelivered(watch, work *proc, chats, jobs *tally) {
	chats.reset()
	for _, m := range jsonLines[struct{ Message string }](watch.out.String()) {
		chats.deliver(m.Message)
	}
	jobs.reset()
	for _, o := range jsonLines[struct {
		ID    string
		Acked bool
	}](work.out.String()) {
		if o.Acked {
			jobs.deliver(o.ID)
		}
	}
}
