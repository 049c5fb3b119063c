package chat_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/redis/go-redis/v9"
)

// modes runs fn on both backends, with seen:{USER} written inside the
// scripts (standalone) and after them (as on a cluster).
func modes(t *testing.T, fn func(t *testing.T, b redistest.Backend, s *chat.Client)) {
	modesWith(t, chat.Options{}, fn)
}

// modesWith is modes with the store's options (but for its prefix and
// mode).
func modesWith(t *testing.T, opts chat.Options, fn func(t *testing.T, b redistest.Backend, s *chat.Client)) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		for _, cluster := range []bool{false, true} {
			name := "standalone"
			if cluster {
				name = "cluster"
			}
			t.Run(name, func(t *testing.T) {
				p := fmt.Sprintf("%s%s:", b.Prefix, name)
				c := b.Client
				if cluster {
					opt, err := redis.ParseURL(b.URL)
					if err != nil {
						t.Fatal(err)
					}
					c = redis.NewClient(opt)
					t.Cleanup(func() { c.Close() })
					c.AddHook(oneSlotScripts{t})
				}
				fn(t, redistest.Backend{Name: b.Name, URL: b.URL, Client: b.Client, Prefix: p},
					chat.New(c, chat.Options{Prefix: p, Cluster: cluster, ChunkSize: opts.ChunkSize}))
			})
		}
	})
}

// oneSlotScripts fails the test when a script is given keys of different
// hash tags, which a Redis Cluster would refuse (CROSSSLOT).
type oneSlotScripts struct{ t testing.TB }

func (h oneSlotScripts) check(cmd redis.Cmder) {
	args := cmd.Args()
	name := strings.ToLower(fmt.Sprint(args[0]))
	if (name != "eval" && name != "evalsha") || len(args) < 3 {
		return
	}
	n, _ := strconv.Atoi(fmt.Sprint(args[2]))
	tags := map[string]bool{}
	for _, k := range args[3 : 3+n] {
		key := fmt.Sprint(k)
		if i := strings.IndexByte(key, '{'); i >= 0 {
			if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
				key = key[i+1 : i+1+j]
			}
		}
		tags[key] = true
	}
	if len(tags) > 1 {
		h.t.Errorf("script with keys in several slots: %v", args[3:3+n])
	}
}

func (h oneSlotScripts) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h oneSlotScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.check(cmd); return next(ctx, cmd) }
}
func (h oneSlotScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.check(c)
		}
		return next(ctx, cmds)
	}
}

func ptr(s string) *string { return &s }

// must(f())(t) is f's value, failing t when f fails.
func must[T any](v T, err error) func(t testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// summary renders pending chats as "chat:id/sender/message ..." for comparing.
func summary(cs []chat.ChatMessages) string {
	var parts []string
	for _, c := range cs {
		for _, m := range c.Messages {
			parts = append(parts, fmt.Sprintf("%s:%d/%s/%s", c.ChatID, m.ID, m.Sender, m.Message))
		}
	}
	return strings.Join(parts, " ")
}

func TestBookScenario(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		c := must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff", "jenny"}, Message: ptr("message 1")}))(t)
		if c.ChatID != "1" || c.MessageID != 1 {
			t.Fatalf("create = %+v, want chat 1 message 1", c)
		}
		for i := 2; i <= 4; i++ {
			id := must(s.Send(ctx, "1", "joe", fmt.Sprintf("message %d", i)))(t)
			if id != int64(i) {
				t.Fatalf("send %d = id %d", i, id)
			}
		}
		want := "1:1/joe/message 1 1:2/joe/message 2 1:3/joe/message 3 1:4/joe/message 4"
		jeff := must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)
		jenny := must(s.Pending(ctx, "jenny", chat.PendingOptions{}))(t)
		if summary(jeff) != want || summary(jenny) != want {
			t.Fatalf("jeff %q, jenny %q, want %q", summary(jeff), summary(jenny), want)
		}
		// joe has not fetched: everything is still stored.
		if n := len(must(s.History(ctx, "1", chat.HistoryOptions{}))(t)); n != 4 {
			t.Fatalf("history has %d messages before joe fetched, want 4", n)
		}
		if again := must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t); len(again) != 0 {
			t.Fatalf("jeff's second pending = %q, want nothing", summary(again))
		}
		if summary(must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t)) != want {
			t.Fatal("joe's pending differs")
		}
		if n := b.Client.Exists(ctx, b.Prefix+"msgs:{1}").Val(); n != 0 {
			t.Fatal("messages still stored after every member fetched")
		}
		members := must(s.Members(ctx, "1"))(t)
		if fmt.Sprint(members) != "[{jeff 4 0} {jenny 4 0} {joe 4 0}]" {
			t.Fatalf("members = %v", members)
		}
		if got := b.Client.ZRangeWithScores(ctx, b.Prefix+"seen:{jenny}", 0, -1).Val(); len(got) != 1 || got[0].Score != 4 {
			t.Fatalf("seen:{jenny} = %v", got)
		}
	})
}

