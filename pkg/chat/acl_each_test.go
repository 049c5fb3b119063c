package chat_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/redis/go-redis/v9"
)

// TestACLEachCommand runs, on a real server, every operation that writes
// as users refused one of the commands it writes with (PUBLISH included:
// a send notifies watchers or is refused), one user per command: each is
// refused and changes nothing. Redis 7 and Valkey scripts ask
// redis.acl_check_cmd; Redis 6.2 scripts probe each command in a form the
// command refuses itself, and run the ones with no such form first
// (docs/compatibility.md). Create, Send and Join carry a token, so that
// their records' HSET and PEXPIRE are refused too, before any write.
func TestACLEachCommand(t *testing.T) {
	b := redistest.Real(t)
	redistest.NeedACL(t, b)
	ctx := context.Background()
	admin := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
	// Chat 1: joe and jeff, two messages jeff has not seen; chat 2: ann
	// alone, so that her leaving deletes it.
	must(admin.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "1", Message: ptr("one")}))(t)
	must(admin.Send(ctx, "1", "joe", "two"))(t)
	must(admin.Create(ctx, chat.CreateRequest{From: "ann", To: nil, ID: "2", Message: ptr("hi")}))(t)
	must(admin.Pending(ctx, "ann", chat.PendingOptions{Peek: true}))(t)

	cases := map[string]func(c *chat.Client) error{
		"Create": func(c *chat.Client) error {
			_, err := c.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"ann"}, ID: "3", Message: ptr("new"), Token: rand.Text()})
			return err
		},
		"Send": func(c *chat.Client) error {
			_, err := c.SendWith(ctx, "1", "joe", "three", chat.SendOptions{Token: rand.Text()})
			return err
		},
		"Join": func(c *chat.Client) error {
			_, err := c.JoinWith(ctx, "1", "ann", chat.JoinOptions{Token: rand.Text()})
			return err
		},
		"Leave": func(c *chat.Client) error {
			if _, err := c.Leave(ctx, "2", "ann"); err != nil {
				return err // the last one out
			}
			_, err := c.Leave(ctx, "1", "jeff")
			return err
		},
		"Pending": func(c *chat.Client) error { _, err := c.Pending(ctx, "jeff", chat.PendingOptions{}); return err },
		"MarkSeen": func(c *chat.Client) error {
			return c.MarkSeen(ctx, "jeff", []chat.ChatMessages{{ChatID: "1", Messages: []chat.Message{{ID: 2}}}})
		},
		"Watch (mark)": func(c *chat.Client) error {
			// A deadline for a hang (a watch that retried a refusal for
			// ever), not a budget.
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			return c.Watch(ctx, "jeff", chat.WatchOptions{Mark: true}, func([]chat.ChatMessages) error { cancel(); return nil })
		},
	}
	var ops []redistest.Op
	for _, a := range admin.Access() {
		ops = append(ops, redistest.Op{Name: a.Op, Write: a.Write, Commands: a.Commands})
	}
	run := map[string]func(*redis.Client) error{}
	for name, op := range cases {
		run[name] = func(rdb *redis.Client) error { return op(chat.New(rdb, chat.Options{Prefix: b.Prefix})) }
	}
	writes := []string{"hset", "incr", "pexpire", "publish", "unlink", "zadd", "zrem", "zremrangebyrank"}
	redistest.Refusals(t, b, ops, writes, run, nil, nil)
}

// Watch follows a user's chats without notifications when it may not
// subscribe (no channel for this user, Redis 7's default for a new ACL
// user; or a server without SUBSCRIBE): it reads every second instead of
// failing, and delivers what is sent meanwhile.
func TestWatchWithoutSubscribe(t *testing.T) {
	check := func(t *testing.T, admin, watcher *chat.Client) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang, not a budget
		defer cancel()
		must(admin.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "1"}))(t)
		errs := make(chan error, 1)
		got := make(chan string, 10)
		go func() {
			errs <- watcher.Watch(ctx, "jeff", chat.WatchOptions{}, func(cs []chat.ChatMessages) error {
				for _, c := range cs {
					for _, m := range c.Messages {
						got <- m.Message
					}
				}
				return nil
			})
		}()
		must(admin.Send(ctx, "1", "joe", "hello"))(t)
		select {
		case m := <-got:
			if m != "hello" {
				t.Errorf("watch delivered %q", m)
			}
		case err := <-errs:
			t.Fatalf("watch ended: %v", err)
		}
		cancel()
		if err := <-errs; err != nil {
			t.Errorf("watch: %v", err)
		}
	}
	t.Run("no channel", func(t *testing.T) {
		b := redistest.Real(t)
		redistest.NeedACL(t, b)
		rdb := redistest.ACLUser(t, b, "chatqtest-nochan", "~*", "+@all", "resetchannels")
		check(t, chat.New(b.Client, chat.Options{Prefix: b.Prefix}), chat.New(rdb, chat.Options{Prefix: b.Prefix}))
	})
	t.Run("no SUBSCRIBE", func(t *testing.T) {
		s := redistest.StartServer(t, "--rename-command", "SUBSCRIBE", "")
		c := chat.New(s.Client(), chat.Options{})
		check(t, c, c)
	})
}
