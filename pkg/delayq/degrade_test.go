package delayq_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// A wait that may not subscribe to the queue's realtime channel (a user
// without it: Redis 7's default for a new ACL user; or a server without
// SUBSCRIBE) claims every half second instead of failing, and gets what is
// pushed meanwhile.
func TestWaitWithoutSubscribe(t *testing.T) {
	check := func(t *testing.T, admin, waiter *delayq.Client) {
		t.Helper()
		ctx := context.Background()
		mustCreate(t, admin, "q", delayq.Attributes{})
		if m, err := waiter.Receive(ctx, "q", delayq.ReceiveOptions{Wait: 700 * time.Millisecond}); err != nil || len(m) != 0 {
			t.Fatalf("wait on an empty queue: %v %v", m, err)
		}
		done := make(chan []delayq.Message, 1)
		errs := make(chan error, 1)
		go func() {
			m, err := waiter.Receive(ctx, "q", delayq.ReceiveOptions{Wait: time.Minute})
			done <- m
			errs <- err
		}()
		mustPush(t, admin, "q", "hello", delayq.PushOptions{})
		if m, err := <-done, <-errs; err != nil || len(m) != 1 || m[0].Body != "hello" {
			t.Fatalf("wait for a push: %v %v", m, err)
		}
	}
	t.Run("no channel", func(t *testing.T) {
		b := redistest.Real(t)
		redistest.NeedACL(t, b)
		rdb := redistest.ACLUser(t, b, "chatqtest-nochan", "~*", "+@all", "resetchannels")
		check(t, newClient(t, b), delayq.New(rdb, delayq.Options{Prefix: b.Prefix}))
	})
	t.Run("no SUBSCRIBE", func(t *testing.T) {
		s := redistest.StartServer(t, "--rename-command", "SUBSCRIBE", "")
		c := delayq.New(s.Client(), delayq.Options{})
		check(t, c, c)
	})
}

// On a server without PUBLISH (renamed away: some proxies and managed
// services lack it), every operation works; pushes notify nobody.
func TestWithoutPublish(t *testing.T) {
	s := redistest.StartServer(t, "--rename-command", "PUBLISH", "")
	ctx := context.Background()
	c := delayq.New(s.Client(), delayq.Options{})
	mustCreate(t, c, "q", delayq.Attributes{})
	mustCreate(t, c, "dead", delayq.Attributes{})
	mustCreate(t, c, "once", delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"})
	p, err := c.Push(ctx, "q", "m", delayq.PushOptions{})
	if err != nil || p.Notified {
		t.Fatalf("push: %+v %v", p, err)
	}
	m, err := c.Receive(ctx, "q", delayq.ReceiveOptions{})
	if err != nil || len(m) != 1 {
		t.Fatalf("receive: %v %v", m, err)
	}
	if _, err := c.ChangeVisibility(ctx, "q", m[0].Receipt, 0); err != nil {
		t.Fatalf("retry: %v", err)
	}
	mustPush(t, c, "once", "x", delayq.PushOptions{})
	if m, err := c.Receive(ctx, "once", delayq.ReceiveOptions{VT: -1}); err != nil || len(m) != 1 {
		t.Fatalf("receive once: %v %v", m, err)
	}
	moved := 0
	if _, err := c.Receive(ctx, "once", delayq.ReceiveOptions{Moved: func(n int, _ string) { moved += n }}); err != nil || moved != 1 {
		t.Fatalf("dead-letter move: %d %v", moved, err)
	}
	if r, err := c.Redrive(ctx, "dead", delayq.RedriveOptions{To: "q"}); err != nil || r == nil {
		t.Fatalf("redrive: %+v %v", r, err)
	}
	if _, err := c.Import(ctx, "q", seq([]delayq.Message{{ID: "0000000000importimportimportimpo", Body: "in", VisibleAt: time.Unix(1, 0)}})); err != nil {
		t.Fatalf("import: %v", err)
	}
}
