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
