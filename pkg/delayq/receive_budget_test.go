package delayq_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/delayq/delayqtest"
	"github.com/redis/go-redis/v9"
)

// TestReceiveVTZeroOnce: a message claimed with a vt of 0 is due again at
// once, and one receive of N must not hand it out twice.
func TestReceiveVTZeroOnce(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		id := mustPush(t, c, "q", "once", delayq.PushOptions{})
		r, err := c.Receive(context.Background(), "q", delayq.ReceiveOptions{N: 5, VT: -1})
		if err != nil || len(r) != 1 || r[0].ID != id || r[0].RC != 1 {
			t.Fatalf("receive 5 with vt 0 of one message: %+v %v", r, err)
		}
	})
}

// evalCounter counts the scripts a client runs.
type evalCounter struct{ n *atomic.Int64 }

func (evalCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h evalCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (evalCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestReceiveBudget: messages past their receive limit are moved to the
// dead-letter queue a budget per script call (1,000 ids looked at), not all
// in one call, and the receive goes on until it finds one to deliver.
func TestReceiveBudget(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dead", delayq.Attributes{})
		mustCreate(t, c, "q", delayq.Attributes{})
		const n = 2500
		if err := delayqtest.Fill(ctx, c, "q", n, delayqtest.FillOptions{Ready: 1}); err != nil {
			t.Fatal(err)
		}
		// Every one received three times already (by another client).
		ids := b.Client.ZRange(ctx, b.Prefix+"rsmq:q", 0, -1).Val()
		if len(ids) != n {
			t.Fatalf("filled %d, want %d", len(ids), n)
		}
		pipe := b.Client.Pipeline()
		for _, id := range ids {
			pipe.HSet(ctx, b.Prefix+"rsmq:q:Q", id+":rc", 3, id+":fr", 1)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.SetAttributes(ctx, "q", delayq.Attributes{MaxReceives: 2, DeadLetter: "dead"}); err != nil {
			t.Fatal(err)
		}
		fine := mustPush(t, c, "q", "fine", delayq.PushOptions{})
		calls := new(atomic.Int64)
		// A call that moves 1,000 messages is slow on the embedded server
		// under -race on a loaded machine: the verdict is the count of
		// calls, never their time, so no read timeout cuts one short.
		opt := *b.Client.Options()
		opt.ReadTimeout, opt.WriteTimeout = time.Minute, time.Minute
		rdb := redis.NewClient(&opt)
		defer rdb.Close()
		rdb.AddHook(evalCounter{calls})
		r, moved, _, err := receiveEvents(ctx, delayq.New(rdb, delayq.Options{Prefix: b.Prefix}), "q", delayq.ReceiveOptions{VT: time.Hour})
		if err != nil || len(r) != 1 || r[0].ID != fine {
			t.Fatalf("receive: %+v %v", r, err)
		}
		if moved != n {
			t.Fatalf("moved %d, want %d", moved, n)
		}
		// 2,500 moved at 1,000 ids a call: at least three receive calls.
		if got := calls.Load(); got < 3 {
			t.Fatalf("%d script calls moved %d messages: more than 1,000 per call", got, n)
		}
		if s, err := c.Stats(ctx, "dead"); err != nil || s.Messages != n {
			t.Fatalf("dead-letter queue: %+v %v", s, err)
		}
	})
}