func TestStoredMessagesAreExact(t *testing.T) {
	big := strings.Repeat("ü/\"\n😀<&>", chat.MaxMessageBytes/16) // 48 KiB, under the limit
	bodies := []string{"", "héllo 😀", "line 1\nline 2\r\n\ttab", `"quoted" \back\slash/ <b>&amp;`, "\u2028\u2029\x00\x7f", big}
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "x"}))(t)
		for _, body := range bodies {
			must(s.Send(ctx, "x", "joe", body))(t)
		}
		raw := b.Client.ZRange(ctx, b.Prefix+"msgs:{x}", 0, 0).Val()
		if !regexp.MustCompile(`^\{"id":1,"ts":1[0-9]{9}\.[0-9]{3},"sender":"joe","message":""\}$`).MatchString(raw[0]) {
			t.Fatalf("stored message = %s", raw[0])
		}
		raw = b.Client.ZRange(ctx, b.Prefix+"msgs:{x}", 3, 3).Val()
		if want := `,"sender":"joe","message":"\"quoted\" \\back\\slash/ <b>&amp;"}`; !strings.HasSuffix(raw[0], want) {
			t.Fatalf("stored message = %s, want suffix %s", raw[0], want)
		}
		got := must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)
		if len(got) != 1 || len(got[0].Messages) != len(bodies) {
			t.Fatalf("pending = %v", got)
		}
		now := float64(time.Now().Unix())
		for i, m := range got[0].Messages {
			if m.Message != bodies[i] {
				t.Errorf("message %d differs (len %d, want %d)", i+1, len(m.Message), len(bodies[i]))
			}
			if m.TS < now-3600 || m.TS > now+3600 {
				t.Errorf("message %d ts %f is not the server's time", i+1, m.TS)
			}
		}
		if _, err := s.Send(ctx, "x", "joe", "bad \xff"); !errors.Is(err, chat.ErrInvalidMessage) {
			t.Fatalf("invalid UTF-8: err = %v", err)
		}
	})
}

// keysUnder lists the keys under prefix, sorted.
func keysUnder(t *testing.T, c *redis.Client, prefix string) string {
	t.Helper()
	keys := must(c.Keys(context.Background(), keyspace.Pattern(prefix)).Result())(t)
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

func TestFailuresWriteNothing(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		check := func(err, want error) {
			t.Helper()
			if !errors.Is(err, want) {
				t.Fatalf("err = %v, want %v", err, want)
			}
		}
		_, err := s.Join(ctx, "nope", "sam")
		check(err, chat.ErrChatNotFound)
		_, err = s.Send(ctx, "nope", "sam", "hi")
		check(err, chat.ErrChatNotFound)
		_, err = s.Pending(ctx, "sam", chat.PendingOptions{Chat: "nope"})
		check(err, chat.ErrChatNotFound)
		_, err = s.Members(ctx, "nope")
		check(err, chat.ErrChatNotFound)
		_, err = s.History(ctx, "nope", chat.HistoryOptions{})
		check(err, chat.ErrChatNotFound)
		_, err = s.Leave(ctx, "nope", "sam")
		check(err, chat.ErrChatNotFound)
		if ok := must(keyspace.AnyWithPrefix(ctx, b.Client, b.Prefix))(t); ok {
			t.Fatalf("keys written: %s", keysUnder(t, b.Client, b.Prefix))
		}

		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "7", Message: ptr("hi")}))(t)
		before := keysUnder(t, b.Client, b.Prefix)
		_, err = s.Create(ctx, chat.CreateRequest{From: "eve", To: []string{"mallory"}, ID: "7", Message: ptr("mine now")})
		check(err, chat.ErrChatExists)
		_, err = s.Send(ctx, "7", "eve", "let me in")
		check(err, chat.ErrNotMember)
		_, err = s.Pending(ctx, "eve", chat.PendingOptions{Chat: "7"})
		check(err, chat.ErrNotMember)
		_, err = s.Leave(ctx, "7", "eve")
		check(err, chat.ErrNotMember)
		for _, bad := range []string{"", "a b", "a:b", "{x}", "\xff"} {
			_, err = s.Send(ctx, bad, "joe", "x")
			check(err, names.ErrInvalid)
			_, err = s.Join(ctx, "7", bad+" ")
			check(err, names.ErrInvalid)
			_, err = s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"ok", bad + "\n"}})
			check(err, names.ErrInvalid)
		}
		if after := keysUnder(t, b.Client, b.Prefix); after != before {
			t.Fatalf("keys changed:\n%s\n%s", before, after)
		}
		if h := must(s.History(ctx, "7", chat.HistoryOptions{}))(t); len(h) != 1 || h[0].Message != "hi" {
			t.Fatalf("history = %v", h)
		}
		if m := must(s.Members(ctx, "7"))(t); fmt.Sprint(m) != "[{jeff 0 1} {joe 0 1}]" {
			t.Fatalf("members = %v", m)
		}
	})
}

