package delayq_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// Stats names the ready message that has waited longest: the lowest
// visible-at at or before now, whatever order the messages were sent in.
func TestStatsOldestReady(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "jobs", delayq.Attributes{})
		s, err := c.Stats(ctx, "jobs")
		if err != nil || s.OldestReady != nil || s.OldestReadyAge != 0 {
			t.Fatalf("empty queue: %+v %v", s, err)
		}
		mustPush(t, c, "jobs", "later", delayq.PushOptions{Delay: time.Hour})
		if s, _ = c.Stats(ctx, "jobs"); s.OldestReady != nil {
			t.Fatalf("only a delayed message: %+v", s.OldestReady)
		}
		mustPush(t, c, "jobs", "now", delayq.PushOptions{})
		// Sent after "now", but due since 2001: it has waited longest.
		due := time.Unix(1_000_000_000, 0)
		old := mustPush(t, c, "jobs", "long due", delayq.PushOptions{At: due})
		s, err = c.Stats(ctx, "jobs")
		if err != nil {
			t.Fatal(err)
		}
		if s.OldestReady.ID != old || !s.OldestReady.VisibleAt.Equal(due) || s.OldestReadyAge != s.Now.Sub(due) {
			t.Fatalf("oldest ready = %+v age %s, want %s due %s", s.OldestReady, s.OldestReadyAge, old, due)
		}
		if !s.OldestReady.Sent.Equal(sentAt(old)) || s.Now.Sub(s.OldestReady.Sent) > time.Minute {
			t.Fatalf("sent = %s", s.OldestReady.Sent)
		}
		// Received, it is no longer ready; the next one is.
		if _, err := c.Receive(ctx, "jobs", delayq.ReceiveOptions{}); err != nil {
			t.Fatal(err)
		}
		if s, _ = c.Stats(ctx, "jobs"); s.OldestReady == nil || s.OldestReady.ID == old || s.OldestReadyAge > time.Minute {
			t.Fatalf("after receiving the oldest: %+v %s", s.OldestReady, s.OldestReadyAge)
		}
	})
}

// A guarded purge or delete refuses a queue holding more than allowed and
// changes nothing; within the limit it works as the unguarded one.
func TestGuardedDeleteAndPurge(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "jobs", delayq.Attributes{})
		for range 3 {
			mustPush(t, c, "jobs", "x", delayq.PushOptions{})
		}
		before := dump(t, b.Client, b.Prefix)
		if n, err := c.Purge(ctx, "jobs", 0); n != 3 || !errors.Is(err, delayq.ErrQueueNotEmpty) {
			t.Fatalf("purge at most 0: %d %v", n, err)
		}
		if n, err := c.Delete(ctx, "jobs", 2); n != 3 || !errors.Is(err, delayq.ErrQueueNotEmpty) {
			t.Fatalf("delete at most 2: %d %v", n, err)
		}
		if after := dump(t, b.Client, b.Prefix); after != before {
			t.Fatalf("a refused purge or delete changed the data:\n%s\n---\n%s", before, after)
		}
		if n, err := c.Purge(ctx, "jobs", 3); err != nil || n != 3 {
			t.Fatalf("purge at most 3: %d %v", n, err)
		}
		if n, err := c.Purge(ctx, "jobs", 0); err != nil || n != 0 {
			t.Fatalf("purge of an empty queue at most 0: %d %v", n, err)
		}
		mustPush(t, c, "jobs", "x", delayq.PushOptions{})
		if n, err := c.Delete(ctx, "jobs", 1); err != nil || n != 1 {
			t.Fatalf("delete at most 1: %d %v", n, err)
		}
		if _, err := c.Delete(ctx, "jobs", 0); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("delete of a deleted queue: %v", err)
		}
		if _, err := c.Purge(ctx, "jobs", 0); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("purge of a deleted queue: %v", err)
		}
	})
}

// The guard is atomic with the destruction: pushes racing guarded purges
// and deletes of an empty queue are never destroyed. Every push that
// succeeded is in the queue at the end (a delete that wins makes the later
// pushes fail with ErrQueueNotFound, so nothing is lost unseen).
func TestGuardRacesPushes(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		for round := range 20 {
			mustCreate(t, c, "race", delayq.Attributes{})
			var pushed, refused, emptied atomic.Int64
			var wg sync.WaitGroup
			stop := make(chan struct{})
			wg.Go(func() {
				for i := 0; i < 30; i++ {
					_, err := c.Push(ctx, "race", "x", delayq.PushOptions{})
					switch {
					case err == nil:
						pushed.Add(1)
					case errors.Is(err, delayq.ErrQueueNotFound):
						// deleted while empty
					default:
						t.Error(err)
					}
				}
				close(stop)
			})
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					var err error
					if round%2 == 0 {
						_, err = c.Purge(ctx, "race", 0)
					} else {
						_, err = c.Delete(ctx, "race", 0)
					}
					switch {
					case errors.Is(err, delayq.ErrQueueNotEmpty):
						refused.Add(1)
					case err == nil:
						emptied.Add(1)
					case errors.Is(err, delayq.ErrQueueNotFound):
					default:
						t.Error(err)
					}
				}
			})
			wg.Wait()
			var have int64
			if s, err := c.Stats(ctx, "race"); err == nil {
				have = s.Messages
			} else if !errors.Is(err, delayq.ErrQueueNotFound) {
				t.Fatal(err)
			}
			if have != pushed.Load() {
				t.Fatalf("round %d: %d pushes succeeded, %d messages in the queue (%d guarded calls refused, %d emptied an empty queue)",
					round, pushed.Load(), have, refused.Load(), emptied.Load())
			}
			if round == 0 {
				t.Logf("purges: %d pushes, %d refused, %d of an empty queue", pushed.Load(), refused.Load(), emptied.Load())
			}
			c.Delete(ctx, "race", -1)
		}
	})
}

