package rq_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/rq"
	"github.com/redis/go-redis/v9"
)

// Every server call of every operation does bounded work: with N jobs
// (CHATQ_RQ_BOUNDED_N, default 5000) in the queue list and in each
// registry (half the started ones expired), each call the server logs in
// SLOWLOG takes under 10 ms, in the best of three runs.
func TestBoundedWork(t *testing.T) {
	if testing.Short() {
		t.Skip("loads many jobs")
	}
	n := 5000
	if s := os.Getenv("CHATQ_RQ_BOUNDED_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	const limit = 10 * time.Millisecond
	srv := redistest.StartServer(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	now := time.Now().Unix()
	state := map[string]string{"queue": "queued", "scheduled": "scheduled", "wip": "started",
		"failed": "failed", "finished": "finished", "deferred": "deferred"}
	id := func(reg string, i int) string { return fmt.Sprintf("%s-%d", reg, i) }
	for reg, status := range state {
		for i := 0; i < n; i += 5000 {
			_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for j := i; j < min(i+5000, n); j++ {
					p.HSet(ctx, "rq:job:"+id(reg, j), "status", status, "origin", "big",
						"description", "jobs.work('x')", "created_at", "2026-01-01T00:00:00.000000Z")
					score := float64(now + 3600)
					if reg == "wip" && j%2 == 0 {
						score = float64(now - 10)
					}
					if reg == "queue" {
						p.RPush(ctx, "rq:queue:big", id(reg, j))
					} else {
						p.ZAdd(ctx, "rq:"+reg+":big", redis.Z{Score: score, Member: id(reg, j)})
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	rdb.SAdd(ctx, "rq:queues", "rq:queue:big")
	kind := rq.New(queues.Env{RDB: rdb})
	qq, _ := kind.Open("big")
	q := qq.(*rq.Queue)
	c, err := q.Counts(ctx)
	if err != nil || *c.Ready != int64(n) || *c.Inflight != int64(n/2) || *c.Dead != int64(n) {
		t.Fatalf("Counts = %+v, %v", c, err)
	}
	run := 0
	scan := func(state string) func() error {
		return func() error {
			return q.Scan(ctx, queues.ScanOptions{State: state, Max: 300}, func([]queues.Job) error { return nil })
		}
	}
	ops := []struct {
		name string
		fn   func() error
	}{
		{"Discover", func() error { _, _, err := kind.Discover(ctx, 0, 100); return err }},
		{"Counts", func() error { _, err := q.Counts(ctx); return err }},
		{"Scan ready", scan(queues.Ready)},
		{"Scan delayed", scan(queues.Delayed)},
		{"Scan inflight", scan(queues.Inflight)},
		{"Scan dead", scan(queues.Dead)},
		{"Scan done", scan(queues.Done)},
		{"Get", func() error { _, err := q.Get(ctx, id("failed", n-1)); return err }},
		{"Retry", func() error { _, err := q.Retry(ctx, []string{id("failed", run)}); return err }},
		{"Redrive", func() error { _, err := q.Redrive(ctx, 50); return err }},
		{"Remove", func() error {
			_, err := q.Remove(ctx, []string{id("queue", n-1-run), id("finished", run), id("scheduled", n-1-run)}, false)
			return err
		}},
		{"Recover", func() error { _, err := q.Recover(ctx, queues.RecoverOptions{Max: 150}); return err }},
	}
	for _, c := range [][]any{{"slowlog-log-slower-than", 0}, {"slowlog-max-len", 100_000}} {
		if err := rdb.ConfigSet(ctx, c[0].(string), fmt.Sprint(c[1])).Err(); err != nil {
			t.Fatal(err)
		}
	}
	best := map[string]time.Duration{}
	worstCall := map[string]string{}
	for run = range 3 {
		for _, o := range ops {
			if err := rdb.SlowLogReset(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := o.fn(); err != nil {
				t.Fatalf("%s: %v", o.name, err)
			}
			logs, err := rdb.SlowLogGet(ctx, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			var worst time.Duration
			var call string
			for _, l := range logs {
				if len(l.Args) > 0 && strings.EqualFold(l.Args[0], "slowlog") {
					continue
				}
				if l.Duration > worst {
					worst, call = l.Duration, strings.Join(l.Args[:min(len(l.Args), 6)], " ")
				}
			}
			if b, ok := best[o.name]; !ok || worst < b {
				best[o.name], worstCall[o.name] = worst, call
			}
		}
	}
	for _, o := range ops {
		t.Logf("%-14s worst call %v (%s)", o.name, best[o.name], worstCall[o.name])
		if best[o.name] > limit {
			t.Errorf("%s: a call took %v in each of three runs (%s)", o.name, best[o.name], worstCall[o.name])
		}
	}
}
