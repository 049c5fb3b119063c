package delayq_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/fakeclock"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// A push repeated with the same token returns the first answer and stores
// nothing more; the record expires after 10 minutes; another token
// pushes again.
func TestPushTokenRepeatReturnsFirstAnswer(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		mustCreate(t, c, "tok", delayq.Attributes{})
		// The first try looks nothing up (FirstTry), the repeat does.
		opt := delayq.PushOptions{Token: rand.Text(), Delay: time.Minute, FirstTry: true}
		first, err := c.Push(ctx, "tok", "once", opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.FirstTry = false
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
		if _, err := c.Push(ctx, "tok", "once", delayq.PushOptions{Token: rand.Text()}); err != nil {
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

// The record is a field of the HASH of its minute of the client's clock
// beside the queue's keys (in its slot on a Cluster), which lives 10
// minutes after the write.
func TestPushTokenRecordExpires(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		clock := newFakeClock(c)
		mustCreate(t, c, "tok", delayq.Attributes{})
		tok := rand.Text()
		if _, err := c.Push(ctx, "tok", "once", delayq.PushOptions{Token: tok}); err != nil {
			t.Fatal(err)
		}
		key := b.Prefix + "rsmq:tok:T:" + clock.Minute()
		if v, err := b.Client.HGet(ctx, key, tok).Result(); err != nil || !strings.HasPrefix(v, `["ok",`) {
			t.Fatalf("HGET %s %s: %q %v; want the push's answer", key, tok, v, err)
		}
		ttl, err := b.Client.PTTL(ctx, key).Result()
		if err != nil || ttl <= tokenLifetime-time.Minute || ttl > tokenLifetime {
			t.Errorf("the record's hash has PTTL %v (%v); want at most %v, and about that", ttl, err, tokenLifetime)
		}
	})
}

// A record written in minute m of the client's clock is found by a repeat
// made in minute m+10 (its last second), from the 11 hashes that repeat
// reads, and is not looked for in minute m+11: the record lives 10
// minutes, and a repeat that late pushes again. Pops likewise.
func TestTokenRecordMinutes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		clock := newFakeClock(c)
		mustCreate(t, c, "tokmin", delayq.Attributes{})
		push := delayq.PushOptions{Token: rand.Text()}
		first, err := c.Push(ctx, "tokmin", "once", push)
		if err != nil {
			t.Fatal(err)
		}
		mustPush(t, c, "tokmin", "second", delayq.PushOptions{})
		pop := delayq.ReceiveOptions{Pop: true, Token: rand.Text()}
		popped, err := c.Receive(ctx, "tokmin", pop)
		if err != nil || len(popped) != 1 || popped[0].ID != first.ID {
			t.Fatalf("pop: %+v %v; want %s", popped, err, first.ID)
		}

		clock.Set(fakeclock.Minute0.Add(10*time.Minute + 59*time.Second)) // minute m+10
		again, err := c.Push(ctx, "tokmin", "once", push)
		if err != nil || *again != *first {
			t.Errorf("repeat in minute m+10: %+v %v; want the first answer %+v", again, err, first)
		}
		if m, err := c.Receive(ctx, "tokmin", pop); err != nil || len(m) != 1 || m[0].ID != first.ID {
			t.Errorf("pop repeated in minute m+10: %+v %v; want %s again", m, err, first.ID)
		}
		if st, err := c.Stats(ctx, "tokmin"); err != nil || st.Messages != 1 || st.TotalSent != 2 || st.TotalRecv != 1 {
			t.Errorf("after the repeats: %+v %v; want 1 message, 2 sent, 1 received", st, err)
		}

		clock.Set(fakeclock.Minute0.Add(11 * time.Minute)) // minute m+11: past the record's lifetime
		if p, err := c.Push(ctx, "tokmin", "once", push); err != nil || p.ID == first.ID {
			t.Errorf("repeat in minute m+11: %+v %v; want a new push", p, err)
		}
		if m, err := c.Receive(ctx, "tokmin", pop); err != nil || len(m) != 1 || m[0].ID == first.ID {
			t.Errorf("pop repeated in minute m+11: %+v %v; want the next message", m, err)
		}
		if st, err := c.Stats(ctx, "tokmin"); err != nil || st.TotalSent != 3 || st.TotalRecv != 2 {
			t.Errorf("after minute m+11: %+v %v; want 3 sent, 2 received", st, err)
		}
	})
}

