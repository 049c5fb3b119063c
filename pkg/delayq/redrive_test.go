package delayq_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
)

// deadLetter pushes n messages to src (whose policy is one receive, then
// dlq) and moves them to dlq with two receives; it returns their ids.
func deadLetter(t *testing.T, c *delayq.Client, src string, n int) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for i := range n {
		ids = append(ids, mustPush(t, c, src, fmt.Sprintf("body %d", i), delayq.PushOptions{}))
	}
	if r, err := c.Receive(ctx, src, delayq.ReceiveOptions{N: n, VT: -1}); err != nil || len(r) != n {
		t.Fatalf("receive: %v %v", r, err)
	}
	if r, moved, _, err := receiveEvents(ctx, c, src, delayq.ReceiveOptions{N: n}); err != nil || len(r) != 0 || moved != n {
		t.Fatalf("dead-letter receive: %+v %v", r, err)
	}
	return ids
}

// checkIndex fails unless queue q's index holds exactly the messages with
// a receive count, with their scores in the queue.
func checkIndex(t *testing.T, b redistest.Backend, q string) {
	t.Helper()
	ctx := context.Background()
	k := b.Prefix + "rsmq:" + q
	idx := b.Client.ZRangeWithScores(ctx, k+":R", 0, -1).Val()
	h := b.Client.HGetAll(ctx, k+":Q").Val()
	n := 0
	for f := range h {
		if id, ok := strings.CutSuffix(f, ":rc"); ok {
			n++
			s, err := b.Client.ZScore(ctx, k, id).Result()
			r, err2 := b.Client.ZScore(ctx, k+":R", id).Result()
			if err != nil || err2 != nil || s != r {
				t.Fatalf("%s: %s has a receive count; score %v (%v), index %v (%v)", q, id, s, err, r, err2)
			}
		}
	}
	if n != len(idx) {
		t.Fatalf("%s: %d messages with a receive count, %d in the index", q, n, len(idx))
	}
}

func TestRedrive(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dlq", delayq.Attributes{MaxSize: -1})
		mustCreate(t, c, "src", delayq.Attributes{MaxReceives: 1, DeadLetter: "dlq", MaxSize: 1024})
		moved := deadLetter(t, c, "src", 5)
		// In the dead-letter queue besides: one in flight (left), one
		// delayed and never received (moved), one whose id the destination
		// has (left), one too long for the destination (left).
		inflight := mustPush(t, c, "dlq", "held", delayq.PushOptions{})
		delayed := mustPush(t, c, "dlq", "later", delayq.PushOptions{Delay: time.Hour})
		dup := mustPush(t, c, "dlq", "dup", delayq.PushOptions{})
		b.Client.ZAdd(ctx, b.Prefix+"rsmq:src", redis.Z{Score: 1, Member: dup})
		b.Client.HSet(ctx, b.Prefix+"rsmq:src:Q", dup, "the other one")
		long := mustPush(t, c, "dlq", strings.Repeat("é", 1025), delayq.PushOptions{})
		fits := mustPush(t, c, "dlq", strings.Repeat("é", 1024), delayq.PushOptions{}) // 2048 bytes, 1024 units
		// Receive every due one; keep "held", give the others back (received,
		// but due: they move, and their receive counts go).
		r, err := c.Receive(ctx, "dlq", delayq.ReceiveOptions{N: 20, VT: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		var held string
		for _, m := range r {
			if m.ID == inflight {
				held = m.ID
			} else if _, err := c.ChangeVisibility(ctx, "dlq", m.ID, 0); err != nil {
				t.Fatal(err)
			}
		}
		if held == "" {
			t.Fatalf("did not receive %s: %+v", inflight, r)
		}
		before, _ := c.Stats(ctx, "src")

		res, err := c.Redrive(ctx, "dlq", delayq.RedriveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.To != "src" || res.Moved != 7 || res.InFlight != 1 || !slices.Equal(res.Exists, []string{dup}) || !slices.Equal(res.TooLong, []string{long}) || res.Limit != 10 {
			t.Fatalf("redrive = %+v", res)
		}
		after, _ := c.Stats(ctx, "src")
		if after.TotalSent != before.TotalSent+7 || after.Ready != before.Ready+7 || after.InFlight != 0 || after.Messages != before.Messages+7 {
			t.Fatalf("src before %+v after %+v", before, after)
		}
		d, _ := c.Stats(ctx, "dlq")
		if d.Messages != 3 || d.InFlight != 1 || d.TotalSent != 10 {
			t.Fatalf("dlq after = %+v", d)
		}
		checkIndex(t, b, "src")
		checkIndex(t, b, "dlq")
		// Fresh messages in src: ids and bodies kept, no receive count, due.
		for _, id := range append(moved, delayed, fits) {
			g, err := c.Get(ctx, "src", id)
			if err != nil || g.State != "ready" || g.RC != 0 || !g.FR.IsZero() {
				t.Fatalf("get %s = %+v %v", id, g, err)
			}
		}
		if g, _ := c.Get(ctx, "src", moved[3]); g.Body != "body 3" {
			t.Fatalf("body = %q", g.Body)
		}
		// Received again, they count from 1 with a new first receive.
		got, err := c.Receive(ctx, "src", delayq.ReceiveOptions{N: 10, VT: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got {
			if m.RC != 1 && m.ID != dup {
				t.Fatalf("received %+v", m)
			}
		}
		// Nothing left to move: the rest stays.
		res, err = c.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "src"})
		if err != nil || res.Moved != 0 || res.InFlight != 1 || len(res.Exists) != 1 || len(res.TooLong) != 1 {
			t.Fatalf("second redrive = %+v %v", res, err)
		}
	})
}

func TestRedriveErrors(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dlq", delayq.Attributes{})
		mustCreate(t, c, "other", delayq.Attributes{})
		res, err := c.Redrive(ctx, "dlq", delayq.RedriveOptions{})
		if !errors.Is(err, delayq.ErrInvalid) || res == nil || len(res.Sources) != 0 || err.Error() != `no queue has "dlq" as its dead-letter queue` {
			t.Fatalf("no source: %+v %v", res, err)
		}
		mustCreate(t, c, "a", delayq.Attributes{MaxReceives: 2, DeadLetter: "dlq"})
		mustCreate(t, c, "b", delayq.Attributes{MaxReceives: 3, DeadLetter: "dlq"})
		mustCreate(t, c, "c", delayq.Attributes{MaxReceives: 3, DeadLetter: "other"})
		if srcs, err := c.DeadLetterSources(ctx, "dlq"); err != nil || !slices.Equal(srcs, []string{"a", "b"}) {
			t.Fatalf("sources = %v %v", srcs, err)
		}
		res, err = c.Redrive(ctx, "dlq", delayq.RedriveOptions{})
		if !errors.Is(err, delayq.ErrInvalid) || res == nil || !slices.Equal(res.Sources, []string{"a", "b"}) {
			t.Fatalf("two sources: %+v %v", res, err)
		}
		if _, err := c.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "dlq"}); !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("into itself: %v", err)
		}
		if _, err := c.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "nope"}); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("missing destination: %v", err)
		}
		if _, err := c.Redrive(ctx, "nope", delayq.RedriveOptions{To: "a"}); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("missing dlq: %v", err)
		}
		if _, err := c.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "a", N: -1}); !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("negative n: %v", err)
		}
		// A wrong-type key of the destination: refused before any write.
		id := mustPush(t, c, "dlq", "x", delayq.PushOptions{})
		b.Client.Set(ctx, b.Prefix+"rsmq:b:R", "junk", 0)
		if _, err := c.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "b"}); err == nil || !strings.Contains(err.Error(), "nothing written") {
			t.Fatalf("wrong type: %v", err)
		}
		if g, err := c.Get(ctx, "dlq", id); err != nil || g.Body != "x" {
			t.Fatalf("after refused redrive: %+v %v", g, err)
		}
		// With hash tags (Cluster) refused before any I/O.
		tagged := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix, HashTag: true})
		if _, err := tagged.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "a"}); !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("hash tags: %v", err)
		}
	})
}