func TestAutomaticIDsSkipTakenOnes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "2"}))(t)
		for _, want := range []string{"1", "3"} {
			c := must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}}))(t)
			if c.ChatID != want || c.MessageID != 0 {
				t.Fatalf("create = %+v, want chat %s and no message", c, want)
			}
		}
		got := must(s.UserChats(ctx, "jeff"))(t)
		if fmt.Sprint(got) != "[{1 0 0 } {2 0 0 } {3 0 0 }]" {
			t.Fatalf("chats = %v", got)
		}
	})
}

func TestJoinSeesOnlyNewMessages(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, Message: ptr("before")}))(t)
		j := must(s.Join(ctx, "1", "sam"))(t)
		if !j.Added || j.SeenID != 1 {
			t.Fatalf("join = %+v", j)
		}
		must(s.Send(ctx, "1", "joe", "after"))(t)
		if got := summary(must(s.Pending(ctx, "sam", chat.PendingOptions{}))(t)); got != "1:2/joe/after" {
			t.Fatalf("sam's pending = %q", got)
		}
		// Joining again changes nothing, even the seen id.
		j = must(s.Join(ctx, "1", "sam"))(t)
		if j.Added || j.SeenID != 2 {
			t.Fatalf("second join = %+v", j)
		}
		must(s.Send(ctx, "1", "sam", "hello from sam"))(t)
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)); got != "1:1/joe/before 1:2/joe/after 1:3/sam/hello from sam" {
			t.Fatalf("jeff's pending = %q", got)
		}
		if ls := must(s.UserChats(ctx, "sam"))(t); fmt.Sprint(ls) != "[{1 2 1 }]" {
			t.Fatalf("sam's chats = %v", ls)
		}
	})
}

func TestLeave(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff", "jenny"}, Message: ptr("m1")}))(t)
		must(s.Send(ctx, "1", "joe", "m2"))(t)
		must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)
		must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t)
		// jenny has seen nothing: her leaving lets the others' seen ids
		// decide, so both messages go; the member set stays (book errata).
		if l := must(s.Leave(ctx, "1", "jenny"))(t); l.ChatDeleted {
			t.Fatal("chat deleted with members left")
		}
		if m := must(s.Members(ctx, "1"))(t); fmt.Sprint(m) != "[{jeff 2 0} {joe 2 0}]" {
			t.Fatalf("members = %v", m)
		}
		if n := len(must(s.History(ctx, "1", chat.HistoryOptions{}))(t)); n != 0 {
			t.Fatalf("%d messages kept that every remaining member saw", n)
		}
		if b.Client.Exists(ctx, b.Prefix+"seen:{jenny}").Val() != 0 {
			t.Fatal("seen:{jenny} still lists the chat")
		}
		// jeff leaves with a message joe has not seen: it stays for joe.
		must(s.Send(ctx, "1", "jeff", "m3"))(t)
		must(s.Leave(ctx, "1", "jeff"))(t)
		if got := summary(must(s.Pending(ctx, "joe", chat.PendingOptions{Peek: true}))(t)); got != "1:3/jeff/m3" {
			t.Fatalf("joe's pending after jeff left = %q", got)
		}
		if l := must(s.Leave(ctx, "1", "joe"))(t); !l.ChatDeleted {
			t.Fatal("last member left but the chat was not deleted")
		}
		if keys := keysUnder(t, b.Client, b.Prefix); keys != b.Prefix+"ids:chat:" {
			t.Fatalf("keys left: %s", keys)
		}
		if _, err := s.Send(ctx, "1", "joe", "anyone?"); !errors.Is(err, chat.ErrChatNotFound) {
			t.Fatalf("send to a deleted chat: err = %v", err)
		}
	})
}

