package rq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/rq"
	"github.com/redis/go-redis/v9"
)

// Counts leave out expired entries of the registries whose RQ count
// cleans them first, and keep the scheduled ones (scored by run time).
func TestCountsExpired(t *testing.T) {
	srv := redistest.StartServer(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	past, future := float64(time.Now().Unix()-5), float64(time.Now().Unix()+500)
	for _, reg := range []string{"wip", "failed", "finished", "scheduled"} {
		rdb.ZAdd(ctx, "p:rq:"+reg+":x", redis.Z{Score: past, Member: "old"}, redis.Z{Score: future, Member: "new"})
	}
	rdb.SAdd(ctx, "p:rq:queues", "rq:queue:x")
	k := rq.New(queues.Env{RDB: rdb, Prefix: "p:"})
	names, _, err := k.Discover(ctx, 0, 10)
	if err != nil || len(names) != 1 || names[0] != "x" {
		t.Fatalf("Discover = %v, %v", names, err)
	}
	q, _ := k.Open("x")
	c, err := q.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if *c.Inflight != 1 || *c.Dead != 1 || *c.Done != 1 || *c.Delayed != 2 || *c.Ready != 0 || c.Retry != nil {
		t.Errorf("Counts = %+v", c)
	}
	missing, _ := k.Open("nope")
	if _, err := missing.Counts(ctx); !errors.Is(err, queues.ErrQueueNotFound) {
		t.Errorf("Counts of a missing queue: %v", err)
	}
}

// RQ 2.x's started registry holds "<job>:<execution>": chatq's writes of
// started jobs refuse it and change nothing.
func TestStartedRQ2ReadOnly(t *testing.T) {
	srv := redistest.StartServer(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	rdb.ZAdd(ctx, "rq:wip:x", redis.Z{Score: float64(time.Now().Unix() - 5), Member: "j1:e1"})
	rdb.HSet(ctx, "rq:job:j1", "status", "started", "origin", "x")
	k := rq.New(queues.Env{RDB: rdb})
	qq, _ := k.Open("x")
	q := qq.(*rq.Queue)
	if _, err := q.Recover(ctx, queues.RecoverOptions{}); !errors.Is(err, queues.ErrReadOnly) {
		t.Errorf("Recover: %v, want ErrReadOnly", err)
	}
	if _, err := q.Remove(ctx, []string{"j1"}, true); !errors.Is(err, queues.ErrReadOnly) {
		t.Errorf("Remove: %v, want ErrReadOnly", err)
	}
	if n := rdb.Exists(ctx, "rq:job:j1").Val(); n != 1 {
		t.Errorf("job hash removed")
	}
	if n := rdb.ZCard(ctx, "rq:wip:x").Val(); n != 1 {
		t.Errorf("started registry changed: %d", n)
	}
	j, err := q.Get(ctx, "j1")
	if err != nil || j.State != queues.Inflight {
		t.Errorf("Get = %+v, %v", j, err)
	}
}
