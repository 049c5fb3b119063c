//go:build !race

package e2e

import (
	"context"
	"fmt"

	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// TestLiveReshard moves, live and one key at a time, the cluster slots that
// hold a chat (and its member's index of chats), a queue and a sharded
// list, several times each, while chatq processes produce and consume all
// three: `chat send` and `chat watch --mark`, `queue push` and `queue work
// --concurrency 2`, `list rpush` and `list blpop`. Meanwhile clients meet
// ASK (a key already moved), TRYAGAIN (a script whose keys are split between
// the nodes) and MOVED (the slot's new owner); chatq must follow or retry
// each: no command may fail, nothing may be lost or delivered twice, and
// the long-running commands must still run at the end.
//
// Not under -race: what it checks happens in the chatq processes, and a
// race-built binary in each would only slow it down (the in-process tests of
// internal/cli/conn cover the same paths under -race).
//
// Run alone: go test -run TestLiveReshard -count=1 -v .
func TestLiveReshard(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	env := chatqEnv(t, "CHATQ_URL="+c.URL(), "CHATQ_CLUSTER=true", "CHATQ_PREFIX=t:")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	chats, jobs, items := newTally(), newTally(), newTally()
	patterns := []struct {
		name string
		*tally
	}{{"chat", chats}, {"queue", jobs}, {"list", items}}
	slotKeys := []string{"t:chat:{room}", "t:seen:{jeff}", "t:rsmq:{jobs}", "t:{items}:first"}

	// The list has shards of 3 items and starts with a backlog, so that its
	// scripts read and write shard keys they do not declare (only the
	// list's five keys are), which move one by one like the others.
	var backlog strings.Builder
	for i := range 60 {
		fmt.Fprintf(&backlog, "b%d\n", i)
		items.send("b" + strconv.Itoa(i))
	}
	if r := runStdin(ctx, env, backlog.String(), "list", "rpush", "items", "--shard-size", "4", "-"); r.code != 0 {
		t.Fatal(r)
	}
	mustRun(t, env, "queue", "create", "jobs")
	mustRun(t, env, "chat", "create", "--from", "joe", "--to", "jeff", "--id", "room")
	watch := startChatq(t, env, "-o", "json", "chat", "watch", "jeff", "--mark", "--poll", "1s")
	work := startChatq(t, env, "-o", "json", "queue", "work", "jobs", "--concurrency", "2", "--", "sh", "-c", "cat >/dev/null")

	var mu sync.Mutex
	var failed []result
	fail := func(r result) {
		mu.Lock()
		defer mu.Unlock()
		failed = append(failed, r)
	}

	// Producers, until the migrations are over.
	var producing atomic.Bool
	producing.Store(true)
	var producers sync.WaitGroup
	produce := func(name string, args func(i int) []string, sent func(i int, r result)) {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for i := 0; producing.Load(); i++ {
				r := runOnce(ctx, env, args(i)...)
				if r.code != 0 {
					fail(r)
					continue
				}
				sent(i, r)
			}
		}()
	}
	produce("chat", func(i int) []string { return []string{"chat", "send", "room", "--from", "joe", "m" + strconv.Itoa(i)} },
		func(i int, r result) { chats.send("m" + strconv.Itoa(i)) })
	produce("queue", func(i int) []string { return []string{"queue", "push", "jobs", "j" + strconv.Itoa(i)} },
		func(i int, r result) { jobs.send(strings.TrimSpace(r.stdout)) })
	// A list's scripts wait out its slot's move (pkg/shardlist declines ASK
	// for them): when its five keys move first, a push waits for the slot's
	// last key (up to 20 keys, 150 ms apart, in the runs measured): --timeout 10s.
	produce("list", func(i int) []string {
		return []string{"list", "rpush", "items", "i" + strconv.Itoa(i), "--timeout", "10s"}
	},
		func(i int, r result) { items.send("i" + strconv.Itoa(i)) })

	// Two list consumers, each a loop of blocking pops.
	var popping atomic.Bool
	popping.Store(true)
	var consumers sync.WaitGroup
	var waiting sync.Map // *proc -> true: the pops in progress
	for range 2 {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			for popping.Load() {
				p := startChatq(t, env, "list", "blpop", "items", "--wait", "0")
				waiting.Store(p, true)
				<-p.done
				waiting.Delete(p)
				r := result{args: p.args, code: p.code, stdout: p.out.String(), stderr: p.errOut.String()}
				switch {
				case r.code == 0:
					items.deliver(strings.TrimSuffix(r.stdout, "\n"))
				case (r.code == 130 || p.interruptedAtStart()) && !popping.Load():
					// interrupted at the end, waiting (or before it
					// handled SIGINT: it had not begun; an item it took
					// would show as lost)
				default:
					fail(r)
				}
			}
		}()
	}

	// The migrations: each slot to another master, key by key, pausing
	// after each key so that the slot stays split for a while.
	// Traffic first, so that every slot has keys to move.
	if !waitUntil(time.Minute, func() bool {
		for _, p := range patterns {
			if sent, _, _, _, _ := p.counts(); sent < 5 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the producers did not get going: %v", failed)
	}
	rounds := 3
	var migrations int
	for round := range rounds {
		for _, key := range slotKeys {
			slot, err := c.Slot(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			owner, err := c.Owner(ctx, slot)
			if err != nil {
				t.Fatal(err)
			}
			masters := c.Masters(ctx)
			var dst *redistest.Server
			for i, m := range masters {
				if m == owner {
					dst = masters[(i+1+round%(len(masters)-1))%len(masters)]
				}
			}
			if dst == nil || dst == owner {
				t.Fatalf("no other master for slot %d (owner %s, masters %d)", slot, owner.Addr(), len(masters))
			}
			moved := 0
			err = c.MigrateSlot(ctx, slot, dst, redistest.MigrateOptions{AfterKey: func() {
				moved++
				time.Sleep(150 * time.Millisecond)
			}})
			if err != nil {
				t.Fatalf("migrate slot %d of %s: %v", slot, key, err)
			}
			migrations++
			t.Logf("round %d: slot %d (%s) %s -> %s, %d keys", round, slot, key, owner.Addr(), dst.Addr(), moved)
		}
	}
	producing.Store(false)
	producers.Wait()

	// Everything sent is consumed in the end.
	parse := func() { countDelivered(watch, work, chats, jobs) }
	all := func() bool {
		parse()
		for _, p := range patterns {
			if _, _, lost, _, _ := p.counts(); lost > 0 {
				return false
			}
		}
		return true
	}
	if !waitUntil(2*time.Minute, all) {
		t.Errorf("not everything sent was consumed within 2 minutes")
	}
	popping.Store(false)
	for _, p := range []*proc{watch, work} {
		if !p.running() {
			t.Errorf("ended during the migrations: %s", p)
		}
	}
	// A pop may start, or be recorded in waiting, after a sweep: sweep
	// until both loops have ended.
	stopped := make(chan struct{})
	go func() { consumers.Wait(); close(stopped) }()
	for swept := false; !swept; {
		waiting.Range(func(k, _ any) bool {
			if p := k.(*proc); p.running() {
				p.interrupt()
			}
			return true
		})
		select {
		case <-stopped:
			swept = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, p := range []*proc{watch, work} {
		if code := p.interrupt(); code != 0 {
			t.Errorf("exit %d on interrupt: %s", code, p)
		}
	}
	parse()

	t.Logf("%d migrations; the nodes answered %v", migrations, c.Redirects(ctx))
	for _, f := range failed {
		t.Errorf("failed: %s", f)
	}
	for _, p := range patterns {
		sent, delivered, lost, dups, strays := p.counts()
		t.Logf("%s: %d sent, %d delivered, %d lost, %d duplicated, %d delivered but not sent", p.name, sent, delivered, lost, dups, strays)
		if lost > 0 || dups > 0 || strays > 0 || sent == 0 {
			t.Errorf("%s: %d sent, %d lost, %d duplicated, %d delivered but not sent: %s", p.name, sent, lost, dups, strays, p.odd())
			if p.tally == items {
				slot, _ := c.Slot(ctx, "t:{items}:first")
				t.Logf("the list's slot %d now:\n%s", slot, c.DumpSlot(context.Background(), slot))
			}
		}
	}
	if t.Failed() {
		t.Logf("watch: %s\nwork: %s", watch, work)
	}
}
