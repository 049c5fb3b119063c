package shardlist

import (
	"context"
	"crypto/rand"
	"slices"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// TestACLEachCommand runs, on a real server, every operation that writes
// as users refused one of the commands it writes with, one user per
// command: each is refused and changes nothing. The pushes and pops carry
// a token, so that their records' HSET and PEXPIRE are refused too. On
// Redis 6.2 (no redis.acl_check_cmd) only SET, LTRIM, HSET and PEXPIRE can
// be checked before a write; the cases of the other commands are skipped
// there: the remaining case docs/compatibility.md names.
func TestACLEachCommand(t *testing.T) {
	b := redistest.Real(t)
	redistest.NeedACL(t, b)
	ctx := context.Background()
	checks, err := b.Client.Eval(ctx, "return redis.acl_check_cmd and 1 or 0", nil).Int()
	if err != nil {
		t.Fatal(err)
	}
	// Shards of 3 (2 items each) and 5 items: the pushes below open a
	// shard, and the pops empty one, so every command is used.
	admin := New(b.Client, Options{Prefix: b.Prefix, ShardSize: 3})
	if _, err := admin.RPush(ctx, "k", "1", "2", "3", "4", "5"); err != nil {
		t.Fatal(err)
	}
	big := make([]string, 300) // 150 shards
	for i := range big {
		big[i] = "x"
	}
	if _, err := admin.RPush(ctx, "big", big...); err != nil {
		t.Fatal(err)
	}
	ops := map[string]func(c *Client) error{
		"LPush": func(c *Client) error {
			_, err := c.Push(ctx, "k", []string{"a", "b", "c"}, PushOptions{Head: true, Token: rand.Text()})
			return err
		},
		"RPush": func(c *Client) error {
			_, err := c.Push(ctx, "k", []string{"a", "b", "c"}, PushOptions{Token: rand.Text()})
			return err
		},
		"LPop": func(c *Client) error { _, err := c.Pop(ctx, "k", PopOptions{Count: 3, Token: rand.Text()}); return err },
		"RPop": func(c *Client) error {
			_, err := c.Pop(ctx, "k", PopOptions{Tail: true, Count: 3, Token: rand.Text()})
			return err
		},
		"BLPop": func(c *Client) error {
			_, err := c.Pop(ctx, "k", PopOptions{Block: true, Wait: time.Second, Token: rand.Text()})
			return err
		},
		"BRPop": func(c *Client) error {
			_, err := c.Pop(ctx, "k", PopOptions{Tail: true, Block: true, Wait: time.Second, Token: rand.Text()})
			return err
		},
		// A list of more than 100 shards, so that a call moves its first
		// end (SET, INCR) before the last one deletes its keys.
		"Delete": func(c *Client) error { _, err := c.Delete(ctx, "big", true); return err },
	}
	var access []redistest.Op
	for _, a := range admin.Access() {
		access = append(access, redistest.Op{Name: a.Op, Write: a.Write, Commands: a.Commands})
	}
	run := map[string]func(*redis.Client) error{}
	for name, op := range ops {
		run[name] = func(rdb *redis.Client) error { return op(New(rdb, Options{Prefix: b.Prefix})) }
	}
	writes := []string{"del", "hset", "incr", "lpop", "lpush", "ltrim", "pexpire", "rpop", "rpush", "set", "unlink"}
	skip := func(_, cmd string) string {
		if checks == 0 && !slices.Contains([]string{"set", "ltrim", "hset", "pexpire"}, cmd) {
			return "Redis 6.2 cannot check " + cmd + " before a write (docs/compatibility.md)"
		}
		return ""
	}
	// A blocking pop that finds an item pops it without the wake marker's
	// push, which only a wait needs.
	wake := func(op, cmd string) bool {
		return (op == "BLPop" && cmd == "lpush") || (op == "BRPop" && cmd == "rpush")
	}
	redistest.Refusals(t, b, access, writes, run, skip, wake)
}

// A blocking pop cuts its wait short with CLIENT UNBLOCK when ctx ends;
// where the server lacks UNBLOCK or this user may not run it, though CLIENT
// ID works (Google Memorystore has no UNBLOCK), it waits in short slices
// instead of missing the cancellation for a whole slice.
func TestWaiterNeedsUnblock(t *testing.T) {
	b := redistest.Real(t)
	ctx := context.Background()
	l := newList(t, b, "k", 3)
	w, err := l.newWaiter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if !w.interruptible {
		t.Fatal("as a user who may run CLIENT ID and UNBLOCK, the waiter is not interruptible")
	}
	// Redis 6.2 cannot refuse one subcommand: its ACL has no DRYRUN either.
	if err := b.Client.Do(ctx, "ACL", "DRYRUN", "default", "ping").Err(); err != nil {
		t.Skipf("no subcommand rules: %v", err)
	}
	rdb := redistest.ACLUser(t, b, "chatqtest-nounblock", "~*", "&*", "+@all", "-client|unblock")
	l2, err := New(rdb, Options{Prefix: b.Prefix}).list("k")
	if err != nil {
		t.Fatal(err)
	}
	w2, err := l2.newWaiter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.close()
	if w2.interruptible {
		t.Error("a user refused CLIENT UNBLOCK got an interruptible waiter")
	}
}