func TestLargeIDsRoundTrip(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "big"}))(t)
		b.Client.Set(ctx, b.Prefix+"ids:{big}", 999998, 0)
		for i := 0; i < 3; i++ {
			must(s.Send(ctx, "big", "joe", "m"))(t)
		}
		got := must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)
		if len(got) != 1 || len(got[0].Messages) != 3 || got[0].Messages[2].ID != 1000001 {
			t.Fatalf("pending = %v", got)
		}
		must(s.Pending(ctx, "joe", chat.PendingOptions{Chat: "big", Peek: true}))(t)
		must(s.Send(ctx, "big", "joe", "m"))(t)
		if s := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)); s != "big:1000002/joe/m" {
			t.Fatalf("next pending = %q", s)
		}
		if sc := b.Client.ZScore(ctx, b.Prefix+"chat:{big}", "jeff").Val(); sc != 1000002 {
			t.Fatalf("jeff's seen id = %v", sc)
		}
		if sc := b.Client.ZScore(ctx, b.Prefix+"seen:{jeff}", "big").Val(); sc != 1000002 {
			t.Fatalf("seen:{jeff} big = %v", sc)
		}
		// joe marks everything: only the last message (jeff saw it) goes...
		must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t)
		if n := b.Client.ZCard(ctx, b.Prefix+"msgs:{big}").Val(); n != 0 {
			t.Fatalf("%d messages left", n)
		}
	})
}

// TestConcurrentSendersAndReader: 50 goroutines send while a reader loops on
// Pending; ids are 1..N with no gap or duplicate and the reader gets every
// message exactly once, in order.
func TestConcurrentSendersAndReader(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		must(s.Create(ctx, chat.CreateRequest{From: "jeff", To: []string{"joe"}, ID: "c"}))(t)
		const senders, each = 50, 4
		for i := 0; i < senders; i++ {
			must(s.Join(ctx, "c", fmt.Sprintf("u%d", i)))(t)
		}
		var wg sync.WaitGroup
		ids := make(chan int64, senders*each)
		errs := make(chan error, senders)
		for i := 0; i < senders; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				for k := 0; k < each; k++ {
					id, err := s.Send(ctx, "c", fmt.Sprintf("u%d", i), fmt.Sprintf("%d/%d", i, k))
					if err != nil {
						errs <- err
						return
					}
					ids <- id
				}
			}(i)
		}
		var got []chat.Message
		deadline := time.Now().Add(30 * time.Second)
		for len(got) < senders*each && time.Now().Before(deadline) {
			p, err := s.Pending(ctx, "joe", chat.PendingOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p {
				got = append(got, c.Messages...)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		close(ids)
		seen := map[int64]bool{}
		for id := range ids {
			if seen[id] || id < 1 || id > senders*each {
				t.Fatalf("id %d duplicated or out of 1..%d", id, senders*each)
			}
			seen[id] = true
		}
		if len(got) != senders*each {
			t.Fatalf("reader got %d messages, want %d", len(got), senders*each)
		}
		last := map[string]int{}
		for i, m := range got {
			if m.ID != int64(i+1) {
				t.Fatalf("reader's message %d has id %d", i+1, m.ID)
			}
			// Per sender, messages arrive in the order they were sent.
			var u, k int
			fmt.Sscanf(m.Message, "%d/%d", &u, &k)
			if prev, ok := last[m.Sender]; ok && k != prev+1 {
				t.Fatalf("%s's message %d after %d", m.Sender, k, prev)
			}
			last[m.Sender] = k
		}
		if p := must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t); len(p) != 0 {
			t.Fatalf("more after the end: %q", summary(p))
		}
	})
}