// A busy stream of calls with tokens writes one record key per minute,
// not one per call: 1,000 pushes over 11 minutes of the client's clock
// leave 11 keys under <ns>:<q>:T:*, holding the 1,000 records.
func TestTokenRecordsFewKeys(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		clock := newFakeClock(c)
		mustCreate(t, c, "tokbusy", delayq.Attributes{})
		const pushes = 1000
		for i := range pushes {
			clock.Set(fakeclock.Minute0.Add(time.Duration(i) * 11 * time.Minute / pushes))
			if _, err := c.Push(ctx, "tokbusy", "m", delayq.PushOptions{Token: rand.Text()}); err != nil {
				t.Fatal(err)
			}
		}
		redistest.RequireRecords(t, b, "rsmq:tokbusy:T:*", 11, pushes)
	})
}

// newFakeClock gives c a clock at fakeclock.Minute0.
func newFakeClock(c *delayq.Client) *fakeclock.Clock {
	f := fakeclock.New()
	delayq.SetClock(c, f.Now)
	return f
}

// A pop repeated with the same token returns the same messages, byte for
// byte, and pops nothing else; over 100 messages (two script calls, two
// records) too; a pop that found nothing records nothing.
func TestPopTokenRepeatReturnsSameMessages(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		mustCreate(t, c, "tokpop", delayq.Attributes{})
		opt := delayq.ReceiveOptions{Pop: true, Token: rand.Text()}
		if m, err := c.Receive(ctx, "tokpop", opt); err != nil || len(m) != 0 {
			t.Fatalf("pop of an empty queue: %v %v", m, err)
		}
		bodies := []string{"first: a:b 12:x", "second"}
		for i := range 150 {
			bodies = append(bodies, fmt.Sprintf("m%d", i))
		}
		for _, body := range bodies {
			mustPush(t, c, "tokpop", body, delayq.PushOptions{})
		}
		// The empty pop above recorded nothing: this one pops.
		first, err := c.Receive(ctx, "tokpop", opt)
		if err != nil || len(first) != 1 || first[0].Body != bodies[0] {
			t.Fatalf("pop: %v %v", first, err)
		}
		for range 2 {
			again, err := c.Receive(ctx, "tokpop", opt)
			if err != nil || len(again) != 1 || again[0].ID != first[0].ID || again[0].Body != first[0].Body || again[0].RC != first[0].RC {
				t.Fatalf("repeat answered %+v (%v), want %+v", again, err, first)
			}
		}
		if st, err := c.Stats(ctx, "tokpop"); err != nil || st.Messages != int64(len(bodies)-1) || st.TotalRecv != 1 {
			t.Fatalf("after repeats: %+v %v; want %d messages, 1 received", st, err, len(bodies)-1)
		}

		many := delayq.ReceiveOptions{Pop: true, N: 120, Token: rand.Text(), FirstTry: true}
		got, err := c.Receive(ctx, "tokpop", many)
		if err != nil || len(got) != 120 {
			t.Fatalf("pop 120: %d %v", len(got), err)
		}
		many.FirstTry = false
		again, err := c.Receive(ctx, "tokpop", many)
		if err != nil || len(again) != 120 {
			t.Fatalf("repeat of pop 120: %d %v", len(again), err)
		}
		for i := range got {
			if got[i].ID != again[i].ID || got[i].Body != again[i].Body {
				t.Fatalf("repeat's message %d is %+v, want %+v", i, again[i], got[i])
			}
		}
		if st, err := c.Stats(ctx, "tokpop"); err != nil || st.Messages != int64(len(bodies)-121) {
			t.Fatalf("after the repeat of pop 120: %+v %v; want %d messages", st, err, len(bodies)-121)
		}
		if _, err := c.Receive(ctx, "tokpop", delayq.ReceiveOptions{Pop: true, Token: "short"}); err == nil {
			t.Error("a 5-character token was accepted")
		}
	})
}

