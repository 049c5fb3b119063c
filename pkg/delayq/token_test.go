package delayq_test

import (
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// A push repeated with the same token returns the first answer and stores
// nothing more; the record expires after TokenLifetime; another token
// pushes again.
func TestPushTokenRepeatReturnsFirstAnswer(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		mustCreate(t, c, "tok", delayq.Attributes{})
		opt := delayq.PushOptions{Token: delayq.NewToken(), Delay: time.Minute}
		first, err := c.Push(ctx, "tok", "once", opt)
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.Push(ctx, "tok", "once", opt)
		if err != nil {
			t.Fatal(err)
		}
		if *again != *first {
			t.Errorf("repeat answered %+v, want the first answer %+v", again, first)
		}
		st, err := c.Stats(ctx, "tok")
		if err != nil {
			t.Fatal(err)
		}
		if st.Messages != 1 || st.TotalSent != 1 {
			t.Errorf("after a repeat: %d messages, totalsent %d; want 1 and 1", st.Messages, st.TotalSent)
		}
		if _, err := c.Push(ctx, "tok", "once", delayq.PushOptions{Token: delayq.NewToken()}); err != nil {
			t.Fatal(err)
		}
		if st, _ := c.Stats(ctx, "tok"); st == nil || st.Messages != 2 {
			t.Errorf("another token did not push: %+v", st)
		}
		if _, err := c.Push(ctx, "tok", "x", delayq.PushOptions{Token: "short"}); err == nil {
			t.Error("a 5-character token was accepted")
		}
	})
}

// The record is a STRING beside the queue's keys (in its slot on a
// Cluster) with a lifetime of TokenLifetime.
func TestPushTokenRecordExpires(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		mustCreate(t, c, "tok", delayq.Attributes{})
		tok := delayq.NewToken()
		if _, err := c.Push(ctx, "tok", "once", delayq.PushOptions{Token: tok}); err != nil {
			t.Fatal(err)
		}
		var ttl time.Duration
		for _, key := range []string{b.Prefix + "rsmq:tok:T:" + tok, b.Prefix + "rsmq:{tok}:T:" + tok} {
			if d, err := b.Client.PTTL(ctx, key).Result(); err == nil && d > ttl {
				ttl = d
			}
		}
		if ttl <= delayq.TokenLifetime-time.Minute || ttl > delayq.TokenLifetime {
			t.Errorf("the record's PTTL is %v; want about %v", ttl, delayq.TokenLifetime)
		}
	})
}