// TestRacingFetchesAndLeaves: seen ids never move back and a user who left
// is never re-added, whatever order concurrent Pending and Leave run in.
func TestRacingFetchesAndLeaves(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "r"}))(t)
		for round := 0; round < 20; round++ {
			must(s.Join(ctx, "r", "sam"))(t)
			must(s.Send(ctx, "r", "joe", "x"))(t)
			var wg sync.WaitGroup
			for g := 0; g < 3; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := s.Pending(ctx, "sam", chat.PendingOptions{}); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Leave(ctx, "r", "sam"); err != nil {
					t.Error(err)
				}
			}()
			wg.Wait()
			if _, err := b.Client.ZScore(ctx, b.Prefix+"chat:{r}", "sam").Result(); err != redis.Nil {
				t.Fatalf("round %d: sam re-added to the chat (err %v)", round, err)
			}
			if _, err := b.Client.ZScore(ctx, b.Prefix+"seen:{sam}", "r").Result(); err != redis.Nil {
				t.Fatalf("round %d: the chat re-added to seen:{sam} (err %v)", round, err)
			}
		}
	})
}

func TestWatch(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, Message: ptr("backlog")}))(t)
		wctx, cancel := context.WithCancel(ctx)
		got := make(chan chat.Message, 100)
		done := make(chan error, 1)
		go func() {
			done <- s.Watch(wctx, "jeff", chat.WatchOptions{Poll: time.Minute}, func(cs []chat.ChatMessages) error {
				for _, c := range cs {
					for _, m := range c.Messages {
						got <- m
					}
				}
				return nil
			})
		}()
		next := func(want string) {
			t.Helper()
			select {
			case m := <-got:
				if m.Message != want {
					t.Fatalf("watch got %q, want %q", m.Message, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("watch did not deliver %q", want)
			}
		}
		next("backlog")
		// The poll interval is a minute: these arrive by notification.
		must(s.Send(ctx, "1", "joe", "live 1"))(t)
		next("live 1")
		must(s.Create(ctx, chat.CreateRequest{From: "jenny", To: []string{"jeff"}, Message: ptr("new chat")}))(t)
		next("new chat")
		must(s.Send(ctx, "1", "joe", "live 2"))(t)
		next("live 2")
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("watch returned %v after cancel, want nil", err)
		}
		// Watch only reads by default.
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{Peek: true}))(t)); got != "1:1/joe/backlog 1:2/joe/live 1 1:3/joe/live 2 2:1/jenny/new chat" {
			t.Fatalf("pending after watch = %q", got)
		}
	})
}

// TestSeenIDsOnlyMoveForward: readers racing each other on the same user
// never move a seen id back, in chat:{ID} or in seen:{USER}, and every
// message reaches one of them.
func TestSeenIDsOnlyMoveForward(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "f"}))(t)
		const n = 60
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		delivered := map[int64]int{}
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					p, err := s.Pending(ctx, "jeff", chat.PendingOptions{})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, c := range p {
						for _, m := range c.Messages {
							delivered[m.ID]++
						}
					}
					mu.Unlock()
				}
			}()
		}
		monitor := make(chan error, 1)
		go func() {
			var lastChat, lastSeen float64
			for {
				select {
				case <-stop:
					monitor <- nil
					return
				default:
				}
				c := b.Client.ZScore(ctx, b.Prefix+"chat:{f}", "jeff").Val()
				u := b.Client.ZScore(ctx, b.Prefix+"seen:{jeff}", "f").Val()
				if c < lastChat || u < lastSeen {
					monitor <- fmt.Errorf("seen id moved back: chat:{f} %v -> %v, seen:{jeff} %v -> %v", lastChat, c, lastSeen, u)
					return
				}
				lastChat, lastSeen = c, u
			}
		}()
		for i := 0; i < n; i++ {
			must(s.Send(ctx, "f", "joe", "x"))(t)
		}
		deadline := time.Now().Add(20 * time.Second)
		for b.Client.ZScore(ctx, b.Prefix+"seen:{jeff}", "f").Val() != n && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		close(stop)
		wg.Wait()
		if err := <-monitor; err != nil {
			t.Fatal(err)
		}
		// Marking follows delivery (at-least-once): racing readers of one
		// user may both get a message, but none is missed.
		for id := int64(1); id <= n; id++ {
			if delivered[id] < 1 {
				t.Fatalf("message %d never delivered", id)
			}
		}
		if c := b.Client.ZScore(ctx, b.Prefix+"chat:{f}", "jeff").Val(); c != n {
			t.Fatalf("chat:{f} jeff = %v, want %d", c, n)
		}
		if u := b.Client.ZScore(ctx, b.Prefix+"seen:{jeff}", "f").Val(); u != n {
			t.Fatalf("seen:{jeff} f = %v, want %d", u, n)
		}
	})
}