// A pop's record lives 10 minutes beside the queue's keys; a body that
// is not valid UTF-8 (another client's) comes back byte for byte.
func TestPopTokenRecord(t *testing.T) {
	b := redistest.Real(t)
	ctx := t.Context()
	c := newClient(t, b)
	clock := newFakeClock(c)
	mustCreate(t, c, "tokrec", delayq.Attributes{})
	raw := "\xff\xfe:1:\x00 not UTF-8"
	id := mustPush(t, c, "tokrec", "placeholder", delayq.PushOptions{})
	if err := b.Client.HSet(ctx, b.Prefix+"rsmq:tokrec:Q", id, raw).Err(); err != nil {
		t.Fatal(err)
	}
	tok := rand.Text()
	opt := delayq.ReceiveOptions{Pop: true, Token: tok}
	for range 2 {
		m, err := c.Receive(ctx, "tokrec", opt)
		if err != nil || len(m) != 1 || m[0].Body != raw || m[0].ID != id {
			t.Fatalf("pop: %+v %v; want %s %q", m, err, id, raw)
		}
	}
	records := b.Prefix + "rsmq:tokrec:T:" + clock.Minute()
	ttl, err := b.Client.PTTL(ctx, records).Result()
	if err != nil || ttl <= tokenLifetime-time.Minute || ttl > tokenLifetime {
		t.Errorf("the record's PTTL is %v (%v); want about %v", ttl, err, tokenLifetime)
	}
	// A record that is not one is refused, nothing popped; so is a key of
	// another type under a record key's name (minute m+1's, which a call
	// in minute m+3 reads), which HGET refuses before anything is written.
	mustPush(t, c, "tokrec", "kept", delayq.PushOptions{})
	bad := rand.Text()
	if err := b.Client.HSet(ctx, records, bad, "9:short").Err(); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Receive(ctx, "tokrec", delayq.ReceiveOptions{Pop: true, Token: bad}); err == nil {
		t.Errorf("a corrupt record answered %+v", m)
	}
	clock.Set(fakeclock.Minute0.Add(3 * time.Minute))
	other := b.Prefix + "rsmq:tokrec:T:" + fmt.Sprint(fakeclock.Minute0.UnixMilli()/60000+1)
	if err := b.Client.Set(ctx, other, "x", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{rand.Text(), tok} {
		if m, err := c.Receive(ctx, "tokrec", delayq.ReceiveOptions{Pop: true, Token: tok}); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("a record key that is a string: %+v %v; want WRONGTYPE", m, err)
		}
	}
	if st, err := c.Stats(ctx, "tokrec"); err != nil || st.Messages != 1 || st.TotalRecv != 1 {
		t.Errorf("after a corrupt record: %+v %v; want the message kept", st, err)
	}
}

// A batch pushed with a token (the first due's) and repeated returns the
// first answer and stores nothing more.
func TestPushManyTokenRepeat(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		mustCreate(t, c, "tokmany", delayq.Attributes{})
		due := []delayq.PushOptions{{Token: rand.Text(), FirstTry: true}}
		first, err := c.PushMany(ctx, "tokmany", []string{"a", "b", "c"}, delayq.PushManyOptions{Due: due})
		if err != nil {
			t.Fatal(err)
		}
		due[0].FirstTry = false
		again, err := c.PushMany(ctx, "tokmany", []string{"a", "b", "c"}, delayq.PushManyOptions{Due: due})
		if err != nil || len(again) != 3 {
			t.Fatalf("repeat: %+v %v", again, err)
		}
		for i := range first {
			if again[i] != first[i] {
				t.Errorf("repeat's message %d is %+v, want %+v", i, again[i], first[i])
			}
		}
		if st, err := c.Stats(ctx, "tokmany"); err != nil || st.Messages != 3 || st.TotalSent != 3 {
			t.Errorf("after a repeat: %+v %v; want 3 messages, 3 sent", st, err)
		}
	})
}

