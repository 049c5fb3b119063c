package chat_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/redis/go-redis/v9"
)

// manyChats makes chats 1..k from joe to jeff, each with messages 1..n.
func manyChats(t *testing.T, s *chat.Client, k, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 1; i <= k; i++ {
		id := strconv.Itoa(i)
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: id, Message: ptr("m1")}))(t)
		for j := 2; j <= n; j++ {
			must(s.Send(ctx, id, "joe", fmt.Sprint("m", j)))(t)
		}
	}
}

// TestManyChats: a user in more chats than the prefilter threshold is read
// with plain commands and marked with marks.lua; what comes back and what
// is marked and deleted is what the fetch and mark scripts give a user in
// few chats, including the after cursor, chats without news, reads longer
// than a chunk and deletions over the per-call budget.
func TestManyChats(t *testing.T) {
	modesWith(t, chat.Options{ChunkSize: 3}, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		manyChats(t, s, 12, 1)
		// Chat 3 has 7 messages (3 chunks), chat 5 two, the others one.
		for j := 2; j <= 7; j++ {
			must(s.Send(ctx, "3", "joe", fmt.Sprint("m", j)))(t)
		}
		must(s.Send(ctx, "5", "joe", "m2"))(t)
		// joe has read everything, so jeff's marking deletes what he read.
		must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t)
		peek := must(s.Pending(ctx, "jeff", chat.PendingOptions{Peek: true, After: map[string]int64{"5": 1}}))(t)
		if len(peek) != 12 || len(peek[2].Messages) != 7 || peek[2].Messages[6].ID != 7 || len(peek[4].Messages) != 1 || peek[4].Messages[0].ID != 2 {
			t.Fatalf("peek = %q", summary(peek))
		}
		got := must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)
		if len(got) != 12 || summary(got) != strings.Replace(summary(peek), "5:2/joe/m2", "5:1/joe/m1 5:2/joe/m2", 1) {
			t.Fatalf("pending = %q", summary(got))
		}
		if again := must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t); len(again) != 0 {
			t.Fatalf("pending again = %q", summary(again))
		}
		for i := 1; i <= 12; i++ {
			if n := b.Client.ZCard(ctx, b.Prefix+"msgs:{"+strconv.Itoa(i)+"}").Val(); n != 0 {
				t.Errorf("chat %d: %d seen messages left", i, n)
			}
		}
		cs := must(s.UserChats(ctx, "jeff"))(t)
		if len(cs) != 12 || cs[2].SeenID != 7 || cs[4].SeenID != 2 || cs[11].SeenID != 1 {
			t.Fatalf("chats = %+v", cs)
		}
		// News in two chats only.
		must(s.Send(ctx, "4", "joe", "m2"))(t)
		must(s.Send(ctx, "12", "joe", "m2"))(t)
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)); got != "4:2/joe/m2 12:2/joe/m2" {
			t.Fatalf("pending = %q", got)
		}
	})
}

// TestManyChatsMarkFailsAlone: with marks.lua, a chat that cannot be
// marked (its key broken after the read) fails alone; the others are
// marked, and it is delivered again once repaired.
func TestManyChatsMarkFailsAlone(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		manyChats(t, s, 10, 1)
		got := must(s.Pending(ctx, "jeff", chat.PendingOptions{Peek: true}))(t)
		key := b.Prefix + "msgs:{4}"
		b.Client.Rename(ctx, key, key+":saved")
		b.Client.HSet(ctx, key, "x", "y")
		err := s.MarkSeen(ctx, "jeff", got)
		if err == nil || !strings.Contains(err.Error(), "chat 4") || strings.Contains(err.Error(), "chat 5") {
			t.Fatalf("mark: %v", err)
		}
		b.Client.Del(ctx, key)
		b.Client.Rename(ctx, key+":saved", key)
		if again := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)); again != "4:1/joe/m1" {
			t.Fatalf("pending after a failed mark = %q", again)
		}
	})
}

