package delayq_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/delayq/delayqtest"
	"github.com/redis/go-redis/v9"
)

// TestServerTimeBounded measures, with SLOWLOG, the longest time the
// server spends in any single call of each delayq operation on a queue
// holding n messages (a third ready, a third delayed, a third in flight),
// for each n in CHATQ_DELAYQ_SIZES (comma-separated, e.g. 1000,100000,1000000)
// on the real redis-server of CHATQ_TEST_REDIS_URL, which it reconfigures
// (slowlog-log-slower-than 50, or CHATQ_DELAYQ_FLOOR_US; restored at the
// end): use a server of your own. Calls under the floor count as 0. It logs a table and fails when a call took more than
// CHATQ_DELAYQ_LIMIT_US (default 10000) microseconds.
//
//	CHATQ_TEST_REDIS_URL=redis://127.0.0.1:21000/0 CHATQ_DELAYQ_SIZES=1000,100000,1000000 \
//	  go test ./pkg/delayq/ -run TestServerTimeBounded -v -timeout 30m
func TestServerTimeBounded(t *testing.T) {
	sizes := os.Getenv("CHATQ_DELAYQ_SIZES")
	if sizes == "" {
		t.Skip("CHATQ_DELAYQ_SIZES not set")
	}
	limit := int64(10000)
	if v := os.Getenv("CHATQ_DELAYQ_LIMIT_US"); v != "" {
		limit, _ = strconv.ParseInt(v, 10, 64)
	}
	b := redistest.Real(t)
	ctx := context.Background()
	rdb := b.Client
	old := rdb.ConfigGet(ctx, "slowlog-*").Val()
	t.Cleanup(func() {
		for k, v := range old {
			rdb.ConfigSet(context.Background(), k, v)
		}
	})
	// Not 0: Redis 7 logs the commands a script runs too, and logging a
	// few hundred entries per script would be most of what we measure.
	floor := "50"
	if v := os.Getenv("CHATQ_DELAYQ_FLOOR_US"); v != "" {
		floor = v
	}
	if err := rdb.ConfigSet(ctx, "slowlog-log-slower-than", floor).Err(); err != nil {
		t.Fatal(err)
	}
	rdb.ConfigSet(ctx, "slowlog-max-len", "100000")
	names := scriptNames(t, rdb)

	type row struct {
		op    string
		worst map[int]int64
		cmd   map[int]string
		all   map[int][]int64 // every logged script call
	}
	var rows []*row
	byOp := map[string]*row{}
	var ns []int
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, n)
		c := delayq.New(rdb, delayq.Options{Prefix: b.Prefix + s + ":"})
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
		}
		must(c.Create(ctx, "q", delayq.Attributes{}))
		must(c.Create(ctx, "big", delayq.Attributes{}))
		start := time.Now()
		must(delayqtest.Fill(ctx, c, "q", n, delayqtest.FillOptions{Body: "a message of some 30 bytes...."}))
		must(delayqtest.Fill(ctx, c, "big", n, delayqtest.FillOptions{Body: "a message of some 30 bytes...."}))
		t.Logf("n=%d: filled two queues in %v", n, time.Since(start))
		var ids []string
		measure := func(op string, fn func() error) {
			t.Helper()
			rdb.SlowLogReset(ctx)
			began := time.Now()
			if err := fn(); err != nil {
				t.Fatalf("n=%d %s: %v", n, op, err)
			}
			took := time.Since(began)
			worst, cmd, calls, scripts := slowest(t, rdb, names)
			r := byOp[op]
			if r == nil {
				r = &row{op: op, worst: map[int]int64{}, cmd: map[int]string{}, all: map[int][]int64{}}
				byOp[op] = r
				rows = append(rows, r)
			}
			r.all[n] = append(r.all[n], scripts...)
			if worst >= r.worst[n] {
				r.worst[n], r.cmd[n] = worst, cmd
			}
			t.Logf("n=%d %-28s worst %6d µs (%s), %d logged, %v", n, op, worst, cmd, calls, took.Round(time.Microsecond))
			if worst > limit {
				t.Errorf("n=%d %s: %s took %d µs of server time (limit %d)", n, op, cmd, worst, limit)
			}
		}
		for i := 0; i < 3; i++ {
			measure("attributes", func() error { _, err := c.Stats(ctx, "q"); return err })
			measure("stats", func() error {
				s, err := c.Stats(ctx, "q")
				if err == nil && !s.SplitExact {
					err = fmt.Errorf("stats %+v", s)
				}
				return err
			})
			measure("push", func() error { _, err := c.Push(ctx, "q", "x", delayq.PushOptions{}); return err })
			measure("push --delay", func() error {
				_, err := c.Push(ctx, "q", "x", delayq.PushOptions{Delay: time.Minute})
				return err
			})
			measure("poll -n 100", func() error {
				r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{N: 100, VT: time.Hour})
				for _, m := range r {
					ids = append(ids, m.ID)
				}
				return err
			})
			measure("poll --pop", func() error {
				_, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Pop: true})
				return err
			})
			measure("retry", func() error {
				_, err := c.ChangeVisibility(ctx, "q", ids[len(ids)-1], time.Minute)
				return err
			})
			measure("ack -n 5", func() error {
				_, err := c.Ack(ctx, "q", ids[len(ids)-5:]...)
				ids = ids[:len(ids)-5]
				return err
			})
			measure("retry (90 ids)", func() error {
				r, err := c.Retry(ctx, "q", time.Minute, ids[len(ids)-90:]...)
				if err == nil && r.Retried != 90 {
					err = fmt.Errorf("retried %+v", r)
				}
				return err
			})
			measure("peek -n 10", func() error { _, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 10}); return err })
			// A search that matches nothing examines the whole queue, one
			// bounded call after another: 10 calls are measured.
			searchPart := func(opt delayq.PeekOptions, export bool) error {
				sctx, stop := context.WithCancel(ctx)
				defer stop()
				calls := 0
				opt.Progress = func(int, int) {
					if calls++; calls == 10 {
						stop()
					}
				}
				var err error
				if export {
					_, err = c.Export(sctx, "q", opt, func([]delayq.Message) error { return nil })
				} else {
					opt.N = 10
					_, err = c.Peek(sctx, "q", opt)
				}
				if calls >= 10 && errors.Is(err, context.Canceled) {
					return nil
				}
				return err
			}
			measure("peek --grep (10 calls)", func() error { return searchPart(delayq.PeekOptions{Grep: "no such text"}, false) })
			measure("peek --grep --regexp (10 calls)", func() error {
				return searchPart(delayq.PeekOptions{Regexp: regexp.MustCompile("no such text")}, false)
			})
			measure("export --grep (10 calls)", func() error { return searchPart(delayq.PeekOptions{Grep: "no such text"}, true) })
			measure("peek --inflight-for (10 calls)", func() error {
				return searchPart(delayq.PeekOptions{InFlightFor: 24 * time.Hour}, false)
			})
			measure("peek -n 2000", func() error { _, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 2000}); return err })
			measure("ls", func() error { _, err := listQueues(ctx, c); return err })
			measure("export (10 pages)", func() error {
				pages := 0
				_, err := c.Export(ctx, "q", delayq.PeekOptions{}, func([]delayq.Message) error {
					if pages++; pages == 10 {
						return errStopExport
					}
					return nil
				})
				if errors.Is(err, errStopExport) {
					return nil
				}
				return err
			})
			measure("import 100", func() error {
				msgs := make([]delayq.Message, 100)
				for k := range msgs {
					msgs[k] = delayq.Message{ID: fmt.Sprintf("0000000000bnd%d%018d", i, k), Body: "imported", VisibleAt: time.Now().Add(time.Hour), RC: int64(k % 2)}
				}
				r, err := c.Import(ctx, "q", seq(msgs))
				if err == nil && r.Imported != 100 {
					err = fmt.Errorf("imported %+v", r)
				}
				return err
			})
			measure("set --vt", func() error {
				vt := time.Minute
				return c.SetAttributes(ctx, "q", delayq.Attributes{VT: vt})
			})
		}
		// As an rsmq receive would: the index is rebuilt at the next stats.
		rdb.HIncrBy(ctx, b.Prefix+s+":rsmq:q:Q", "totalrecv", 1)
		measure("reindex (after an rsmq receive)", func() error {
			if err := c.Reindex(ctx, "q"); err != nil {
				return err
			}
			s, err := c.Stats(ctx, "q")
			if err == nil && !s.SplitExact {
				err = fmt.Errorf("not exact after rebuild: %+v", s)
			}
			return err
		})
		measure("create", func() error { return c.Create(ctx, "other", delayq.Attributes{}) })
		measure("delete (n messages)", func() error { _, err := c.Delete(ctx, "big", -1); return err })
		st, err := c.Stats(ctx, "q")
		must(err)
		measure("purge (n messages)", func() error {
			k, err := c.Purge(ctx, "q", -1)
			if err == nil && k != st.Messages {
				err = fmt.Errorf("purged %d of %d", k, st.Messages)
			}
			return err
		})
		must(errOf(c.Delete(ctx, "q", -1)))
		must(errOf(c.Delete(ctx, "other", -1)))
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\nworst (median of script calls) server time per call, µs; 0 = under the %s µs floor\n| operation |", floor)
	for _, n := range ns {
		fmt.Fprintf(&out, " n=%d |", n)
	}
	fmt.Fprintf(&out, "\n| --- |%s\n", strings.Repeat(" ---: |", len(ns)))
	for _, r := range rows {
		fmt.Fprintf(&out, "| %s |", r.op)
		for _, n := range ns {
			fmt.Fprintf(&out, " %d (%d) |", r.worst[n], median(r.all[n]))
		}
		fmt.Fprintf(&out, " %s\n", r.cmd[ns[len(ns)-1]])
	}
	t.Log(out.String())
}