// DeadLetterSources finds the queues whose policy names a queue; StatsEach
// reads many queues' stats, keeps per-queue errors, and says which
// dead-letter queues are missing; a receive past the limit with the
// dead-letter queue gone keeps the message in its queue and delivers it.
func TestDeadLetterGone(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dead", delayq.Attributes{})
		mustCreate(t, c, "a", delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"})
		mustCreate(t, c, "b", delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"})
		mustCreate(t, c, "other", delayq.Attributes{})
		mustCreate(t, c, "c", delayq.Attributes{MaxReceives: 1, DeadLetter: "other"})
		src, err := c.DeadLetterSources(ctx, "dead")
		if err != nil || strings.Join(src, ",") != "a,b" {
			t.Fatalf("sources of dead: %v %v", src, err)
		}
		if src, _ := c.DeadLetterSources(ctx, "a"); len(src) != 0 {
			t.Fatalf("sources of a: %v", src)
		}
		id := mustPush(t, c, "a", "poison", delayq.PushOptions{})
		if r, _, missing, err := receiveEvents(ctx, c, "a", delayq.ReceiveOptions{VT: -1}); err != nil || len(r) != 1 || missing {
			t.Fatalf("first receive: %+v %v", r, err)
		}
		if _, err := c.Delete(ctx, "dead", -1); err != nil {
			t.Fatal(err)
		}
		s, err := c.Stats(ctx, "a")
		if err != nil || !s.DeadLetterMissing || s.DeadLetter != "dead" {
			t.Fatalf("stats of a: %+v %v", s, err)
		}
		if s, _ := c.Stats(ctx, "c"); s.DeadLetterMissing {
			t.Fatal("c's dead-letter queue exists")
		}
		// Past the limit, with the dead-letter queue gone: delivered, kept.
		for rc := int64(2); rc <= 3; rc++ {
			r, moved, missing, err := receiveEvents(ctx, c, "a", delayq.ReceiveOptions{VT: -1})
			if err != nil || len(r) != 1 || r[0].ID != id || r[0].RC != rc || moved != 0 || !missing {
				t.Fatalf("receive %d past the limit: %+v %v", rc, r, err)
			}
		}
		if s, _ := c.Stats(ctx, "a"); s.Messages != 1 {
			t.Fatalf("the message left its queue: %+v", s)
		}
		// A fresh client (as each CLI process is) too.
		r, _, missing, err := receiveEvents(ctx, newClient(t, b), "a", delayq.ReceiveOptions{Pop: true})
		if err != nil || len(r) != 1 || r[0].ID != id || !missing {
			t.Fatalf("fresh client: %+v %v", r, err)
		}

		b.Client.Set(ctx, b.Prefix+"rsmq:broken:Q", "x", 0)
		b.Client.SAdd(ctx, b.Prefix+"rsmq:QUEUES", "broken", "ghost")
		res, err := c.StatsEach(ctx, []string{"a", "broken", "c", "ghost", "other"})
		if err != nil || len(res) != 5 {
			t.Fatalf("StatsEach: %v %v", res, err)
		}
		if res[0].Err != nil || !res[0].DeadLetterMissing || res[2].Err != nil || res[2].DeadLetterMissing || res[4].Err != nil {
			t.Fatalf("StatsEach: %+v", res)
		}
		if res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "WRONGTYPE") || !errors.Is(res[3].Err, delayq.ErrQueueNotFound) {
			t.Fatalf("StatsEach errors: %v, %v", res[1].Err, res[3].Err)
		}
	})
}

// StatsEach pages: more queues than one pipeline holds come back in order;
// DeadLetterSources pages the registry past one SSCAN step.
func TestStatsEachPages(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dead", delayq.Attributes{})
		var names []string
		for i := range 130 {
			q := fmt.Sprintf("q%03d", i)
			cfg := delayq.Attributes{}
			if i%3 == 0 {
				cfg = delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"}
			}
			mustCreate(t, c, q, cfg)
			for range i % 4 {
				mustPush(t, c, q, "x", delayq.PushOptions{})
			}
			names = append(names, q)
		}
		// The pipeline runs the script by its SHA: after a SCRIPT FLUSH it is
		// loaded again. (Only on the embedded server, which is this test's
		// own: other tests share the real one.)
		if !b.Real() {
			if err := b.Client.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		res, err := c.StatsEach(ctx, names)
		if err != nil || len(res) != len(names) {
			t.Fatalf("%d results, %v", len(res), err)
		}
		for i, r := range res {
			if r.Err != nil || r.Name != names[i] || r.Messages != int64(i%4) {
				t.Fatalf("result %d: %+v", i, r)
			}
		}
		src, err := c.DeadLetterSources(ctx, "dead")
		if err != nil || len(src) != 44 || src[0] != "q000" || src[43] != "q129" {
			t.Fatalf("sources: %d %v %v", len(src), src, err)
		}
	})
}
