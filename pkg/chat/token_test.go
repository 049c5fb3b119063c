package chat_test

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/fakeclock"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
)

// A send repeated with the same token returns the first id and stores
// nothing more; the record is a field of its minute's hash in the chat's
// slot, which lives 10 minutes after the write;
// another token sends again; a bad token is refused before any call.
func TestSendTokenRepeatReturnsFirstID(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		clock := newFakeClock(s)
		c, err := s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		opt := chat.SendOptions{Token: rand.Text(), FirstTry: true}
		first, err := s.SendWith(ctx, c.ChatID, "jeff", "once", opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.FirstTry = false // a repeat looks the record up
		for range 2 {
			if again, err := s.SendWith(ctx, c.ChatID, "jeff", "once", opt); err != nil || again != first {
				t.Fatalf("repeat answered %d (%v), want the first id %d", again, err, first)
			}
		}
		if msgs, err := s.History(ctx, c.ChatID, chat.HistoryOptions{}); err != nil || len(msgs) != 1 {
			t.Fatalf("after repeats the chat holds %+v (%v), want one message", msgs, err)
		}
		records := b.Prefix + "sent:{tok}:" + clock.Minute()
		if v, err := b.Client.HGet(ctx, records, opt.Token).Result(); err != nil || !strings.HasPrefix(v, fmt.Sprint(first, " ")) {
			t.Errorf("the record in %s: %q %v; want the id %d and its time", records, v, err, first)
		}
		ttl, err := b.Client.PTTL(ctx, records).Result()
		if err != nil || ttl <= tokenLifetime-time.Minute || ttl > tokenLifetime {
			t.Errorf("the record's hash has PTTL %v (%v); want at most %v, and about that", ttl, err, tokenLifetime)
		}
		if id, err := s.SendWith(ctx, c.ChatID, "jeff", "once", chat.SendOptions{Token: rand.Text()}); err != nil || id != first+1 {
			t.Errorf("another token: %d %v, want id %d", id, err, first+1)
		}
		if _, err := s.SendWith(ctx, c.ChatID, "jeff", "x", chat.SendOptions{Token: "short"}); err == nil {
			t.Error("a 5-character token was accepted")
		}
	})
}

// tokenLifetime is how long a minute's hash of records lives from its
// first write, so a record at least 10 minutes (docs/reliability.md).
const tokenLifetime = 11 * time.Minute

// A create repeated with the same token returns the first chat and makes
// nothing more: with an automatic id (the id taken once), with an explicit
// id, with and without a first message; a join repeated with its token
// says "added" as the first did, and writes nothing.
func TestCreateJoinTokenRepeat(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		clock := newFakeClock(s)
		msg := "first"
		for _, req := range []chat.CreateRequest{
			{From: "joe", To: []string{"jeff"}, Message: &msg, Token: rand.Text()},
			{From: "joe", To: []string{"jeff"}, Token: rand.Text()},
			{From: "joe", To: []string{"jeff"}, ID: "named", Message: &msg, Token: rand.Text()},
		} {
			first, err := s.Create(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			for try := range 2 {
				if again, err := s.Create(ctx, req); err != nil || *again != *first {
					t.Fatalf("%+v try %d: %+v (%v), want the first answer %+v", req, try, again, err, first)
				}
			}
			if msgs, err := s.History(ctx, first.ChatID, chat.HistoryOptions{}); err != nil || len(msgs) != min(int(first.MessageID), 1) {
				t.Errorf("chat %s holds %d messages (%v) after the repeats", first.ChatID, len(msgs), err)
			}
		}
		// Two automatic ids taken (1 and 2), once each: the next is 3.
		if c, err := s.Create(ctx, chat.CreateRequest{From: "ann", To: []string{"bob"}}); err != nil || c.ChatID != "3" {
			t.Errorf("the next automatic chat is %+v (%v), want 3", c, err)
		}
		join := chat.JoinOptions{Token: rand.Text()}
		for try := range 3 {
			j, err := s.JoinWith(ctx, "named", "sam", join)
			if err != nil || !j.Added || j.SeenID != 1 {
				t.Fatalf("join try %d: %+v %v, want added, seen 1", try, j, err)
			}
		}
		// The control: the same join repeated without a token says "already".
		if j, err := s.Join(ctx, "named", "sam"); err != nil || j.Added {
			t.Errorf("a join without a token: %+v %v, want not added", j, err)
		}
		if ms, err := s.Members(ctx, "named"); err != nil || len(ms) != 3 {
			t.Errorf("chat named has %+v (%v), want 3 members", ms, err)
		}
		records := b.Prefix + "sent:{named}:" + clock.Minute()
		if v, err := b.Client.HGet(ctx, records, join.Token).Result(); err != nil || v != "1 1" {
			t.Errorf("the join's record in %s: %q %v; want \"1 1\"", records, v, err)
		}
		if _, err := s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, Token: "short"}); err == nil {
			t.Error("a 5-character token was accepted")
		}
	})
}

