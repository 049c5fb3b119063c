package delayq_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestGet(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		ready := mustPush(t, c, "q", "now", delayq.PushOptions{})
		later := mustPush(t, c, "q", "later", delayq.PushOptions{Delay: time.Hour})
		held := mustPush(t, c, "q", "held", delayq.PushOptions{})
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{N: 2, VT: time.Hour})
		if err != nil || len(r) != 2 {
			t.Fatal(r, err)
		}
		// ready was received too: give it back (ready, rc 1).
		if _, err := c.ChangeVisibility(ctx, "q", ready, 0); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			id, body string
			state    string
			rc       int64
		}{{ready, "now", "ready", 1}, {later, "later", "delayed", 0}, {held, "held", "inflight", 1}} {
			g, err := c.Get(ctx, "q", tc.id)
			if err != nil || g.ID != tc.id || g.Body != tc.body || g.State != tc.state || g.RC != tc.rc || g.Sent != sentAt(tc.id) || g.Now.IsZero() {
				t.Fatalf("get %s = %+v %v, want %+v", tc.id, g, err, tc)
			}
			if (tc.rc > 0) == g.FR.IsZero() {
				t.Fatalf("get %s: fr %v", tc.id, g.FR)
			}
		}
		// By receipt too.
		if g, err := c.Get(ctx, "q", r[1].Receipt); err != nil || g.ID != held {
			t.Fatalf("get by receipt: %+v %v", g, err)
		}
		if _, err := c.Ack(ctx, "q", held); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, "q", held); !errors.Is(err, delayq.ErrMessageNotFound) {
			t.Fatalf("get acked: %v", err)
		}
		if _, err := c.Get(ctx, "q", "nope"); !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("get malformed: %v", err)
		}
		if _, err := c.Get(ctx, "missing", ready); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("get from missing queue: %v", err)
		}
	})
}

func TestPeekFilters(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		var old, ready, delayed, inflight []string
		for range 3 {
			old = append(old, mustPush(t, c, "q", "old", delayq.PushOptions{}))
		}
		// The others are sent at least 300 ms after these (by the server's
		// clock); the age filter below cuts in the middle of that gap.
		for deadline := time.Now().Add(10 * time.Second); ; {
			tm, err := b.Client.Time(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			if tm.Sub(sentAt(old[2])) > 300*time.Millisecond {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("server clock does not advance")
			}
			time.Sleep(20 * time.Millisecond)
		}
		for range 1200 { // more than one call examines
			delayed = append(delayed, mustPush(t, c, "q", "d", delayq.PushOptions{Delay: time.Hour}))
		}
		for range 5 {
			inflight = append(inflight, mustPush(t, c, "q", "i", delayq.PushOptions{}))
		}
		ready = append(ready, old...)
		for range 5 {
			ready = append(ready, mustPush(t, c, "q", "r", delayq.PushOptions{}))
		}
		// receive the 5 "i" ones: the oldest 8 ready are old + i; take 8 and
		// give the old ones back
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{N: 8, VT: 2 * time.Hour})
		if err != nil || len(r) != 8 {
			t.Fatal(r, err)
		}
		for _, id := range old {
			if _, err := c.ChangeVisibility(ctx, "q", id, 0); err != nil {
				t.Fatal(err)
			}
		}
		ids := func(ps []delayq.Message, state string) []string {
			var out []string
			for _, p := range ps {
				if p.State != state {
					t.Fatalf("%s has state %s, want %s: %+v", p.ID, p.State, state, p)
				}
				out = append(out, p.ID)
			}
			slices.Sort(out)
			return out
		}
		sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
		peek := func(opt delayq.PeekOptions) []delayq.Message {
			t.Helper()
			ps, err := c.Peek(ctx, "q", opt)
			if err != nil {
				t.Fatal(err)
			}
			return ps
		}
		if got := ids(peek(delayq.PeekOptions{N: 100, State: "ready"}), "ready"); !slices.Equal(got, sorted(ready)) {
			t.Fatalf("ready = %v, want %v", got, sorted(ready))
		}
		if got := ids(peek(delayq.PeekOptions{N: 100, State: "inflight"}), "inflight"); !slices.Equal(got, sorted(inflight)) {
			t.Fatalf("inflight = %v, want %v", got, sorted(inflight))
		}
		if got := ids(peek(delayq.PeekOptions{N: 2000, State: "delayed"}), "delayed"); !slices.Equal(got, sorted(delayed)) {
			t.Fatalf("delayed: %d, want %d", len(got), len(delayed))
		}
		if got := peek(delayq.PeekOptions{N: 7, State: "delayed"}); len(got) != 7 || got[0].ID != delayed[0] {
			t.Fatalf("delayed -n 7 = %d", len(got))
		}
		// Sent before the middle of the gap: only the first three, whatever
		// their state; the 1,200 delayed ones make it take several calls.
		// (The age is taken against the server's time at the call, a few
		// ms after this one: far less than the 150 ms each side.)
		tm, err := b.Client.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		age := tm.Sub(sentAt(old[2]).Add(150 * time.Millisecond))
		if got := ids(peek(delayq.PeekOptions{N: 100, OlderThan: age}), "ready"); !slices.Equal(got, sorted(old)) {
			t.Fatalf("older than %s = %v, want %v", age, got, sorted(old))
		}
		if got := peek(delayq.PeekOptions{N: 100, State: "inflight", OlderThan: age}); len(got) != 0 {
			t.Fatalf("in flight and old = %v", got)
		}
		if got := peek(delayq.PeekOptions{N: 2, OlderThan: time.Nanosecond * 1000}); len(got) != 2 {
			t.Fatalf("-n 2 older than 1µs = %d", len(got))
		}
		if got := peek(delayq.PeekOptions{N: 10, OlderThan: 100 * 365 * 24 * time.Hour}); len(got) != 0 {
			t.Fatalf("older than a century = %d", len(got))
		}
		if _, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 1, State: "done"}); !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("unknown state: %v", err)
		}
		// Unfiltered peek still pages by 50.
		if got := peek(delayq.PeekOptions{N: 120}); len(got) != 120 || got[0].State != "ready" {
			t.Fatalf("peek 120 = %d", len(got))
		}
	})
}
