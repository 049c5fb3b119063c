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
)

// PushMany stores its messages in one call, in order, with the due time
// each was given, and counts them in totalsent.
func TestPushMany(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		// Three calls of 100: receive gives them back in the order given.
		var want, ids []string
		for call := range 3 {
			bodies := make([]string, 100)
			for i := range bodies {
				bodies[i] = fmt.Sprintf("m%03d", call*100+i)
			}
			ps, err := c.PushMany(ctx, "q", bodies, delayq.PushManyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != len(bodies) {
				t.Fatalf("%d results for %d messages", len(ps), len(bodies))
			}
			for _, p := range ps {
				if !idRE.MatchString(p.ID) {
					t.Fatalf("id %q is not RSMQ's format", p.ID)
				}
				// The id's time is the server's push time, to the microsecond.
				if d := sentAt(p.ID).Sub(p.Sent); d < 0 || d >= time.Millisecond || !p.VisibleAt.Equal(p.Sent) || !p.Notified {
					t.Fatalf("pushed %+v: id time %v", p, sentAt(p.ID))
				}
				ids = append(ids, p.ID)
			}
			want = append(want, bodies...)
		}
		if !slices.IsSorted(ids) {
			t.Errorf("ids not in the order given: %v", ids)
		}
		if len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Errorf("an id twice: %v", ids)
		}
		if n := b.Client.HGet(ctx, b.Prefix+"rsmq:q:Q", "totalsent").Val(); n != "300" {
			t.Errorf("totalsent %s, want 300", n)
		}
		var got []string
		for len(got) < len(want) {
			r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{N: 100, Pop: true})
			if err != nil || len(r) == 0 {
				t.Fatalf("receive after %d: %v %v", len(got), r, err)
			}
			for _, m := range r {
				got = append(got, m.Body)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("received %v\nwant %v", got, want)
		}

		// Due times: one for all, or one per message.
		ps, err := c.PushMany(ctx, "q", []string{"a", "b"}, delayq.PushManyOptions{Due: []delayq.PushOptions{{Delay: time.Hour}}})
		if err != nil || !ps[0].VisibleAt.Equal(ps[0].Sent.Add(time.Hour)) || !ps[1].VisibleAt.Equal(ps[1].Sent.Add(time.Hour)) {
			t.Fatalf("one delay for all: %+v %v", ps, err)
		}
		at := time.UnixMilli(time.Now().Add(time.Minute).UnixMilli())
		ps, err = c.PushMany(ctx, "q", []string{"now", "at", "default"}, delayq.PushManyOptions{Due: []delayq.PushOptions{{Delay: -1}, {At: at}, {}}})
		if err != nil || !ps[0].VisibleAt.Equal(ps[0].Sent) || !ps[1].VisibleAt.Equal(at) || !ps[2].VisibleAt.Equal(ps[2].Sent) {
			t.Fatalf("one due time each: %+v %v", ps, err)
		}
		st, err := c.Stats(ctx, "q")
		if err != nil || st.Ready != 2 || st.Delayed != 3 || st.TotalSent != 305 {
			t.Fatalf("stats %+v %v", st, err)
		}
		if ps, err := c.PushMany(ctx, "q", nil, delayq.PushManyOptions{}); err != nil || len(ps) != 0 {
			t.Fatalf("no messages: %v %v", ps, err)
		}
	})
}

// A PushMany that fails writes nothing: the client's checks come before
// any call, the script's before its first write.
func TestPushManyRefuses(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{MaxSize: 1024})
		mustPush(t, c, "q", "already there", delayq.PushOptions{})
		before := dump(t, b.Client, b.Prefix)
		far := time.Now().Add(200 * 24 * time.Hour)
		for _, tc := range []struct {
			name   string
			q      string
			bodies []string
			due    []delayq.PushOptions
			is     error
			text   string
		}{
			{"over maxsize", "q", []string{"ok", strings.Repeat("x", 1025), "ok"}, nil, delayq.ErrMessageTooLong, "message 2: message too long (1025 > maxsize 1024)"},
			{"at too far ahead", "q", []string{"ok", "ok", "far"}, []delayq.PushOptions{{}, {}, {At: far}}, delayq.ErrInvalid, "message 3: at "},
			{"not UTF-8", "q", []string{"ok", "caf\xe9"}, nil, delayq.ErrInvalid, "message 2: not valid UTF-8"},
			{"a bad delay", "q", []string{"ok", "ok"}, []delayq.PushOptions{{}, {Delay: -time.Second}}, delayq.ErrInvalid, "message 2: "},
			{"due times that do not match", "q", []string{"a", "b", "c"}, make([]delayq.PushOptions, 2), delayq.ErrInvalid, "2 due times for 3 messages"},
			// More than one batch: the queue's maxsize is checked first.
			{"over maxsize in a later batch", "q", append(make([]string, 149), strings.Repeat("x", 1025)), nil, delayq.ErrMessageTooLong, "message 150: message too long (1025 > maxsize 1024)"},
			{"missing queue", "nosuch", []string{"x"}, nil, delayq.ErrQueueNotFound, "nosuch"},
			{"bad name", "QUEUES", []string{"x"}, nil, delayq.ErrInvalid, ""},
		} {
			_, err := c.PushMany(ctx, tc.q, tc.bodies, delayq.PushManyOptions{Due: tc.due})
			if !errors.Is(err, tc.is) || !strings.Contains(fmt.Sprint(err), tc.text) {
				t.Errorf("%s: %v, want %v with %q", tc.name, err, tc.is, tc.text)
			}
			if after := dump(t, b.Client, b.Prefix); after != before {
				t.Fatalf("%s changed keys:\n%s\nto\n%s", tc.name, before, after)
			}
		}
		// A wrong type where the ZSET should be.
		if err := b.Client.Del(ctx, b.Prefix+"rsmq:q").Err(); err != nil {
			t.Fatal(err)
		}
		b.Client.Set(ctx, b.Prefix+"rsmq:q", "garbage", 0)
		before = dump(t, b.Client, b.Prefix)
		if _, err := c.PushMany(ctx, "q", []string{"x", "y"}, delayq.PushManyOptions{}); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("push onto a string: %v", err)
		}
		if after := dump(t, b.Client, b.Prefix); after != before {
			t.Fatalf("a failed push changed keys:\n%s\nto\n%s", before, after)
		}
	})
}

// One PushMany publishes once on the realtime channel, the count after it.
func TestPushManyPublishesOnce(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		sub := b.Client.Subscribe(ctx, b.Prefix+"rsmq:rt:q")
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil { // the confirmation
			t.Fatal(err)
		}
		if _, err := c.PushMany(ctx, "q", []string{"a", "b", "c"}, delayq.PushManyOptions{}); err != nil {
			t.Fatal(err)
		}
		mustPush(t, c, "q", "d", delayq.PushOptions{})
		var got []string
		for len(got) < 2 {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			m, err := sub.ReceiveMessage(rctx)
			cancel()
			if err != nil {
				t.Fatalf("after %v: %v", got, err)
			}
			got = append(got, m.Payload)
		}
		// The batch's one notification, then the single push's.
		if !slices.Equal(got, []string{"3", "4"}) {
			t.Errorf("notifications %v, want [3 4]", got)
		}
	})
}
