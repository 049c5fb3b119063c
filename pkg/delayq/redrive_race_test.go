package delayq_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
)

// TestRedriveUnderConsumers runs redrives of a dead-letter queue in a loop
// while consumers receive from both queues: on the source, half the
// messages are acked and half given back (so the next receive dead-letters
// them); on the dead-letter queue 30% are acked and the rest held a moment
// and given back (in flight meanwhile, so the redrive must leave them).
// Atomic snapshots of both queues (MULTI) check throughout that no id is in
// both queues, that every id present has its body there, and that every
// id absent from both was acked; at the end every id was acked exactly
// once and both queues are empty. CHATQ_REDRIVE_RACE_N sets the number of
// messages (default 300 embedded, 1,000 on a real server).
func TestRedriveUnderConsumers(t *testing.T) {
	t.Parallel()
	redistest.SlowOnEmbedded(t, "consumers and redrives racing over 300 messages: ~2 s of CPU")
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		total := 300
		if b.Real() {
			total = 1000
		}
		if n, err := strconv.Atoi(os.Getenv("CHATQ_REDRIVE_RACE_N")); err == nil && n > 0 {
			total = n // for a longer run by hand
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := newClient(t, b)
		mustCreate(t, c, "dlq", delayq.Attributes{VT: time.Minute})
		mustCreate(t, c, "src", delayq.Attributes{VT: time.Minute, MaxReceives: 1, DeadLetter: "dlq"})
		ids := map[string]bool{}
		for i := range total {
			ids[mustPush(t, c, "src", fmt.Sprint("job ", i), delayq.PushOptions{})] = true
		}

		var mu sync.Mutex
		acked := map[string]int{}   // successful acks per id
		acking := map[string]bool{} // acks sent, reply not yet seen
		var srcAcks, dlqAcks, deadLettered, released atomic.Int64
		var failures []string
		fail := func(format string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			if len(failures) < 10 {
				failures = append(failures, fmt.Sprintf(format, a...))
			}
			cancel()
		}
		ack := func(q string, m delayq.Message) bool {
			mu.Lock()
			acking[m.ID] = true
			mu.Unlock()
			_, err := c.Ack(ctx, q, m.Receipt)
			mu.Lock()
			defer mu.Unlock()
			delete(acking, m.ID)
			if err != nil {
				if ctx.Err() == nil {
					failures = append(failures, fmt.Sprintf("ack %s in %s: %v", m.ID, q, err))
					cancel()
				}
				return false
			}
			acked[m.ID]++
			return true
		}
		done := func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acked) == total
		}

		var wg sync.WaitGroup
		consumer := func(q string, n int, ackShare float64, hold bool, counter *atomic.Int64) {
			rng := rand.New(rand.NewPCG(rand.Uint64(), 0))
			for ctx.Err() == nil && !done() {
				r, moved, _, err := receiveEvents(ctx, c, q, delayq.ReceiveOptions{N: n})
				if err != nil {
					if ctx.Err() == nil {
						fail("receive %s: %v", q, err)
					}
					return
				}
				deadLettered.Add(int64(moved))
				var back []delayq.Message
				for _, m := range r {
					if rng.Float64() < ackShare {
						if ack(q, m) {
							counter.Add(1)
						}
					} else {
						back = append(back, m)
					}
				}
				if hold && len(back) > 0 {
					time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
				}
				for _, m := range back {
					if _, err := c.ChangeVisibility(ctx, q, m.Receipt, 0); err != nil {
						if ctx.Err() == nil {
							fail("give back %s in %s: %v", m.ID, q, err)
						}
						return
					}
					released.Add(1)
				}
				if len(r) == 0 {
					time.Sleep(time.Millisecond) // nothing due: let the others run
				}
			}
		}
		for range 4 {
			wg.Go(func() { consumer("src", 10, 0.5, false, &srcAcks) })
		}
		for range 2 {
			wg.Go(func() { consumer("dlq", 5, 0.3, true, &dlqAcks) })
		}

		var redrives, moved, skipped atomic.Int64
		wg.Go(func() {
			for ctx.Err() == nil && !done() {
				res, err := c.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "src"})
				if err != nil {
					if ctx.Err() == nil {
						fail("redrive: %v", err)
					}
					return
				}
				redrives.Add(1)
				moved.Add(int64(res.Moved))
				skipped.Add(int64(res.InFlight))
				if len(res.Exists)+len(res.TooLong) > 0 {
					fail("redrive left %v %v", res.Exists, res.TooLong)
				}
			}
		})

		var snapshots atomic.Int64
		wg.Go(func() {
			for ctx.Err() == nil && !done() {
				var zs [2]*redis.StringSliceCmd
				var hs [2]*redis.MapStringStringCmd
				_, err := b.Client.TxPipelined(ctx, func(p redis.Pipeliner) error {
					for i, q := range []string{"src", "dlq"} {
						zs[i] = p.ZRange(ctx, b.Prefix+"rsmq:"+q, 0, -1)
						hs[i] = p.HGetAll(ctx, b.Prefix+"rsmq:"+q+":Q")
					}
					return nil
				})
				if err != nil {
					if ctx.Err() == nil {
						fail("snapshot: %v", err)
					}
					return
				}
				snapshots.Add(1)
				where := map[string]string{}
				for i, q := range []string{"src", "dlq"} {
					for _, id := range zs[i].Val() {
						if other, ok := where[id]; ok {
							fail("%s is in %s and %s at once", id, other, q)
						}
						where[id] = q
						if _, ok := hs[i].Val()[id]; !ok {
							fail("%s is in %s without its body", id, q)
						}
					}
				}
				mu.Lock()
				for id := range ids {
					if where[id] == "" && acked[id] == 0 && !acking[id] {
						failures = append(failures, fmt.Sprintf("%s is in neither queue and was not acked", id))
						cancel()
					}
				}
				mu.Unlock()
			}
		})

		// A guard against a hang, not a time budget: the run takes a few
		// seconds.
		stop := time.AfterFunc(5*time.Minute, func() { fail("not all acked after 5 minutes") })
		wg.Wait()
		stop.Stop()
		if len(failures) > 0 {
			t.Fatalf("%d failures, first: %v", len(failures), failures)
		}
		for id := range ids {
			if acked[id] != 1 {
				t.Errorf("%s acked %d times", id, acked[id])
			}
		}
		for _, q := range []string{"src", "dlq"} {
			s, err := c.Stats(context.Background(), q)
			if err != nil || s.Messages != 0 {
				t.Errorf("%s at the end: %+v %v", q, s, err)
			}
			checkIndex(t, b, q)
		}
		t.Logf("%d messages: %d acked from src, %d from dlq; %d dead-lettered, %d redriven in %d redrives (%d in-flight skips), %d given back; %d snapshots, 0 violations",
			total, srcAcks.Load(), dlqAcks.Load(), deadLettered.Load(), moved.Load(), redrives.Load(), skipped.Load(), released.Load(), snapshots.Load())
		if moved.Load() == 0 || skipped.Load() == 0 || deadLettered.Load() == 0 {
			t.Errorf("the run did not exercise redrive: %d moved, %d skipped in flight, %d dead-lettered", moved.Load(), skipped.Load(), deadLettered.Load())
		}
	})
}