// TestManyChatsLostReplies: for a user in many chats as for one in few,
// a lost reply to the read marks nothing, and a lost reply to the marking
// returns the messages with the error.
func TestManyChatsLostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		s, proxy := proxied(t, b)
		manyChats(t, s, 10, 1)
		must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t) // loads the scripts

		proxy.DropReplyTo("zrangebyscore")
		got, err := s.Pending(ctx, "jeff", chat.PendingOptions{})
		if err == nil || len(got) != 0 || !dropped(proxy, 1) {
			t.Fatalf("lost read: %v, %v", got, err)
		}
		direct := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		if got := must(direct.Pending(ctx, "jeff", chat.PendingOptions{Peek: true}))(t); len(got) != 10 {
			t.Fatalf("after a lost read, pending = %q", summary(got))
		}

		proxy.DropReplyTo(chat.MarksSHA())
		got, err = s.Pending(ctx, "jeff", chat.PendingOptions{})
		if err == nil || len(got) != 10 || !dropped(proxy, 2) {
			t.Fatalf("lost mark: %d chats, err %v", len(got), err)
		}
		// The server did apply it.
		if again := must(direct.Pending(ctx, "jeff", chat.PendingOptions{}))(t); len(again) != 0 {
			t.Fatalf("after a lost mark = %q", summary(again))
		}
	})
}

// TestIndexInPages: seen:{USER} read a few entries a call gives every chat
// once: with ties of seen ids over a page, and with entries that move or
// leave between two calls.
func TestIndexInPages(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		defer chat.SetPages(chat.SetPages(6, 2))
		c := redis.NewClient(must(redis.ParseURL(b.URL))(t))
		defer c.Close()
		s := chat.New(c, chat.Options{Prefix: b.Prefix})
		var want []string
		for i := 1; i <= 30; i++ {
			id := strconv.Itoa(i)
			want = append(want, id)
			must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff", "sam", "kim"}, ID: id}))(t)
			// jeff: 10 chats at seen id 0, 10 at 1, the rest at 2..11;
			// sam: two chats per seen id; kim: 6 at 0, 12 at 1, 12 at 2
			// (pages that each hold one seen id, some after an offset).
			jeff := 0
			if i > 20 {
				jeff = i - 19
			} else if i > 10 {
				jeff = 1
			}
			b.Client.ZAdd(ctx, b.Prefix+"seen:{jeff}", redis.Z{Score: float64(jeff), Member: id})
			b.Client.ZAdd(ctx, b.Prefix+"seen:{sam}", redis.Z{Score: float64(i / 2), Member: id})
			b.Client.ZAdd(ctx, b.Prefix+"seen:{kim}", redis.Z{Score: float64(min((i+5)/6, 3) - 1), Member: id})
		}
		ids := func(user string) []string {
			var got []string
			for _, ci := range must(s.UserChats(ctx, user))(t) {
				got = append(got, ci.ChatID)
			}
			return got
		}
		for _, user := range []string{"jeff", "sam", "kim"} {
			if got := ids(user); !slices.Equal(got, want) {
				t.Fatalf("%s's chats = %v, want %v", user, got, want)
			}
		}
		// Between two pages, move a chat read already (1) past the others
		// and drop another (2): every chat is still listed once (2 was
		// read before it left), where pages by rank would skip one.
		calls := 0
		c.AddHook(beforeZRange(func() {
			calls++
			if calls == 2 {
				b.Client.ZAdd(ctx, b.Prefix+"seen:{sam}", redis.Z{Score: 100, Member: "1"})
				b.Client.ZRem(ctx, b.Prefix+"seen:{sam}", "2")
			}
		}))
		if got := ids("sam"); calls < 3 || !slices.Equal(got, want) {
			t.Fatalf("%d calls; chats = %v", calls, got)
		}
	})
}

// beforeZRange is a hook that runs fn before every ZRANGE a client sends.
type beforeZRange func()

func (h beforeZRange) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h beforeZRange) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.EqualFold(cmd.Name(), "zrange") {
			h()
		}
		return next(ctx, cmd)
	}
}
func (h beforeZRange) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
