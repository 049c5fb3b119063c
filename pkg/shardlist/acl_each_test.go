package shardlist

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestACLEachCommand runs, on a real server, every operation that writes
// as users refused one of the commands it writes with, one user per
// command: each is refused and changes nothing. On Redis 6.2 (no
// redis.acl_check_cmd) only SET and LTRIM can be checked before a write;
// the cases of the other commands are skipped there: the remaining case
// docs/compatibility.md names.
func TestACLEachCommand(t *testing.T) {
	b := redistest.Real(t)
	ctx := context.Background()
	if err := b.Client.Do(ctx, "ACL", "WHOAMI").Err(); err != nil {
		t.Skipf("no ACL: %v", err)
	}
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
	ops := map[string]func(c *Client) error{
		"LPush": func(c *Client) error { _, err := c.LPush(ctx, "k", "a", "b", "c"); return err },
		"RPush": func(c *Client) error { _, err := c.RPush(ctx, "k", "a", "b", "c"); return err },
		"LPop":  func(c *Client) error { _, err := c.LPop(ctx, "k", 3); return err },
		"RPop":  func(c *Client) error { _, err := c.RPop(ctx, "k", 3); return err },
		"BLPop": func(c *Client) error { _, err := c.BLPop(ctx, "k", time.Second); return err },
		"BRPop": func(c *Client) error { _, err := c.BRPop(ctx, "k", time.Second); return err },
	}
	writes := []string{"del", "incr", "lpop", "lpush", "ltrim", "rpop", "rpush", "set", "unlink"}
	suffix := strings.ReplaceAll(b.Prefix, ":", "-")
	for _, a := range admin.Access() {
		if !a.Write {
			continue
		}
		op, ok := ops[a.Op]
		if !ok {
			t.Errorf("no case for %s: add one", a.Op)
			continue
		}
		for _, cmd := range a.Commands {
			if !slices.Contains(writes, cmd) {
				continue
			}
			t.Run(a.Op+"/"+cmd, func(t *testing.T) {
				if checks == 0 && cmd != "set" && cmd != "ltrim" {
					t.Skipf("Redis 6.2 cannot check %s before a write (docs/compatibility.md)", cmd)
				}
				name := "chatqtest-no-" + cmd + suffix
				if err := b.Client.Do(ctx, "ACL", "SETUSER", name, "reset", "on", ">pw", "~*", "&*", "+@all", "-"+cmd).Err(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { b.Client.Do(context.Background(), "ACL", "DELUSER", name) })
				opt := *b.Client.Options()
				opt.Username, opt.Password = name, "pw"
				rdb := redis.NewClient(&opt)
				defer rdb.Close()
				before := contents(t, b.Client, b.Prefix)
				err := op(New(rdb, Options{Prefix: b.Prefix}))
				// A blocking pop that finds an item pops it without the
				// wake marker's push, which only a wait needs.
				wake := (a.Op == "BLPop" && cmd == "lpush") || (a.Op == "BRPop" && cmd == "rpush")
				if wake && err == nil {
					return
				}
				if after := contents(t, b.Client, b.Prefix); after != before {
					t.Fatalf("without %s, %s (%v) changed:\n%s\nto\n%s", cmd, a.Op, err, before, after)
				}
				if err == nil {
					t.Fatalf("without %s, %s succeeded", cmd, a.Op)
				}
			})
		}
	}
}

// contents lists the keys under prefix with their values (DUMP), sorted.
func contents(t *testing.T, c *redis.Client, prefix string) string {
	t.Helper()
	keys, err := c.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		out = append(out, k+"="+c.Dump(context.Background(), k).Val())
	}
	return strings.Join(out, "\n")
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
	name := "chatqtest-nounblock" + strings.ReplaceAll(b.Prefix, ":", "-")
	if err := b.Client.Do(ctx, "ACL", "SETUSER", name, "reset", "on", ">pw", "~*", "&*", "+@all", "-client|unblock").Err(); err != nil {
		t.Skipf("no subcommand rules (Redis 6.2 cannot deny one): %v", err)
	}
	t.Cleanup(func() { b.Client.Do(context.Background(), "ACL", "DELUSER", name) })
	opt := *b.Client.Options()
	opt.Username, opt.Password = name, "pw"
	rdb := redis.NewClient(&opt)
	defer rdb.Close()
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
