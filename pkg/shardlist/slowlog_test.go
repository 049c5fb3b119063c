package shardlist

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// Fill pushes n items ("item-0", "item-1", ...) onto the tail of l in
// batches of 1000, the largest a push call takes: the fast way to load a
// list for a size test (1e6 items in about 1000 calls).
func fill(ctx context.Context, c redis.UniversalClient, key, prefix string, n, size int) (*list, error) {
	l, err := New(c, Options{Prefix: prefix, ShardSize: size, BatchSize: maxBatchSize}).list(key)
	if err != nil {
		return nil, err
	}
	items := make([]string, 0, maxBatchSize)
	for i := 0; i < n; {
		items = items[:0]
		for ; i < n && len(items) < maxBatchSize; i++ {
			items = append(items, "item-"+strconv.Itoa(i))
		}
		if _, err := l.RPush(ctx, l.key, items...); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// TestServerTimePerCall measures, with SLOWLOG on a real server, the worst
// server time of any single call each list operation makes, on lists of the
// sizes in CHATQ_SLOWLOG_SIZES (e.g. "1000,100000,1000000"), and fails if
// an operation has a call of 10 ms or more in each of three runs. It changes the server's slowlog settings for the
// run (and puts them back): run it on a server of your own.
//
//	CHATQ_TEST_REDIS_URL=redis://127.0.0.1:22000/0 CHATQ_SLOWLOG_SIZES=1000,100000,1000000 \
//	  go test -run TestServerTimePerCall -v ./pkg/shardlist
func TestServerTimePerCall(t *testing.T) {
	sizes := os.Getenv("CHATQ_SLOWLOG_SIZES")
	if sizes == "" {
		t.Skip("CHATQ_SLOWLOG_SIZES not set")
	}
	b := redistest.Real(t)
	ctx := context.Background()
	c := b.Client
	var worstAndMedian func(fn func() error) (time.Duration, int, string, time.Duration)
	old := c.ConfigGet(ctx, "slowlog-*").Val()
	defer func() {
		for k, v := range old {
			c.ConfigSet(ctx, k, v)
		}
	}()
	// Every call of 100 µs or more is logged. (Commands a script runs are
	// logged too, each on its own, which is why the threshold is not 0: the
	// logging would slow the scripts down.)
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "100").Err(); err != nil {
		t.Fatal(err)
	}
	c.ConfigSet(ctx, "slowlog-max-len", "100000")
	// worst runs fn and returns its longest call of 100 µs or more (server
	// time, as SLOWLOG measures it; 0 when none took that long) and the
	// number of such calls. Only what the package sends is counted, not the
	// commands inside its scripts.
	worst := func(fn func() error) (time.Duration, int, string) {
		d, calls, which, _ := worstAndMedian(fn)
		return d, calls, which
	}
	_ = worst
	worstAndMedian = func(fn func() error) (time.Duration, int, string, time.Duration) {
		c.SlowLogReset(ctx) // itself logged after the reset? no: RESET empties the log
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		logs, err := c.Do(ctx, "slowlog", "get", "-1").Slice()
		if err != nil {
			t.Fatal(err)
		}
		var max time.Duration
		var calls int
		var which string
		var all []time.Duration
		var spikes []string
		for _, e := range logs {
			f, _ := e.([]any)
			if len(f) < 4 {
				continue
			}
			args, _ := f[3].([]any)
			name := ""
			if len(args) > 0 {
				name = strings.ToLower(fmt.Sprint(args[0]))
			}
			switch name {
			case "evalsha", "eval", "blmove", "client", "script":
			default:
				continue
			}
			calls++
			us, _ := f[2].(int64)
			d := time.Duration(us) * time.Microsecond
			all = append(all, d)
			if d > 5*time.Millisecond {
				spikes = append(spikes, fmt.Sprintf("#%d:%s %v", len(logs)-calls, d, args[min(len(args), 7):min(len(args), 16)]))
			}
			if d > max {
				max, which = d, name
			}
		}
		slices.Sort(all)
		var median time.Duration
		if len(all) > 0 {
			median = all[len(all)/2]
		}
		if len(all) > 3 {
			t.Logf("    slowest calls: %v; calls over 5ms (position from the first call): %v", all[len(all)-4:], spikes)
		}
		return max, calls, which, median
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{512, 3} {
			if size == 3 && n > 100000 {
				continue // 500,000 shards: the load alone takes minutes
			}
			key := fmt.Sprintf("slow%d-%d", n, size)
			start := time.Now()
			l, err := fill(ctx, c, key, b.Prefix, n, size)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("loaded %d items, shard size %d, in %s", n, size, time.Since(start).Round(time.Millisecond))
			many := make([]string, 1000)
			for i := range many {
				many[i] = "x"
			}
			ops := []struct {
				name string
				fn   func() error
			}{
				{"rpush 1", func() error { _, err := l.RPush(ctx, l.key, "x"); return err }},
				{"rpush 1000", func() error { _, err := l.RPush(ctx, l.key, many...); return err }},
				{"lpush 1000", func() error { _, err := l.LPush(ctx, l.key, many...); return err }},
				{"llen", func() error { _, err := l.LLen(ctx, l.key); return err }},
				{"lpop 1", func() error { _, err := l.LPop(ctx, l.key, 1); return err }},
				{"rpop 1000", func() error { _, err := l.RPop(ctx, l.key, 1000); return err }},
				{"lpop 1000", func() error { _, err := l.LPop(ctx, l.key, 1000); return err }},
				{"lrange 0 9", func() error { _, err := l.LRange(ctx, l.key, 0, 9); return err }},
				{"lrange -10 -1", func() error { _, err := l.LRange(ctx, l.key, -10, -1); return err }},
				{"lrange middle 10", func() error { _, err := l.LRange(ctx, l.key, int64(n/2), int64(n/2+9)); return err }},
				{"lrange 0 -1", func() error {
					got, err := l.LRange(ctx, l.key, 0, -1)
					if want, _ := l.LLen(ctx, l.key); err == nil && int64(len(got)) != want {
						err = fmt.Errorf("lrange 0 -1: %d items, llen %d", len(got), want)
					}
					return err
				}},
				{"shards", func() error { _, err := l.Layout(ctx, l.key); return err }},
				{"blpop (item there)", func() error { _, err := l.BLPop(ctx, l.key, time.Second); return err }},
			}
			for _, op := range ops {
				// On a loaded machine the server is sometimes descheduled
				// in the middle of a call: an operation is run up to three
				// times, and fails only if every run had a call of 10 ms.
				var runs []time.Duration
				for try := 0; try < 3; try++ {
					d, calls, which, median := worstAndMedian(op.fn)
					t.Logf("items %8d shard size %3d  %-20s worst call %8s (%s), %d calls >= 100µs, median of those %s", n, size, op.name, d, which, calls, median)
					runs = append(runs, d)
					if d < 10*time.Millisecond {
						break
					}
				}
				if slices.Min(runs) >= 10*time.Millisecond {
					t.Errorf("%s on %d items: a call took 10 ms or more of server time in every run: %v", op.name, n, runs)
				}
			}
			// hostile endpoints: refused at once
			fk, lk := l.keys[0], l.keys[1]
			for _, bad := range []struct{ key, val string }{{lk, "10000000"}, {fk, "-10000000"}, {l.midKey(), "x"}} {
				was := c.Get(ctx, bad.key).Val()
				c.Set(ctx, bad.key, bad.val, 0)
				d, calls, which := worst(func() error {
					for _, side := range []dir{left, right} {
						if _, err := l.pop(ctx, side, 1); err == nil {
							return fmt.Errorf("pop of a corrupt list worked")
						}
					}
					l.LLen(ctx, l.key)
					l.LRange(ctx, l.key, 0, -1)
					l.Layout(ctx, l.key)
					return nil
				})
				t.Logf("items %8d shard size %3d  %-20s worst call %8s (%s), %d calls >= 100µs", n, size, "corrupt "+strings.TrimPrefix(bad.key, l.base)+"="+bad.val, d, which, calls)
				if was == "" {
					c.Del(ctx, bad.key)
				} else {
					c.Set(ctx, bad.key, was, 0)
				}
			}
			c.Unlink(ctx, key) // the rest goes with the prefix at the end
		}
	}
}
