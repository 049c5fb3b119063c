package bullmq_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/bullmq"
	"github.com/redis/go-redis/v9"
)

// benchJobs is how many waiting jobs the scan benchmark fills:
// CHATQ_BULLMQ_BENCH_N, or a small default for CI's one-iteration run.
func benchJobs(tb testing.TB) int {
	n := 1000
	if s := os.Getenv("CHATQ_BULLMQ_BENCH_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			tb.Fatalf("CHATQ_BULLMQ_BENCH_N=%q", s)
		}
	}
	return n
}

// fillWaiting writes n waiting jobs as BullMQ 6.x lays them out (its
// hash fields, the wait list) on a server of the test's own, and returns
// the queue; one job's data holds "needle-in-haystack".
func fillWaiting(tb testing.TB, n int) queues.Queue {
	tb.Helper()
	ctx := context.Background()
	srv := redistest.StartServer(tb)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	tb.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.HSet(ctx, "bull:bench:meta", "version", "bullmq:6.7.0", "opts.maxLenEvents", "10000").Err(); err != nil {
		tb.Fatal(err)
	}
	now := time.Now().UnixMilli()
	for from := 0; from < n; from += 1000 {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := from; i < min(from+1000, n); i++ {
				id := strconv.Itoa(i + 1)
				data := fmt.Sprintf(`{"to":"user%d@example.com","subject":"Your order %d has shipped","body":"Hello, your parcel is on its way and will arrive soon.","n":%d}`, i, i, i)
				if i == n/2 {
					data = `{"note":"needle-in-haystack"}`
				}
				p.HSet(ctx, "bull:bench:"+id, "name", "send", "data", data, "opts", `{"attempts":3,"backoff":{"type":"exponential","delay":1000}}`,
					"timestamp", now, "delay", 0, "priority", 0, "atm", 0)
				p.LPush(ctx, "bull:bench:wait", id)
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	q, err := bullmq.New(queues.Env{RDB: rdb}).Open("bench")
	if err != nil {
		tb.Fatal(err)
	}
	return q
}

// scanAll scans every waiting job with grep and returns how many passed.
func scanAll(tb testing.TB, q queues.Queue, grep string) int {
	passed := 0
	err := q.Scan(context.Background(), queues.ScanOptions{State: queues.Ready, Grep: grep}, func(jobs []queues.Job) error {
		passed += len(jobs)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return passed
}

// BenchmarkScan compares a scan as export reads the queue (every job
// passed) with a scan with grep (peek --grep: one job matches).
func BenchmarkScan(b *testing.B) {
	n := benchJobs(b)
	q := fillWaiting(b, n)
	b.Run("export", func(b *testing.B) {
		for b.Loop() {
			if got := scanAll(b, q, ""); got != n {
				b.Fatalf("passed %d of %d", got, n)
			}
		}
	})
	b.Run("grep", func(b *testing.B) {
		for b.Loop() {
			if got := scanAll(b, q, "needle-in-haystack"); got != 1 {
				b.Fatalf("grep passed %d, want 1", got)
			}
		}
	})
}

// TestGrepWithinTwiceExport measures, with CHATQ_BULLMQ_BENCH_N set, that
// a scan with grep takes at most twice a scan that passes every job (the
// best of three runs of each), and logs the ratio.
func TestGrepWithinTwiceExport(t *testing.T) {
	if os.Getenv("CHATQ_BULLMQ_BENCH_N") == "" {
		t.Skip("set CHATQ_BULLMQ_BENCH_N to measure")
	}
	n := benchJobs(t)
	q := fillWaiting(t, n)
	best := func(grep string) time.Duration {
		var b time.Duration
		for range 3 {
			start := time.Now()
			scanAll(t, q, grep)
			if d := time.Since(start); b == 0 || d < b {
				b = d
			}
		}
		return b
	}
	export, grep := best(""), best("needle-in-haystack")
	ratio := float64(grep) / float64(export)
	t.Logf("%d jobs: export scan %v, grep scan %v, ratio %.2f", n, export, grep, ratio)
	if ratio > 2 {
		t.Errorf("grep takes %.2f times export, want at most 2", ratio)
	}
}
