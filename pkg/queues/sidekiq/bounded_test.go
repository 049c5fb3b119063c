package sidekiq_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// boundedN is the jobs per state of TestBoundedWork:
// CHATQ_SIDEKIQ_BOUNDED_N, default 5000 (docs/kinds/sidekiq.md has the
// figures at 1e5 and 1e6).
func boundedN(t *testing.T) int {
	if s := os.Getenv("CHATQ_SIDEKIQ_BOUNDED_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			t.Fatalf("CHATQ_SIDEKIQ_BOUNDED_N=%q: want a number of at least 1000", s)
		}
		return n
	}
	return 5000
}

// TestBoundedWork: with N jobs in the queue's list and N in each shared
// set (half of them another queue's), every server call of every
// operation takes under 10 ms (SLOWLOG), in the best of three runs (a busy
// machine slows one run; work that grows with N slows every one).
func TestBoundedWork(t *testing.T) {
	if testing.Short() {
		t.Skip("loads N jobs per state")
	}
	n := boundedN(t)
	const limit = 10 * time.Millisecond
	f := newFixture(t)
	body := strings.Repeat("x", 100)
	load := func(key string, zset bool, jid func(i int) (string, string)) {
		for i := 0; i < n; i += 10_000 {
			_, err := f.rdb.Pipelined(f.ctx, func(p redis.Pipeliner) error {
				for j := i; j < min(i+10_000, n); j++ {
					q, id := jid(j)
					raw := job(q, id, failed+`,"body":"`+body+`"`)
					if zset {
						p.ZAdd(f.ctx, key, redis.Z{Score: float64(1700000000 + j), Member: raw})
					} else {
						p.RPush(f.ctx, key, raw)
					}
				}
				return nil
			})
			f.must(err)
		}
	}
	half := func(prefix string) func(int) (string, string) {
		return func(i int) (string, string) {
			if i%2 == 0 {
				return "big", fmt.Sprint(prefix, i)
			}
			return "other", fmt.Sprint(prefix, i)
		}
	}
	f.must(f.rdb.SAdd(f.ctx, f.prefix+"queues", "big", "other").Err())
	load(f.prefix+"queue:big", false, func(i int) (string, string) { return "big", fmt.Sprint("r", i) })
	load(f.prefix+"schedule", true, half("s"))
	load(f.prefix+"retry", true, half("t"))
	load(f.prefix+"dead", true, half("d"))
	work := map[string]string{}
	for i := 0; i < 25; i++ {
		work[fmt.Sprint("tid", i)] = workValue("big", job("big", fmt.Sprint("w", i), ""))
	}
	f.process("h:1:abc", ":workers", "6.4.1", work)
	q := f.open("big")

	run := 0
	scan := func(state string) func() error {
		return func() error {
			return q.Scan(f.ctx, queues.ScanOptions{State: state, Max: 300}, func([]queues.Job) error { return nil })
		}
	}
	last := (n - 1) &^ 1 // the last of big's entries in each set
	ops := []struct {
		name string
		fn   func() error
	}{
		{"Discover", func() error { _, _, err := f.kind.Discover(f.ctx, 0, 100); return err }},
		{"Counts", func() error { _, err := q.Counts(f.ctx); return err }},
		{"Scan ready", scan(queues.Ready)},
		{"Scan delayed", scan(queues.Delayed)},
		{"Scan retry", scan(queues.Retry)},
		{"Scan dead", scan(queues.Dead)},
		{"Scan inflight", scan(queues.Inflight)},
		{"Get", func() error { _, err := q.Get(f.ctx, "t0"); return err }}, // past the list and the schedule set
		{"Retry", func() error {
			_, err := q.(queues.Retrier).Retry(f.ctx, []string{fmt.Sprint("t", last-2*run)})
			return err
		}},
		{"Remove", func() error {
			res, err := q.(queues.Remover).Remove(f.ctx, []string{fmt.Sprint("s", last-2*run), fmt.Sprint("r", min(9000, n/2)+run)}, false)
			if err == nil && len(res.Done) != 2 {
				err = fmt.Errorf("removed %v", res)
			}
			return err
		}},
		{"Redrive", func() error { _, err := q.(queues.Redriver).Redrive(f.ctx, 50); return err }},
	}
	for _, c := range [][]any{{"slowlog-log-slower-than", 0}, {"slowlog-max-len", 100_000}} {
		f.must(f.rdb.ConfigSet(f.ctx, c[0].(string), fmt.Sprint(c[1])).Err())
	}
	best := map[string]time.Duration{}
	worstCall := map[string]string{}
	// calls and p99 are the number of calls (a script's own included) and
	// their 99th percentile in the run of the best worst call: Get, Retry
	// and Remove walk the sets in thousands of calls at a million, where a
	// loaded machine's scheduling, not the work, makes the worst one.
	calls, p99 := map[string]int{}, map[string]time.Duration{}
	for run = range 3 {
		for _, o := range ops {
			f.must(f.rdb.SlowLogReset(f.ctx).Err())
			if err := o.fn(); err != nil {
				t.Fatalf("%s: %v", o.name, err)
			}
			logs, err := f.rdb.SlowLogGet(f.ctx, -1).Result()
			f.must(err)
			var worst time.Duration
			var call string
			var all []time.Duration
			for _, l := range logs {
				if len(l.Args) > 0 && strings.EqualFold(l.Args[0], "slowlog") {
					continue
				}
				all = append(all, l.Duration)
				if l.Duration > worst {
					worst, call = l.Duration, strings.Join(l.Args[:min(len(l.Args), 4)], " ")
				}
			}
			if b, ok := best[o.name]; !ok || worst < b {
				best[o.name], worstCall[o.name] = worst, call
				slices.Sort(all)
				calls[o.name], p99[o.name] = len(all), all[len(all)*99/100]
			}
		}
	}
	for _, o := range ops {
		if len(worstCall[o.name]) > 80 {
			worstCall[o.name] = worstCall[o.name][:80] + "…"
		}
		t.Logf("N=%d %-14s %5d calls, p99 %v, worst call %v (%s)", n, o.name, calls[o.name], p99[o.name], best[o.name], worstCall[o.name])
		if best[o.name] > limit {
			t.Errorf("%s: a call took %v in each of three runs (%s)", o.name, best[o.name], worstCall[o.name])
		}
	}
}
