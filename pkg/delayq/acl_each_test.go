package delayq_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
)

// writeCommands are the commands a refusal must leave nothing half done
// for; PUBLISH is best-effort (a push is stored without its notification).
// HSET and PEXPIRE write the records of calls with a token too.
var writeCommands = []string{"hdel", "hincrby", "hset", "pexpire", "sadd", "srem", "unlink", "zadd", "zrem"}

// TestACLEachCommand runs, on a real server, every operation that writes
// as users refused one of the commands it writes with, one user per
// command: each is refused and changes nothing. Redis 7 and Valkey scripts
// ask redis.acl_check_cmd; Redis 6.2 scripts probe each command in a form
// the command refuses itself, and the client queues the registry's SADD or
// SREM between MULTI and DISCARD (docs/compatibility.md). The operations
// that take a token are called with one, so that their records' HSET and
// PEXPIRE are refused too, before any write.
func TestACLEachCommand(t *testing.T) {
	b := redistest.Real(t)
	redistest.NeedACL(t, b)
	ctx := context.Background()
	admin := newClient(t, b)
	// A queue with a message of each state, a dead-letter queue holding
	// one, and a queue whose next receive moves its message there.
	mustCreate(t, admin, "q", delayq.Attributes{})
	mustCreate(t, admin, "gone", delayq.Attributes{})
	mustCreate(t, admin, "dead", delayq.Attributes{})
	mustCreate(t, admin, "once", delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"})
	mustPush(t, admin, "q", "ready", delayq.PushOptions{})
	mustPush(t, admin, "q", "later", delayq.PushOptions{Delay: time.Hour})
	mustPush(t, admin, "q", "taken", delayq.PushOptions{})
	taken, err := admin.Receive(ctx, "q", delayq.ReceiveOptions{})
	if err != nil || len(taken) != 1 {
		t.Fatalf("receive: %v %v", taken, err)
	}
	mustPush(t, admin, "once", "again", delayq.PushOptions{})
	if m, err := admin.Receive(ctx, "once", delayq.ReceiveOptions{VT: -1}); err != nil || len(m) != 1 {
		t.Fatalf("receive once: %v %v", m, err)
	}
	mustPush(t, admin, "dead", "dead one", delayq.PushOptions{})

	cases := map[string]func(c *delayq.Client) error{
		"Create":        func(c *delayq.Client) error { return c.Create(ctx, "new", delayq.Attributes{}) },
		"SetAttributes": func(c *delayq.Client) error { return c.SetAttributes(ctx, "q", delayq.Attributes{VT: time.Minute}) },
		"Reindex":       func(c *delayq.Client) error { return c.Reindex(ctx, "q") },
		"Delete":        func(c *delayq.Client) error { _, err := c.Delete(ctx, "gone", -1); return err },
		"Purge":         func(c *delayq.Client) error { _, err := c.Purge(ctx, "q", -1); return err },
		"Push": func(c *delayq.Client) error {
			_, err := c.Push(ctx, "q", "m", delayq.PushOptions{Token: rand.Text()})
			return err
		},
		"PushMany": func(c *delayq.Client) error {
			_, err := c.PushMany(ctx, "q", []string{"m1", "m2"}, delayq.PushManyOptions{Due: []delayq.PushOptions{{Token: rand.Text()}}})
			return err
		},
		"Retry": func(c *delayq.Client) error {
			_, err := c.AckWith(ctx, "q", delayq.AckOptions{Retry: true, Token: rand.Text()}, taken[0].ID)
			return err
		},
		"Receive": func(c *delayq.Client) error {
			if _, err := c.Receive(ctx, "once", delayq.ReceiveOptions{Pop: true, Token: rand.Text()}); err != nil {
				return err // the dead-letter move
			}
			_, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Token: rand.Text()})
			return err
		},
		"Receive (wait)": func(c *delayq.Client) error {
			_, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Wait: time.Millisecond, Token: rand.Text()})
			return err
		},
		"Work": func(c *delayq.Client) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			return c.Work(ctx, "q", delayq.WorkOptions{}, func(context.Context, delayq.Message) error { cancel(); return nil })
		},
		"Ack": func(c *delayq.Client) error {
			_, err := c.AckWith(ctx, "q", delayq.AckOptions{Token: rand.Text()}, taken[0].ID)
			return err
		},
		"ChangeVisibility": func(c *delayq.Client) error {
			_, err := c.ChangeVisibility(ctx, "q", taken[0].ID, 0)
			return err
		},
		"Redrive": func(c *delayq.Client) error {
			_, err := c.Redrive(ctx, "dead", delayq.RedriveOptions{To: "q"})
			return err
		},
		"Import": func(c *delayq.Client) error {
			_, err := c.Import(ctx, "q", seq([]delayq.Message{{ID: "0000000000importimportimportimpo", Body: "in", VisibleAt: time.Unix(1, 0)}}))
			return err
		},
	}
	var ops []redistest.Op
	for _, a := range admin.Access() {
		ops = append(ops, redistest.Op{Name: a.Op, Write: a.Write, Commands: a.Commands})
	}
	run := map[string]func(*redis.Client) error{}
	for name, op := range cases {
		run[name] = func(rdb *redis.Client) error { return op(delayq.New(rdb, delayq.Options{Prefix: b.Prefix})) }
	}
	// ChangeVisibility and Work take no token: they write no record.
	may := func(op, cmd string) bool {
		return op == "ChangeVisibility" && (cmd == "hset" || cmd == "pexpire") || op == "Work" && cmd == "pexpire"
	}
	redistest.Refusals(t, b, ops, writeCommands, run, nil, may)
}
