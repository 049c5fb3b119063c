//go:build !race

package main

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/redistest"
)

// TestLongRunningThroughRestarts runs every long-running command at once
// against one redis-server with an append-only file (fsync always): `list
// blpop` and `list brpop` (each a loop of processes, one item each), `chat
// watch --mark`, `queue work` and `queue poll --wait` (a loop, each message
// acked by the test), and restarts the server ten times. Before each
// restart everything sent so far has been delivered, so every command is
// waiting when its connections break; after it, each must carry on with the
// next items: none may exit (least of all 4, "the reply was lost": the
// first request after a reconnect must not go out on a connection the
// outage broke), nothing may be lost or delivered twice.
//
// Not under -race, as TestLiveReshard.
//
// Run alone: go test -run TestLongRunningThroughRestarts -count=1 -v .
func TestLongRunningThroughRestarts(t *testing.T) {
	s := redistest.StartServer(t)
	env := chatqEnv(t, "CHATQ_URL="+s.URL(), "CHATQ_PREFIX=t:")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	mustRun(t, env, "queue", "create", "worked")
	mustRun(t, env, "queue", "create", "polled")
	mustRun(t, env, "chat", "create", "--from", "joe", "--to", "jeff", "--id", "room")

	watch := startChatq(t, env, "-o", "json", "chat", "watch", "jeff", "--mark", "--poll", "1s")
	work := startChatq(t, env, "-o", "json", "queue", "work", "worked", "--", "sh", "-c", "cat >/dev/null")
	// metrics --listen (issue 24) belongs here too, once it exists: start
	// `chatq metrics --listen 127.0.0.1:PORT` beside watch and work, scrape
	// /metrics after each restart until it says chatq_up 1 again, and check
	// at the end that it never exited.

	left, right, chats, jobs, polled := newTally(), newTally(), newTally(), newTally(), newTally()
	var mu sync.Mutex
	var failed []result
	fail := func(r result) {
		mu.Lock()
		defer mu.Unlock()
		failed = append(failed, r)
	}

	// The loops of one-shot long-running commands: each process waits,
	// then takes one item.
	var looping atomic.Bool
	looping.Store(true)
	var loops sync.WaitGroup
	var waiting sync.Map // *proc -> true
	loop := func(args []string, got func(r result)) {
		loops.Add(1)
		go func() {
			defer loops.Done()
			for looping.Load() {
				p := startChatq(t, env, args...)
				waiting.Store(p, true)
				<-p.done
				waiting.Delete(p)
				r := result{args: p.args, code: p.code, stdout: p.out.String(), stderr: p.errOut.String()}
				switch {
				case r.code == 0:
					got(r)
				case r.code == 130 && !looping.Load():
					// interrupted at the end, waiting
				default:
					fail(r)
				}
			}
		}()
	}
	loop([]string{"list", "blpop", "left", "--wait", "0"}, func(r result) { left.deliver(strings.TrimSuffix(r.stdout, "\n")) })
	loop([]string{"list", "brpop", "right", "--wait", "0"}, func(r result) { right.deliver(strings.TrimSuffix(r.stdout, "\n")) })
	loop([]string{"-o", "json", "queue", "poll", "polled", "--wait", "10m"}, func(r result) {
		for _, m := range jsonLines[[]struct{ ID, Receipt string }](r.stdout) {
			for _, msg := range m {
				// Delivered once acked, so that no restart comes
				// between the two.
				if a := runOnce(ctx, env, "queue", "ack", "polled", msg.Receipt); a.code != 0 {
					fail(a)
				}
				polled.deliver(msg.ID)
			}
		}
	})

	parse := func() {
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
	delivered := func() bool {
		parse()
		for _, tl := range []*tally{left, right, chats, jobs, polled} {
			if _, _, lost, _, _ := tl.counts(); lost > 0 {
				return false
			}
		}
		return true
	}
	send := func(r result, tl *tally, id string) {
		if r.code != 0 {
			fail(r)
			return
		}
		tl.send(id)
	}

	const restarts = 10
	for round := 0; round <= restarts; round++ {
		if round > 0 {
			// Down for a moment, or a while: a while, and the waits
			// notice and reconnect again and again meanwhile.
			s.Kill()
			time.Sleep(time.Duration(round%4) * 400 * time.Millisecond)
			s.Start()
		}
		for i := range 3 {
			item := "r" + strconv.Itoa(round) + "-" + strconv.Itoa(i)
			send(runOnce(ctx, env, "list", "rpush", "left", item), left, item)
			send(runOnce(ctx, env, "list", "rpush", "right", item), right, item)
			send(runOnce(ctx, env, "chat", "send", "room", "--from", "joe", item), chats, item)
			r := runOnce(ctx, env, "queue", "push", "worked", item)
			send(r, jobs, strings.TrimSpace(r.stdout))
			r = runOnce(ctx, env, "queue", "push", "polled", item)
			send(r, polled, strings.TrimSpace(r.stdout))
		}
		if !waitUntil(2*time.Minute, delivered) {
			waiting.Range(func(k, _ any) bool {
				p := k.(*proc)
				p.quit()
				t.Logf("waiting: %s", p)
				return true
			})
			t.Fatalf("round %d: not everything sent was delivered within 2 minutes; failed so far: %v\nwatch: %s\nwork: %s", round, failed, watch, work)
		}
		// Every command is back to waiting before the next restart.
		for _, p := range []*proc{watch, work} {
			if !p.running() {
				t.Fatalf("round %d: ended: %s", round, p)
			}
		}
	}

	looping.Store(false)
	waiting.Range(func(k, _ any) bool {
		if p := k.(*proc); p.running() {
			p.interrupt()
		}
		return true
	})
	loops.Wait()
	for _, p := range []*proc{watch, work} {
		if code := p.interrupt(); code != 0 {
			t.Errorf("exit %d on interrupt: %s", code, p)
		}
	}
	parse()
	for _, f := range failed {
		t.Errorf("failed: %s", f)
	}
	for name, tl := range map[string]*tally{"blpop": left, "brpop": right, "chat watch": chats, "queue work": jobs, "queue poll --wait": polled} {
		sent, _, lost, dups, strays := tl.counts()
		t.Logf("%s: %d sent, %d lost, %d duplicated, %d delivered but not sent", name, sent, lost, dups, strays)
		if lost > 0 || dups > 0 || strays > 0 || sent == 0 {
			t.Errorf("%s: %d sent, %d lost, %d duplicated, %d delivered but not sent", name, sent, lost, dups, strays)
		}
	}
	t.Logf("watch's stderr: %s", watch.errOut.String())
}
