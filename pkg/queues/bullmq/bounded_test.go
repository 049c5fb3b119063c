package bullmq_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/bullmq"
	"github.com/redis/go-redis/v9"
)

// Every server call of every operation does bounded work: with
// CHATQ_TEST_BOUNDED_N jobs in each of wait, delayed, failed and completed
// (scripts/bounded.sh sets it), each call the server logs in SLOWLOG takes
// under 10 ms, in the best of three runs (a busy machine slows one run;
// work that grows with the queue slows every one).
func TestBoundedWork(t *testing.T) {
	s := os.Getenv("CHATQ_TEST_BOUNDED_N")
	if s == "" {
		t.Skip("CHATQ_TEST_BOUNDED_N not set (scripts/bounded.sh sets it)")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 10 {
		t.Fatalf("CHATQ_TEST_BOUNDED_N=%q", s)
	}
	const limit = 10 * time.Millisecond
	ctx := context.Background()
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.HSet(ctx, "bull:big:meta", "version", "bullmq:6.7.0", "opts.maxLenEvents", "10000").Err(); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	states := []string{"wait", "delayed", "failed", "completed"}
	for si, state := range states {
		for from := 0; from < n; from += 1000 {
			_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i := from; i < min(from+1000, n); i++ {
					id := strconv.Itoa(si*n + i + 1)
					p.HSet(ctx, "bull:big:"+id, "name", "send", "data", fmt.Sprintf(`{"n":%d,"state":%q}`, i, state),
						"opts", `{"attempts":3}`, "timestamp", now, "delay", 0, "priority", 0, "atm", 1, "failedReason", "boom", "finishedOn", now)
					switch state {
					case "wait":
						p.LPush(ctx, "bull:big:wait", id)
					case "delayed":
						p.ZAdd(ctx, "bull:big:delayed", redis.Z{Score: float64((now + 3_600_000) * 0x1000), Member: id})
					default:
						p.ZAdd(ctx, "bull:big:"+state, redis.Z{Score: float64(now), Member: id})
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	q, err := bullmq.New(queues.Env{RDB: rdb}).Open("big")
	if err != nil {
		t.Fatal(err)
	}
	id := func(state string, i int) string {
		for si, s := range states {
			if s == state {
				return strconv.Itoa(si*n + i + 1)
			}
		}
		panic(state)
	}
	scan := func(state, grep string) func() error {
		return func() error {
			return q.Scan(ctx, queues.ScanOptions{State: state, Max: 100, Grep: grep}, func([]queues.Job) error { return nil })
		}
	}
	// Each run acts on jobs of its own, so that the three runs do the
	// same work.
	ops := []struct {
		name string
		run  func(r int) error
	}{
		{"counts", func(int) error { _, err := q.Counts(ctx); return err }},
		{"scan ready", func(int) error { return scan(queues.Ready, "")() }},
		{"scan delayed", func(int) error { return scan(queues.Delayed, "")() }},
		{"scan dead", func(int) error { return scan(queues.Dead, "")() }},
		{"scan done", func(int) error { return scan(queues.Done, "")() }},
		{"scan dead grep", func(int) error { return scan(queues.Dead, `"n":5,`)() }},
		{"get wait middle", func(int) error { _, err := q.Get(ctx, id("wait", n/2)); return ignoreNotFound(err) }},
		{"get failed", func(int) error { _, err := q.Get(ctx, id("failed", n/2)); return err }},
		{"retry", func(r int) error { _, err := q.(queues.Retrier).Retry(ctx, []string{id("failed", r)}); return err }},
		{"rm failed", func(r int) error {
			_, err := q.(queues.Remover).Remove(ctx, []string{id("failed", n-1-r)}, false)
			return err
		}},
		{"rm wait middle", func(r int) error {
			_, err := q.(queues.Remover).Remove(ctx, []string{id("wait", n/2+r)}, false)
			return err
		}},
		{"redrive 100", func(int) error { _, err := q.(queues.Redriver).Redrive(ctx, 100); return err }},
		{"recover", func(int) error { _, err := q.(queues.Recoverer).Recover(ctx, queues.RecoverOptions{}); return err }},
		{"pause", func(int) error { return q.(queues.Pauser).Pause(ctx) }},
		{"resume", func(int) error { return q.(queues.Pauser).Resume(ctx) }},
	}
	if err := rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigSet(ctx, "slowlog-max-len", "100000").Err(); err != nil {
		t.Fatal(err)
	}
	var report []string
	for _, op := range ops {
		best := time.Duration(-1)
		var worstArgs []string
		for r := range 3 {
			if err := rdb.Do(ctx, "SLOWLOG", "RESET").Err(); err != nil {
				t.Fatal(err)
			}
			if err := op.run(r); err != nil {
				t.Fatalf("%s: %v", op.name, err)
			}
			entries, err := rdb.SlowLogGet(ctx, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			var worst time.Duration
			var args []string
			for _, e := range entries {
				if len(e.Args) > 0 && strings.EqualFold(e.Args[0], "slowlog") {
					continue
				}
				if e.Duration > worst {
					worst, args = e.Duration, e.Args
				}
			}
			if best < 0 || worst < best {
				best, worstArgs = worst, args
			}
		}
		report = append(report, fmt.Sprintf("%-16s %6d µs", op.name, best.Microseconds()))
		if best > limit {
			t.Errorf("n=%d: %s: a call took %v in each of 3 runs (%.60q)", n, op.name, best, strings.Join(worstArgs, " "))
		}
	}
	t.Logf("n=%d per state, longest server time of one call (best of 3 runs):\n%s", n, strings.Join(report, "\n"))
}

func ignoreNotFound(err error) error {
	if err != nil && strings.Contains(err.Error(), "not found") {
		return nil
	}
	return err
}
