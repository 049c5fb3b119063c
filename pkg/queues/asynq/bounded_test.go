package asynq

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// TestServerTimeBounded measures, with SLOWLOG, the longest time the
// server spends in one call of each operation on a queue holding n tasks
// in each of pending, active (leases expired), scheduled, retry, archived
// and completed, for each n of CHATQ_ASYNQ_SIZES (comma-separated, e.g.
// 1000,100000), on a private redis-server. It logs a table and fails when
// a call took more than CHATQ_ASYNQ_LIMIT_US (default 10000) µs.
//
//	CHATQ_ASYNQ_SIZES=1000,100000 go test ./pkg/queues/asynq/ -run TestServerTimeBounded -v
func TestServerTimeBounded(t *testing.T) {
	sizes := os.Getenv("CHATQ_ASYNQ_SIZES")
	if sizes == "" {
		t.Skip("CHATQ_ASYNQ_SIZES not set")
	}
	limit := int64(10000)
	if v := os.Getenv("CHATQ_ASYNQ_LIMIT_US"); v != "" {
		limit, _ = strconv.ParseInt(v, 10, 64)
	}
	var table []string
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		worst := measure(t, n)
		for _, w := range worst {
			table = append(table, fmt.Sprintf("n=%-8d %-10s %6d µs", n, w.op, w.us))
			if w.us > limit {
				t.Errorf("n=%d: %s: a call took %d µs", n, w.op, w.us)
			}
		}
	}
	t.Log("longest server time of one call:\n" + strings.Join(table, "\n"))
}

type opTime struct {
	op string
	us int64
}

// measure loads n tasks per state and runs each operation once.
func measure(t *testing.T, n int) []opTime {
	f := newFixture(t, "q")
	ctx := context.Background()
	now := time.Now().Unix()
	msg := encode(&message{Type: "email", Payload: []byte(`{"to":"someone@example.com"}`), Queue: "q", Retry: 25})
	for _, state := range []string{statePending, stateActive, stateScheduled, stateRetry, stateArchived, stateCompleted} {
		for from := 0; from < n; from += 10000 {
			p := f.c.Pipeline()
			var ids []any
			var zs []redis.Z
			for i := from; i < min(n, from+10000); i++ {
				id := fmt.Sprintf("%s-%08d", state, i)
				ids = append(ids, id)
				zs = append(zs, redis.Z{Score: float64(now - 3600 + int64(i%7200)), Member: id})
				p.HSet(ctx, f.q.taskPrefix()+id, "msg", msg, "state", state, "pending_since", time.Now().UnixNano())
			}
			switch state {
			case statePending, stateActive:
				p.LPush(ctx, f.q.key(state), ids...)
				if state == stateActive {
					p.ZAdd(ctx, f.q.key("lease"), zs...)
				}
			default:
				p.ZAdd(ctx, f.q.key(state), zs...)
			}
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.must(f.c.ConfigSet(ctx, "slowlog-log-slower-than", "50").Err())
	f.must(f.c.ConfigSet(ctx, "slowlog-max-len", "100000").Err())
	mid := func(state string) string { return fmt.Sprintf("%s-%08d", state, n/2) }
	last := func(state string) string { return fmt.Sprintf("%s-%08d", state, n-1) }
	ops := []struct {
		name string
		fn   func() error
	}{
		{"Discover", func() error { _, _, err := f.k.Discover(ctx, 0, 100); return err }},
		{"Counts", func() error { _, err := f.q.Counts(ctx); return err }},
		{"Scan", func() error {
			return f.q.Scan(ctx, queues.ScanOptions{Max: 300}, func([]queues.Job) error { return nil })
		}},
		{"Get", func() error { _, err := f.q.Get(ctx, mid(stateArchived)); return err }},
		{"Retry", func() error {
			_, err := f.q.Retry(ctx, []string{mid(stateScheduled), mid(stateRetry), mid(stateArchived)})
			return err
		}},
		{"Remove", func() error {
			_, err := f.q.Remove(ctx, []string{mid(statePending), last(statePending), mid(stateCompleted), mid(stateActive)}, true)
			return err
		}},
		{"Redrive", func() error { _, err := f.q.Redrive(ctx, 100); return err }},
		{"Pause", func() error { return f.q.Pause(ctx) }},
		{"Resume", func() error { return f.q.Resume(ctx) }},
		{"Recover", func() error { _, err := f.q.Recover(ctx, queues.RecoverOptions{Max: 100}); return err }},
	}
	var out []opTime
	for _, o := range ops {
		f.must(f.c.SlowLogReset(ctx).Err())
		if err := o.fn(); err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		var worst int64
		for _, e := range f.c.SlowLogGet(ctx, -1).Val() {
			if len(e.Args) > 0 && strings.EqualFold(e.Args[0], "slowlog") {
				continue
			}
			worst = max(worst, e.Duration.Microseconds())
			if os.Getenv("CHATQ_ASYNQ_SLOWLOG") != "" && e.Duration > time.Millisecond {
				a := strings.Join(e.Args, " ")
				t.Logf("%s: %v %.80q", o.name, e.Duration, a[:min(len(a), 80)])
			}
		}
		out = append(out, opTime{o.name, worst})
	}
	return out
}