// A record written in minute m of the client's clock is found by a repeat
// made in minute m+10 (its last second), from the 11 hashes that repeat
// reads, and is not looked for in minute m+11, when a repeat applies
// again: sends, and the automatic id of a create (newid.lua).
func TestTokenRecordMinutes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		clock := newFakeClock(s)
		create := chat.CreateRequest{From: "joe", To: []string{"jeff"}, Token: rand.Text()}
		c, err := s.Create(ctx, create)
		if err != nil {
			t.Fatal(err)
		}
		send := chat.SendOptions{Token: rand.Text()}
		first, err := s.SendWith(ctx, c.ChatID, "jeff", "once", send)
		if err != nil {
			t.Fatal(err)
		}
		clock.Set(fakeclock.Minute0.Add(10*time.Minute + 59*time.Second))
		if id, err := s.SendWith(ctx, c.ChatID, "jeff", "once", send); err != nil || id != first {
			t.Errorf("send repeated in minute m+10: %d %v; want the first id %d", id, err, first)
		}
		if again, err := s.Create(ctx, create); err != nil || *again != *c {
			t.Errorf("create repeated in minute m+10: %+v %v; want %+v", again, err, c)
		}
		clock.Set(fakeclock.Minute0.Add(11 * time.Minute))
		if id, err := s.SendWith(ctx, c.ChatID, "jeff", "once", send); err != nil || id != first+1 {
			t.Errorf("send repeated in minute m+11: %d %v; want a new message, %d", id, err, first+1)
		}
		if again, err := s.Create(ctx, create); err != nil || again.ChatID == c.ChatID {
			t.Errorf("create repeated in minute m+11: %+v %v; want another chat", again, err)
		}
	})
}

// A busy stream of sends with tokens writes one record key per minute,
// not one per send: 1,000 sends over 11 minutes of the client's clock
// leave at most 11 keys under sent:{ID}:*, holding the 1,000 records; a
// key of another type under a record key's name is refused (WRONGTYPE)
// with nothing sent.
func TestTokenRecordsFewKeys(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		clock := newFakeClock(s)
		if _, err := s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "busy"}); err != nil {
			t.Fatal(err)
		}
		const sends = 1000
		for i := range sends {
			clock.Set(fakeclock.Minute0.Add(time.Duration(i) * 11 * time.Minute / sends))
			if _, err := s.SendWith(ctx, "busy", "joe", "m", chat.SendOptions{Token: rand.Text()}); err != nil {
				t.Fatal(err)
			}
		}
		redistest.RequireRecords(t, b, "sent:{busy}:*", 11, sends)

		other := b.Prefix + "sent:{busy}:" + fmt.Sprint(fakeclock.Minute0.UnixMilli()/60000+12)
		if err := b.Client.Set(ctx, other, "x", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		clock.Set(fakeclock.Minute0.Add(13 * time.Minute))
		for _, call := range []func() error{
			func() error {
				_, err := s.SendWith(ctx, "busy", "joe", "refused", chat.SendOptions{Token: rand.Text()})
				return err
			},
			func() error {
				_, err := s.JoinWith(ctx, "busy", "ann", chat.JoinOptions{Token: rand.Text()})
				return err
			},
		} {
			if err := call(); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
				t.Errorf("a string among the record keys: %v, want WRONGTYPE", err)
			}
		}
		if msgs, err := s.History(ctx, "busy", chat.HistoryOptions{}); err != nil || len(msgs) != sends {
			t.Errorf("the chat holds %d messages (%v), want %d", len(msgs), err, sends)
		}
		if ms, err := s.Members(ctx, "busy"); err != nil || len(ms) != 2 {
			t.Errorf("the chat has %d members (%v), want 2", len(ms), err)
		}
	})
}

// newFakeClock gives s a clock at fakeclock.Minute0.
func newFakeClock(s *chat.Client) *fakeclock.Clock {
	f := fakeclock.New()
	chat.SetClock(s, f.Now)
	return f
}
