package asynq

import (
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// writeCommands are the commands the writes write with: a user refused
// any one of them must see the write fail and change nothing.
var writeCommands = []string{"del", "expireat", "hset", "incr", "lpush", "lrem", "set", "srem", "zadd", "zrem"}

// TestACLEachCommand runs every write as users refused one of its
// commands: each scripts' check (luascript.Permitted) refuses before the
// first write.
func TestACLEachCommand(t *testing.T) {
	f := filled(t)
	f.add(stateActive, "gone", &message{Type: "x", Retry: 3}, time.Now().Unix()-60)
	b := redistest.Backend{Name: "redis", Client: f.c, Prefix: f.prefix}
	var ops []redistest.Op
	for _, a := range f.k.Access() {
		ops = append(ops, redistest.Op{Name: a.Op, Write: a.Write, Commands: a.Commands})
	}
	queue := func(c *redis.Client) *Queue { return New(queues.Env{RDB: c, Prefix: f.prefix}).open("q") }
	run := map[string]func(*redis.Client) error{
		"Retry": func(c *redis.Client) error { _, err := queue(c).Retry(f.ctx, []string{"d1", "s1"}); return err },
		"Remove": func(c *redis.Client) error {
			_, err := queue(c).Remove(f.ctx, []string{"p1", "g1", "gone"}, true)
			return err
		},
		"Redrive": func(c *redis.Client) error { _, err := queue(c).Redrive(f.ctx, 0); return err },
		"Pause":   func(c *redis.Client) error { return queue(c).Pause(f.ctx) },
		"Resume":  func(c *redis.Client) error { return queue(c).Resume(f.ctx) },
		"Recover": func(c *redis.Client) error { _, err := queue(c).Recover(f.ctx, queues.RecoverOptions{}); return err },
	}
	// Paused, so that Resume has something to delete (and Pause, refused,
	// would change nothing either way: SET NX is checked first).
	f.must(f.c.Set(f.ctx, f.q.key("paused"), "1", 0).Err())
	skip := func(op, cmd string) string {
		if op == "Recover" && cmd == "set" {
			return "SET only restarts asynq's counters at the largest int64; the script does not ask for it"
		}
		return ""
	}
	redistest.Refusals(t, b, ops, writeCommands, run, skip, nil)
}
