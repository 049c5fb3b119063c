package shardlist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// benchBackend is the real server when CHATQ_TEST_REDIS_URL is set, else the
// embedded one: the sharded and the plain list always share the server.
func benchBackend(b *testing.B) redistest.Backend {
	if os.Getenv("CHATQ_TEST_REDIS_URL") != "" {
		return redistest.Real(b)
	}
	return redistest.Embedded(b)
}

const benchBatch = 100

// BenchmarkPush pushes batches of 100 items (one script call per batch)
// against RPUSH of the same 100 items on a plain list. The lists are emptied
// every 50 batches so both stay under 5,000 items (10 shards).
func BenchmarkPush(b *testing.B) {
	be := benchBackend(b)
	ctx := context.Background()
	items := make([]string, benchBatch)
	args := make([]any, benchBatch)
	for i := range items {
		items[i] = fmt.Sprintf("item%04d", i)
		args[i] = items[i]
	}
	b.Run("sharded", func(b *testing.B) {
		l := mustList(b, New(be.Client, Options{Prefix: be.Prefix}), "bpush")
		for i := 0; b.Loop(); i++ {
			if i%50 == 49 {
				b.StopTimer()
				clearList(b, be, l)
				b.StartTimer()
			}
			if _, err := l.RPush(ctx, l.key, items...); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/item")
	})
	b.Run("plain", func(b *testing.B) {
		key := be.Prefix + "bpushplain"
		for i := 0; b.Loop(); i++ {
			if i%50 == 49 {
				b.StopTimer()
				be.Client.Del(ctx, key)
				b.StartTimer()
			}
			if err := be.Client.RPush(ctx, key, args...).Err(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/item")
	})
}

// BenchmarkPushStored pushes batches of 10 items onto a list already
// holding stored items (default shard size 512), popping the surplus back
// off outside the timer every 50 batches, so the list stays within 500 items
// of its starting size. Push cost must not grow with stored items. The large
// sizes run on real Redis only (filling the embedded server is slow).
func BenchmarkPushStored(b *testing.B) {
	be := benchBackend(b)
	ctx := context.Background()
	const batch = 10
	items := make([]string, batch)
	for i := range items {
		items[i] = fmt.Sprintf("item%04d", i)
	}
	for _, stored := range []int{0, 20000, 200000} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			if stored > 20000 && !be.Real() {
				b.Skip("large list: real Redis only")
			}
			l := mustList(b, New(be.Client, Options{Prefix: be.Prefix, BatchSize: 1000}), fmt.Sprint("bstored", stored))
			fill := make([]string, 1000)
			for i := range fill {
				fill[i] = fmt.Sprintf("fill%06d", i)
			}
			for n := 0; n < stored; n += len(fill) {
				if _, err := l.RPush(ctx, l.key, fill[:min(len(fill), stored-n)]...); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; b.Loop(); i++ {
				if i%50 == 49 {
					b.StopTimer()
					if _, err := l.RPop(ctx, l.key, 50*batch); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				n, err := l.RPush(ctx, l.key, items...)
				if err != nil {
					b.Fatal(err)
				}
				if n < int64(stored) {
					b.Fatalf("length %d after push onto %d items", n, stored)
				}
			}
			b.StopTimer()
			clearList(b, be, l)
		})
	}
}

// BenchmarkPop pops one item per call from a sharded list (one script call)
// against LPOP on a plain list.
func BenchmarkPop(b *testing.B) {
	be := benchBackend(b)
	ctx := context.Background()
	items := make([]string, 500)
	for i := range items {
		items[i] = fmt.Sprintf("item%04d", i)
	}
	b.Run("sharded", func(b *testing.B) {
		l := mustList(b, New(be.Client, Options{Prefix: be.Prefix}), "bpop")
		for i := 0; b.Loop(); i++ {
			if i%len(items) == 0 {
				b.StopTimer()
				if _, err := l.RPush(ctx, l.key, items...); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if _, err := l.LPop(ctx, l.key, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		key := be.Prefix + "bpopplain"
		args := toAny(items)
		for i := 0; b.Loop(); i++ {
			if i%len(items) == 0 {
				b.StopTimer()
				be.Client.RPush(ctx, key, args...)
				b.StartTimer()
			}
			if err := be.Client.LPop(ctx, key).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBlockingTimeout waits on an empty list with a 250 ms timeout and
// reports how late the wait ended (late-ms), the server's timer included.
func BenchmarkBlockingTimeout(b *testing.B) {
	be := benchBackend(b)
	ctx := context.Background()
	l := mustList(b, New(be.Client, Options{Prefix: be.Prefix}), "btimeout")
	const timeout = 250 * time.Millisecond
	var late, worst time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := l.bpop(ctx, dir(i%2), timeout); err != ErrEmpty {
			b.Fatal(err)
		}
		d := time.Since(start) - timeout
		late += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(late.Milliseconds())/float64(b.N), "late-ms")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-late-ms")
}

func clearList(tb testing.TB, be redistest.Backend, l *list) {
	lay, err := l.Layout(context.Background(), l.key)
	if err != nil {
		tb.Fatal(err)
	}
	first, last := l.keys[0], l.keys[1]
	keys := []string{first, last, l.midKey()}
	for _, s := range lay.Shards {
		keys = append(keys, s.Key)
	}
	be.Client.Del(context.Background(), keys...)
}

// TestMemoryUsage compares MEMORY USAGE of a sharded list (shards, endpoint
// and mid keys summed) with a plain LIST holding the same items, on real
// Redis (the embedded server has no MEMORY command). It logs the table that
// docs/shardlist.md quotes; run with -v to see it.
func TestMemoryUsage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	b := redistest.Real(t)
	ctx := context.Background()
	var table strings.Builder
	fmt.Fprintf(&table, "\n| items | item bytes | plain LIST | sharded (512) | sharded/plain |\n| ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range []int{1000, 100000} {
		for _, size := range []int{8, 64, 200} {
			key := fmt.Sprintf("mem%d_%d", n, size)
			l := mustList(t, New(b.Client, Options{Prefix: b.Prefix}), key)
			plain := b.Prefix + "plain" + key
			batch := make([]string, 0, 1000)
			for i := 0; i < n; i++ {
				batch = append(batch, fmt.Sprintf("%0*d", size, i))
				if len(batch) == cap(batch) || i == n-1 {
					if _, err := l.RPush(ctx, l.key, batch...); err != nil {
						t.Fatal(err)
					}
					if err := b.Client.RPush(ctx, plain, toAny(batch)...).Err(); err != nil {
						t.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			lay, err := l.Layout(ctx, l.key)
			if err != nil || lay.Length != int64(n) {
				t.Fatalf("layout: %d items, %v", lay.Length, err)
			}
			first, last := l.keys[0], l.keys[1]
			keys := []string{first, last, l.midKey()}
			for _, s := range lay.Shards {
				keys = append(keys, s.Key)
			}
			var sharded int64
			for _, k := range keys {
				sharded += memoryUsage(t, b.Client, k)
			}
			p := memoryUsage(t, b.Client, plain)
			fmt.Fprintf(&table, "| %d | %d | %d | %d (%d shards) | %.3f |\n", n, size, p, sharded, len(lay.Shards), float64(sharded)/float64(p))
			clearList(t, b, l)
			b.Client.Del(ctx, plain)
		}
	}
	t.Log(table.String())
}

func memoryUsage(t *testing.T, c *redis.Client, key string) int64 {
	t.Helper()
	n, err := c.MemoryUsage(context.Background(), key, 0).Result()
	if errors.Is(err, redis.Nil) {
		return 0 // an endpoint never moved, or a mid count of 0, has no key
	}
	if err != nil {
		t.Fatalf("MEMORY USAGE %s: %v", key, err)
	}
	return n
}