// TestPendingNeverAddsIndexEntries: marking moves an existing seen:{USER}
// entry forward but never creates one (ZADD XX), so a chat that leave took
// out of the index is not put back by a fetch that ran just before it, or
// by any other.
func TestPendingNeverAddsIndexEntries(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "a", Message: ptr("m1")}))(t)
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "b", Message: ptr("m1")}))(t)
		b.Client.ZRem(ctx, b.Prefix+"seen:{jeff}", "b")
		must(s.Send(ctx, "b", "joe", "m2"))(t)
		// Peeking writes nothing at all.
		state := func() string {
			var out []string
			for _, k := range []string{"seen:{jeff}", "chat:{a}", "chat:{b}", "msgs:{a}", "msgs:{b}"} {
				out = append(out, fmt.Sprint(k, b.Client.ZRangeWithScores(ctx, b.Prefix+k, 0, -1).Val()))
			}
			return strings.Join(out, " ")
		}
		before := state()
		must(s.Pending(ctx, "jeff", chat.PendingOptions{Peek: true}))(t)
		must(s.Pending(ctx, "jeff", chat.PendingOptions{Peek: true, Chat: "b"}))(t)
		if after := state(); after != before {
			t.Fatalf("peek wrote:\n%s\n%s", before, after)
		}
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{Chat: "b"}))(t)); got != "b:1/joe/m1 b:2/joe/m2" {
			t.Fatalf("pending --chat b = %q", got)
		}
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)); got != "a:1/joe/m1" {
			t.Fatalf("pending = %q", got)
		}
		zs := b.Client.ZRangeWithScores(ctx, b.Prefix+"seen:{jeff}", 0, -1).Val()
		if fmt.Sprint(zs) != "[{1 a}]" {
			t.Fatalf("seen:{jeff} = %v, want only a at 1", zs)
		}
		if m := must(s.Members(ctx, "b"))(t); fmt.Sprint(m) != "[{joe 0 2} {jeff 2 0}]" {
			t.Fatalf("members of b = %v", m)
		}
	})
}

// TestFailedIndexUpdateMarksNothing: on a standalone server the fetch
// script writes seen:{USER} before anything else, so when that fails (here
// a key of the wrong type) no message is marked seen or deleted unread.
func TestFailedIndexUpdateMarksNothing(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "w", Message: ptr("m1")}))(t)
		must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t)
		b.Client.Del(ctx, b.Prefix+"seen:{jeff}")
		b.Client.Set(ctx, b.Prefix+"seen:{jeff}", "not a zset", 0)
		if _, err := s.Pending(ctx, "jeff", chat.PendingOptions{Chat: "w"}); err == nil {
			t.Fatal("pending with a broken index: no error")
		}
		b.Client.Del(ctx, b.Prefix+"seen:{jeff}")
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{Chat: "w"}))(t)); got != "w:1/joe/m1" {
			t.Fatalf("pending after the failure = %q, want the message again", got)
		}
	})
}

// TestStaleIndexEntryIsHarmless: a seen:{USER} entry for a chat the user is
// not in (left behind by a join racing a leave on a cluster) is skipped by
// every read and removed by leave, which then succeeds.
func TestStaleIndexEntryIsHarmless(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, Message: ptr("not for sam")}))(t)
		b.Client.ZAdd(ctx, b.Prefix+"seen:{sam}", redis.Z{Score: 0, Member: "1"}, redis.Z{Score: 0, Member: "gone"})
		if p := must(s.Pending(ctx, "sam", chat.PendingOptions{}))(t); len(p) != 0 {
			t.Fatalf("pending = %q", summary(p))
		}
		if cs := must(s.UserChats(ctx, "sam"))(t); len(cs) != 0 {
			t.Fatalf("chats = %v", cs)
		}
		// Leave removes a stale entry (its only write) and succeeds; with
		// no entry left to remove it fails, writing nothing.
		for _, id := range []string{"1", "gone"} {
			if l, err := s.Leave(ctx, id, "sam"); err != nil || !l.StaleEntryRemoved {
				t.Fatalf("leave %s: %+v, %v", id, l, err)
			}
		}
		if n := b.Client.Exists(ctx, b.Prefix+"seen:{sam}").Val(); n != 0 {
			t.Fatal("stale entries not removed by leave")
		}
		if _, err := s.Leave(ctx, "1", "sam"); !errors.Is(err, chat.ErrNotMember) {
			t.Fatalf("leave: err = %v", err)
		}
		if _, err := s.Leave(ctx, "gone", "sam"); !errors.Is(err, chat.ErrChatNotFound) {
			t.Fatalf("leave: err = %v", err)
		}
		if m := must(s.Members(ctx, "1"))(t); len(m) != 2 {
			t.Fatalf("members = %v", m)
		}
	})
}

