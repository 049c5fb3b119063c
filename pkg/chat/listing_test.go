package chat_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
)

// all pages through a listing with a small count, as a caller does.
func all(t *testing.T, page func(context.Context, uint64, string, int64) ([]string, uint64, error), match string) []string {
	t.Helper()
	var out []string
	for cursor, calls := uint64(0), 0; ; calls++ {
		if calls > 1000 {
			t.Fatal("the listing does not end")
		}
		names, next, err := page(t.Context(), cursor, match, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		if cursor = next; cursor == 0 {
			slices.Sort(out)
			return out
		}
	}
}

// Chats and Users list the chats and users under the prefix, and nothing
// else: not another prefix's, not other keys that look alike.
func TestChatsAndUsers(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := t.Context()
		for _, id := range []string{"1", "22", "ops"} {
			must(s.Create(ctx, chat.CreateRequest{ID: id, From: "joe", To: []string{"jeff", "u" + id}}))(t)
		}
		other := chat.New(b.Client, chat.Options{Prefix: b.Prefix + "other:"})
		must(other.Create(ctx, chat.CreateRequest{ID: "9", From: "zed", To: []string{"zoe"}}))(t)
		for _, k := range []string{"chat:{x}:other", "chat:{a b}", "seen:{}", "chat:sent"} {
			if err := b.Client.Set(ctx, b.Prefix+k, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := all(t, s.Chats, ""), []string{"1", "22", "ops"}; !slices.Equal(got, want) {
			t.Errorf("chats %q, want %q", got, want)
		}
		if got, want := all(t, s.Chats, "?2"), []string{"22"}; !slices.Equal(got, want) {
			t.Errorf("chats matching ?2: %q, want %q", got, want)
		}
		if got, want := all(t, s.Users, ""), []string{"jeff", "joe", "u1", "u22", "uops"}; !slices.Equal(got, want) {
			t.Errorf("users %q, want %q", got, want)
		}
		if got, want := all(t, s.Users, "u*"), []string{"u1", "u22", "uops"}; !slices.Equal(got, want) {
			t.Errorf("users matching u*: %q, want %q", got, want)
		}
		if _, _, err := s.Chats(ctx, 0, "a}b", 10); !errors.Is(err, chat.ErrInvalid) {
			t.Errorf("a pattern with a brace: %v, want ErrInvalid", err)
		}
	})
}

// Stats reads the stored messages and last id of each chat in one call; a
// chat that does not exist has zeros, one of the wrong type an error of
// its own.
func TestStats(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := t.Context()
		hi := "hi"
		must(s.Create(ctx, chat.CreateRequest{ID: "a", From: "joe", To: []string{"jeff"}, Message: &hi}))(t)
		must(s.Send(ctx, "a", "jeff", "yo"))(t)
		must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t) // jeff saw both; joe not
		must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t)  // now both are deleted
		must(s.Send(ctx, "a", "joe", "again"))(t)
		if err := b.Client.Set(ctx, b.Prefix+"msgs:{bad}", "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
		got := must(s.Stats(ctx, "a", "none", "bad"))(t)
		if len(got) != 3 || got[0] != (chat.Stats{ChatID: "a", Messages: 1, LastID: 3}) ||
			got[1] != (chat.Stats{ChatID: "none"}) || got[2].ChatID != "bad" || got[2].Error == "" {
			t.Errorf("stats %+v", got)
		}
		if _, err := s.Stats(ctx, "a b"); !errors.Is(err, chat.ErrInvalid) {
			t.Errorf("a bad chat id: %v, want ErrInvalid", err)
		}
	})
}
