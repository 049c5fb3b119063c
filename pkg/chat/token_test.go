package chat_test

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
)

// A send repeated with the same token returns the first id and stores
// nothing more; the record lives 10 minutes in the chat's slot;
// another token sends again; a bad token is refused before any call.
func TestSendTokenRepeatReturnsFirstID(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		c, err := s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		opt := chat.SendOptions{Token: rand.Text()}
		first, err := s.SendWith(ctx, c.ChatID, "jeff", "once", opt)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if again, err := s.SendWith(ctx, c.ChatID, "jeff", "once", opt); err != nil || again != first {
				t.Fatalf("repeat answered %d (%v), want the first id %d", again, err, first)
			}
		}
		if msgs, err := s.History(ctx, c.ChatID, chat.HistoryOptions{}); err != nil || len(msgs) != 1 {
			t.Fatalf("after repeats the chat holds %+v (%v), want one message", msgs, err)
		}
		ttl, err := b.Client.PTTL(ctx, b.Prefix+"sent:{tok}:"+opt.Token).Result()
		if err != nil || ttl <= tokenLifetime-time.Minute || ttl > tokenLifetime {
			t.Errorf("the record's PTTL is %v (%v); want about %v", ttl, err, tokenLifetime)
		}
		if id, err := s.SendWith(ctx, c.ChatID, "jeff", "once", chat.SendOptions{Token: rand.Text()}); err != nil || id != first+1 {
			t.Errorf("another token: %d %v, want id %d", id, err, first+1)
		}
		if _, err := s.SendWith(ctx, c.ChatID, "jeff", "x", chat.SendOptions{Token: "short"}); err == nil {
			t.Error("a 5-character token was accepted")
		}
	})
}

// tokenLifetime is how long a record lasts (docs/reliability.md).
const tokenLifetime = 10 * time.Minute

// A create repeated with the same token returns the first chat and makes
// nothing more: with an automatic id (the id taken once), with an explicit
// id, with and without a first message; a join repeated with its token
// says "added" as the first did, and writes nothing.
func TestCreateJoinTokenRepeat(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
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
		ttl, err := b.Client.PTTL(ctx, b.Prefix+"sent:{named}:"+join.Token).Result()
		if err != nil || ttl <= tokenLifetime-time.Minute || ttl > tokenLifetime {
			t.Errorf("the join's record: PTTL %v (%v); want about %v", ttl, err, tokenLifetime)
		}
		if _, err := s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, Token: "short"}); err == nil {
			t.Error("a 5-character token was accepted")
		}
	})
}