// TestPendingAfter: PendingOptions.After skips messages up to an id, unless
// the chat was deleted and created again since (its ids restarted).
func TestPendingAfter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "a", Message: ptr("m1")}))(t)
		must(s.Send(ctx, "a", "joe", "m2"))(t)
		after := map[string]int64{"a": 1}
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{Peek: true, After: after}))(t)); got != "a:2/joe/m2" {
			t.Fatalf("after 1: %q", got)
		}
		must(s.Leave(ctx, "a", "joe"))(t)
		must(s.Leave(ctx, "a", "jeff"))(t)
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "a", Message: ptr("new m1")}))(t)
		after["a"] = 2
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{Peek: true, After: after}))(t)); got != "a:1/joe/new m1" {
			t.Fatalf("recreated chat: %q", got)
		}
	})
}

// TestSmallChunks: reads and deletions bigger than Options.ChunkSize take
// several bounded calls and give the same result.
func TestSmallChunks(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		s = chat.New(b.Client, chat.Options{Prefix: b.Prefix, ChunkSize: 3})
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff", "jenny"}, ID: "c"}))(t)
		var want []string
		for i := 1; i <= 10; i++ {
			must(s.Send(ctx, "c", "joe", fmt.Sprint("m", i)))(t)
			want = append(want, fmt.Sprintf("c:%d/joe/m%d", i, i))
		}
		if h := must(s.History(ctx, "c", chat.HistoryOptions{}))(t); len(h) != 10 || h[9].ID != 10 {
			t.Fatalf("history = %v", h)
		}
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{Peek: true}))(t)); got != strings.Join(want, " ") {
			t.Fatalf("peek = %q", got)
		}
		for _, u := range []string{"jeff", "joe"} {
			if got := summary(must(s.Pending(ctx, u, chat.PendingOptions{}))(t)); got != strings.Join(want, " ") {
				t.Fatalf("%s's pending = %q", u, got)
			}
		}
		if n := b.Client.ZCard(ctx, b.Prefix+"msgs:{c}").Val(); n != 10 {
			t.Fatalf("%d stored before jenny read", n)
		}
		// jenny leaving lets the others' seen ids decide: all 10 go, 3 a call.
		must(s.Leave(ctx, "c", "jenny"))(t)
		if n := b.Client.ZCard(ctx, b.Prefix+"msgs:{c}").Val(); n != 0 {
			t.Fatalf("%d seen messages left after leave", n)
		}
		for i := 11; i <= 17; i++ {
			must(s.Send(ctx, "c", "joe", fmt.Sprint("m", i)))(t)
		}
		must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)
		must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t)
		if n := b.Client.ZCard(ctx, b.Prefix+"msgs:{c}").Val(); n != 0 {
			t.Fatalf("%d seen messages left after marking", n)
		}
	})
}

// Members reads a chat of more members than one call takes, page by page,
// in seen id order, with each member once.
func TestMembersInPages(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		if _, err := s.Create(ctx, chat.CreateRequest{ID: "big", From: "joe", To: []string{"jeff"}}); err != nil {
			t.Fatal(err)
		}
		const extra = 1203
		zs := make([]redis.Z, extra)
		for i := range zs {
			zs[i] = redis.Z{Score: 1, Member: fmt.Sprintf("user%04d", i)}
		}
		if err := b.Client.ZAdd(ctx, b.Prefix+"chat:{big}", zs...).Err(); err != nil {
			t.Fatal(err)
		}
		ms, err := s.Members(ctx, "big")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i, m := range ms {
			if seen[m.User] || i > 0 && m.SeenID < ms[i-1].SeenID {
				t.Fatalf("member %d %+v repeated or out of order", i, m)
			}
			seen[m.User] = true
		}
		if len(ms) != extra+2 || !seen["joe"] || !seen["jeff"] || !seen["user1202"] {
			t.Errorf("got %d members, want %d", len(ms), extra+2)
		}
	})
}