// tokenLifetime is how long a minute's hash of records lives from its
// first write, so a record at least 10 minutes (docs/reliability.md).
const tokenLifetime = 11 * time.Minute

// An ack or a retry repeated with the same token returns the first answer
// and changes nothing more, over 120 messages (two script calls, two
// records); without a token the repeat reports the acked messages as
// missing, which is what a caller whose reply was lost used to learn.
func TestAckRetryTokenRepeat(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		clock := newFakeClock(c)
		mustCreate(t, c, "tokack", delayq.Attributes{})
		var ids []string
		for i := range 125 {
			ids = append(ids, mustPush(t, c, "tokack", fmt.Sprint("m", i), delayq.PushOptions{}))
		}
		got, err := c.Receive(ctx, "tokack", delayq.ReceiveOptions{N: 125, VT: time.Hour})
		if err != nil || len(got) != 125 {
			t.Fatalf("receive: %d %v", len(got), err)
		}
		var receipts []string
		for _, m := range got {
			receipts = append(receipts, m.Receipt)
		}

		retry := delayq.AckOptions{Token: rand.Text()}
		first, err := c.AckWith(ctx, "tokack", withDelay(retry, time.Minute), receipts[120:]...)
		if err != nil || first.Retried != 5 {
			t.Fatalf("retry: %+v %v", first, err)
		}
		for range 2 {
			again, err := c.AckWith(ctx, "tokack", withDelay(retry, time.Hour), receipts[120:]...)
			if err != nil || again.Retried != 5 || !again.VisibleAt.Equal(first.VisibleAt) {
				t.Fatalf("repeated retry: %+v %v; want %+v", again, err, first)
			}
		}
		if m, err := c.Get(ctx, "tokack", ids[120]); err != nil || !m.VisibleAt.Equal(first.VisibleAt) {
			t.Errorf("after the repeats the message is visible at %v (%v), want %v: a repeat changed it", m.VisibleAt, err, first.VisibleAt)
		}

		ack := delayq.AckOptions{Token: rand.Text()}
		for try := range 3 {
			ack.FirstTry = try == 0
			r, err := c.AckWith(ctx, "tokack", ack, receipts[:120]...)
			if err != nil || r.Acked != 120 || len(r.Missing)+len(r.Stale) != 0 {
				t.Fatalf("ack try %d: %+v %v; want 120 acked", try, r, err)
			}
		}
		if st, err := c.Stats(ctx, "tokack"); err != nil || st.Messages != 5 {
			t.Errorf("after the acks: %+v %v; want 5 messages left", st, err)
		}
		// The control: the same repeat without a token finds nothing.
		if _, err := c.Ack(ctx, "tokack", ids[0]); !errors.Is(err, delayq.ErrMessageNotFound) {
			t.Errorf("an ack repeated without a token: %v, want ErrMessageNotFound", err)
		}
		records := b.Prefix + "rsmq:tokack:T:" + clock.Minute()
		if ok, err := b.Client.HExists(ctx, records, ack.Token+".2").Result(); err != nil || !ok {
			t.Errorf("the second call's record %s in %s: %v %v", ack.Token+".2", records, ok, err)
		}
		if _, err := c.AckWith(ctx, "tokack", delayq.AckOptions{Token: "short"}, ids[121]); err == nil {
			t.Error("a 5-character token was accepted")
		}
	})
}

// withDelay is opt as a retry after d.
func withDelay(opt delayq.AckOptions, d time.Duration) delayq.AckOptions {
	opt.Retry, opt.Delay = true, d
	return opt
}
