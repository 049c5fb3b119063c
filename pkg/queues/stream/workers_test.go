package stream_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// Workers read, claim each other's idle entries and ack while chatq
// dead-letters the entries that keep failing (poison); once fixed, the
// poison is redriven and processed. Counted by successful XACKs (one per
// entry per group, whoever held it): every entry exactly once.
func TestWorkersDeadLetterRedrive(t *testing.T) {
	f := newFixture(t)
	const total, poisonEvery = 300, 10
	f.fill("jobs", total)
	f.group("jobs", "g")
	key := f.prefix + "jobs"
	q := f.open("jobs", "g")

	var mu sync.Mutex
	acked := map[string]int{}
	var fixed atomic.Bool
	// work handles entries as a worker would: poison fails (no ack) until
	// fixed; the rest is acked, and counted when the ack took.
	work := func(ctx context.Context, msgs []redis.XMessage) {
		for _, m := range msgs {
			n := m.Values["n"].(string)
			var i int
			fmt.Sscan(n, &i)
			if i%poisonEvery == 7 && !fixed.Load() {
				continue
			}
			if k, err := f.rdb.XAck(ctx, key, "g", m.ID).Result(); err == nil && k == 1 {
				mu.Lock()
				acked[n]++
				mu.Unlock()
			}
		}
	}
	run := func(ctx context.Context, name string) {
		for ctx.Err() == nil {
			res, err := f.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: name,
				Streams: []string{key, ">"}, Count: 10, Block: 20 * time.Millisecond}).Result()
			if err == nil {
				work(ctx, res[0].Messages)
			}
			// Failed entries come back to whoever claims them (a delivery).
			msgs, _, err := f.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: key, Group: "g", Consumer: name,
				MinIdle: 30 * time.Millisecond, Start: "0-0", Count: 10}).Result()
			if err == nil {
				work(ctx, msgs)
			}
		}
	}
	workers := func(ctx context.Context) *sync.WaitGroup {
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Add(1)
			go func() { defer wg.Done(); run(ctx, fmt.Sprintf("w%d", i)) }()
		}
		return &wg
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}

	ctx, stop := context.WithCancel(f.ctx)
	wg := workers(ctx)
	// chatq dead-letters until the group is empty: every entry acked or
	// dead. (A good entry whose worker stalled long enough to be claimed
	// three times is dead-lettered too, and acked after the redrive.)
	deadline := time.Now().Add(30 * time.Second)
	dead := 0
	for {
		if time.Now().After(deadline) {
			stop()
			wg.Wait()
			t.Fatalf("dead-lettered %d, acked %d: not all of %d", dead, count(), total)
		}
		res, err := q.DeadLetter(f.ctx, queues.DeadLetterOptions{MinAttempts: 3})
		if err != nil {
			t.Fatal(err)
		}
		dead += len(res.Done)
		if c := f.counts(q); *c.Inflight == 0 && *c.Ready == 0 && count()+dead == total {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	wg.Wait()
	if c := f.counts(q); *c.Dead != int64(dead) || *c.Inflight != 0 || *c.Ready != 0 || dead < total/poisonEvery {
		t.Fatalf("before redrive: dead %d (moved %d) inflight %d ready %d", *c.Dead, dead, *c.Inflight, *c.Ready)
	}

	fixed.Store(true)
	res, err := q.Redrive(f.ctx, 0)
	if err != nil || len(res.Done) != dead {
		t.Fatalf("redrive: %d, %v", len(res.Done), err)
	}
	ctx, stop = context.WithCancel(f.ctx)
	wg = workers(ctx)
	eventually(t, "every entry acked", func() bool { return count() == total })
	stop()
	wg.Wait()
	for i := range total {
		if n := acked[fmt.Sprint(i)]; n != 1 {
			t.Errorf("entry n=%d acked %d times", i, n)
		}
	}
	c := f.counts(q)
	if *c.Dead != 0 || *c.Inflight != 0 || *c.Ready != 0 {
		t.Errorf("after: dead %d inflight %d ready %d", *c.Dead, *c.Inflight, *c.Ready)
	}
	t.Logf("%d entries, %d dead-lettered and redriven, each acked once", total, dead)
}