func TestRedriveBounded(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dlq", delayq.Attributes{})
		mustCreate(t, c, "src", delayq.Attributes{})
		// 50 ready, then 600 in flight, then 20 delayed.
		for i := range 650 {
			mustPush(t, c, "dlq", fmt.Sprint("m", i), delayq.PushOptions{})
		}
		if r, err := c.Receive(ctx, "dlq", delayq.ReceiveOptions{N: 600, VT: time.Hour}); err != nil || len(r) != 600 {
			t.Fatalf("receive: %v", err)
		}
		for i := range 20 {
			mustPush(t, c, "dlq", fmt.Sprint("d", i), delayq.PushOptions{Delay: 2 * time.Hour})
		}
		// -n stops early.
		res, err := c.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "src", N: 30})
		if err != nil || res.Moved != 30 || res.Limit != 30 {
			t.Fatalf("redrive -n 30 = %+v %v", res, err)
		}
		// The walk crosses the in-flight ones in calls of 500; after the
		// first call the entry it stopped at is acked, so the next call
		// starts from the first entry of its score (one receive call gives
		// up to 100 messages the same) and must not count those again:
		// each of the 600 is counted once.
		calls := 0
		res, err = c.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "src", Progress: func(moved, limit int) {
			calls++
			if calls == 1 {
				// the last in-flight entry examined: rank 499 of the walk,
				// which began with the 20 ready ones left
				last := b.Client.ZRange(ctx, b.Prefix+"rsmq:dlq", 479, 479).Val()
				if _, err := c.Ack(ctx, "dlq", last...); err != nil {
					t.Error(err)
				}
			}
		}})
		if err != nil || res.Moved != 40 || res.InFlight != 600 || res.Limit != 640 || calls != 2 {
			t.Fatalf("redrive = %+v %v after %d calls", res, err, calls)
		}
		s, _ := c.Stats(ctx, "src")
		d, _ := c.Stats(ctx, "dlq")
		if s.Messages != 70 || d.Messages != 599 || d.InFlight != 599 {
			t.Fatalf("src %d, dlq %d (in flight %d)", s.Messages, d.Messages, d.InFlight)
		}
		checkIndex(t, b, "dlq")
	})
}