// scriptNames maps the SHA1 of each delayq script to its file's name, so
// the SLOWLOG entries say which script ran.
func scriptNames(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, src := range delayqtest.Scripts() {
		out[redis.NewScript(src).Hash()] = name
	}
	return out
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]int64(nil), v...)
	slices.Sort(s)
	return s[len(s)/2]
}

// slowest returns the longest SLOWLOG entry (µs) since the last reset,
// leaving out the SLOWLOG command itself, how many entries there were, and
// the durations of the script calls (EVALSHA).
func slowest(t *testing.T, rdb *redis.Client, names map[string]string) (int64, string, int, []int64) {
	t.Helper()
	entries, err := rdb.SlowLogGet(context.Background(), -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var worst int64
	var cmd string
	var scripts []int64
	calls := 0
	for _, e := range entries {
		name := strings.ToLower(fmt.Sprint(e.Args[0]))
		if name == "slowlog" {
			continue
		}
		calls++
		if os.Getenv("CHATQ_DELAYQ_DEBUG") != "" {
			t.Logf("  %v %v", e.Duration, e.Args[:min(len(e.Args), 3)])
		}
		if name == "evalsha" && len(e.Args) > 1 {
			name = names[fmt.Sprint(e.Args[1])]
			scripts = append(scripts, e.Duration.Microseconds())
		}
		if us := e.Duration.Microseconds(); us >= worst {
			worst, cmd = us, name
		}
	}
	return worst, cmd, calls, scripts
}

// errStopExport ends a measured export after a few pages.
var errStopExport = errors.New("enough pages")
