package chat_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/testkit/faultproxy"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/redis/go-redis/v9"
)

// twoChats makes chats 1 and 2, from joe to jeff, with one message each.
func twoChats(t *testing.T, s *chat.Client) {
	t.Helper()
	ctx := context.Background()
	must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "1", Message: ptr("in 1")}))(t)
	must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "2", Message: ptr("in 2")}))(t)
}

// TestBadMessageHidesNothing: a stored value that is not a message is
// handed over as Skipped (chat and id), the good messages around it and in
// other chats are delivered, and it is reported once.
func TestBadMessageHidesNothing(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		twoChats(t, s)
		must(s.Send(ctx, "1", "joe", "m2"))(t)
		must(s.Send(ctx, "1", "joe", "m3"))(t)
		// Message 2 is replaced by garbage.
		b.Client.ZRemRangeByScore(ctx, b.Prefix+"msgs:{1}", "2", "2")
		b.Client.ZAdd(ctx, b.Prefix+"msgs:{1}", redis.Z{Score: 2, Member: "not json"})
		got, err := s.Pending(ctx, "jeff", chat.PendingOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if summary(got) != "1:1/joe/in 1 1:3/joe/m3 2:1/joe/in 2" {
			t.Fatalf("pending = %q", summary(got))
		}
		if len(got[0].Skipped) != 1 || got[0].Skipped[0].ID != 2 || got[0].Skipped[0].Raw != "not json" {
			t.Fatalf("skipped = %+v", got[0].Skipped)
		}
		// Reported once: the chat is not blocked by it.
		if again := must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t); len(again) != 0 {
			t.Fatalf("second pending = %+v", again)
		}
		must(s.Send(ctx, "1", "joe", "m4"))(t)
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)); got != "1:4/joe/m4" {
			t.Fatalf("after the bad one = %q", got)
		}
		// History lists the good ones and says which are not messages.
		h, err := s.History(ctx, "1", chat.HistoryOptions{})
		var se *chat.SkippedError
		if !errors.As(err, &se) || len(se.Skipped) != 1 || se.Skipped[0].ID != 2 || len(h) != 3 {
			t.Fatalf("history = %v, %v", h, err)
		}
	})
}

// TestBadValueAboveTheCounter: the reproduction (a value stored
// at an id the chat has not reached) neither hides the other chat nor the
// messages that will later take that id.
func TestBadValueAboveTheCounter(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		twoChats(t, s)
		b.Client.ZAdd(ctx, b.Prefix+"msgs:{1}", redis.Z{Score: 3, Member: "not json"})
		got := must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)
		if summary(got) != "1:1/joe/in 1 2:1/joe/in 2" || len(got[0].Skipped) != 1 || got[0].Skipped[0].ID != 3 {
			t.Fatalf("pending = %+v", got)
		}
		must(s.Send(ctx, "1", "joe", "m2"))(t)
		must(s.Send(ctx, "1", "joe", "m3"))(t)
		if got := summary(must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t)); got != "1:2/joe/m2 1:3/joe/m3" {
			t.Fatalf("messages with ids up to the bad value's = %q", got)
		}
		if again := must(s.Pending(ctx, "jeff", chat.PendingOptions{}))(t); len(again) != 0 {
			t.Fatalf("again = %+v", again)
		}
	})
}

// TestBrokenChatHidesNothing: a chat whose keys have the wrong type is
// reported (Error), marks nothing, and the other chats are delivered.
func TestBrokenChatHidesNothing(t *testing.T) {
	for _, key := range []string{"chat:{1}", "msgs:{1}", "ids:{1}"} {
		t.Run(key, func(t *testing.T) {
			modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
				ctx := context.Background()
				twoChats(t, s)
				b.Client.Del(ctx, b.Prefix+key)
				b.Client.HSet(ctx, b.Prefix+key, "x", "y")
				for round := 0; round < 2; round++ {
					got, err := s.Pending(ctx, "jeff", chat.PendingOptions{})
					if err != nil {
						t.Fatal(err)
					}
					want := "1: 2:1/joe/in 2"
					if round == 1 {
						want = "1:"
					}
					var parts []string
					for _, c := range got {
						if c.Error != "" {
							if !strings.Contains(c.Error, key) {
								t.Errorf("error %q does not name %s", c.Error, key)
							}
							parts = append(parts, c.ChatID+":")
						} else {
							parts = append(parts, summary([]chat.ChatMessages{c}))
						}
					}
					if strings.Join(parts, " ") != want {
						t.Fatalf("round %d: pending = %q, want %q", round, strings.Join(parts, " "), want)
					}
				}
				cs := must(s.UserChats(ctx, "jeff"))(t)
				if len(cs) != 2 || !strings.Contains(cs[0].Error, key) || cs[1].Error != "" || cs[1].SeenID != 1 {
					t.Fatalf("chats = %+v", cs)
				}
				if m := must(s.Members(ctx, "2"))(t); fmt.Sprint(m) != "[{joe 0 1} {jeff 1 0}]" {
					t.Fatalf("members of 2 = %v", m)
				}
			})
		})
	}
}

// scriptSHA is the SHA1 EVALSHA names a script file of this package by.
func scriptSHA(t *testing.T, file string) string {
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(src)
	return hex.EncodeToString(sum[:])
}

// proxied returns a store that reaches b's server through a proxy that
// can lose replies.
func proxied(t *testing.T, b redistest.Backend) (*chat.Client, *faultproxy.Proxy) {
	t.Helper()
	pb, proxy := redistest.Proxied(t, b)
	opt, err := redis.ParseURL(pb.URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.MaxRetries = -1 // a retried EVALSHA would hide the lost reply
	// A lost reply shows as this timeout (which a reply on loopback never
	// comes near).
	opt.ReadTimeout = 500 * time.Millisecond
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return chat.New(c, chat.Options{Prefix: b.Prefix}), proxy
}

// dropped reports whether the proxy has dropped as many replies as want.
func dropped(p *faultproxy.Proxy, want int) bool {
	_, _, _, n := p.Counts()
	return n == want
}

// TestLostReplies: nothing is marked seen that Pending did not return.
// When the reply to the read is lost, nothing is marked; when the reply to
// the marking is lost, the messages are returned with the error (they
// were handed over, and may come again: at-least-once).
func TestLostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		s, proxy := proxied(t, b)
		twoChats(t, s)
		must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t) // loads the scripts

		proxy.DropReplyTo(scriptSHA(t, "fetch.lua"))
		got, err := s.Pending(ctx, "jeff", chat.PendingOptions{})
		if err == nil || len(got) != 0 || !dropped(proxy, 1) {
			t.Fatalf("lost read: %v, %v", got, err)
		}
		direct := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
		if got := summary(must(direct.Pending(ctx, "jeff", chat.PendingOptions{Peek: true}))(t)); got != "1:1/joe/in 1 2:1/joe/in 2" {
			t.Fatalf("after a lost read, pending = %q", got)
		}

		// One chat to mark, so the marking is one command that the server
		// has run by the time its reply is dropped.
		must(direct.Pending(ctx, "jeff", chat.PendingOptions{Chat: "2"}))(t)
		proxy.DropReplyTo(chat.MarkSHA())
		got, err = s.Pending(ctx, "jeff", chat.PendingOptions{})
		if err == nil || !dropped(proxy, 2) {
			t.Fatalf("lost mark: err %v", err)
		}
		if summary(got) != "1:1/joe/in 1" {
			t.Fatalf("lost mark: returned %q, want the messages with the error", summary(got))
		}
		// The server did apply it: the caller, who has the messages, is
		// not given them again. Had it not, they would come again.
		if again := must(direct.Pending(ctx, "jeff", chat.PendingOptions{}))(t); len(again) != 0 {
			t.Fatalf("after a lost mark = %q", summary(again))
		}
	})
}

// TestSendChecksBeforeWriting: a send that fails (wrong key types, a
// counter that is not a number) writes nothing: no gap in the ids.
func TestSendChecksBeforeWriting(t *testing.T) {
	for _, tc := range []struct {
		key, kind string
	}{{"msgs:{1}", "hash"}, {"ids:{1}", "hash"}, {"ids:{1}", "garbage"}, {"ids:{1}", "-4"}, {"chat:{1}", "hash"}} {
		t.Run(tc.key+"="+tc.kind, func(t *testing.T) {
			modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
				ctx := context.Background()
				twoChats(t, s)
				b.Client.Del(ctx, b.Prefix+tc.key)
				if tc.kind == "hash" {
					b.Client.HSet(ctx, b.Prefix+tc.key, "x", "y")
				} else {
					b.Client.Set(ctx, b.Prefix+tc.key, tc.kind, 0)
				}
				before := snapshot(t, b.Client, b.Prefix)
				for range 3 {
					if _, err := s.Send(ctx, "1", "joe", "x"); err == nil {
						t.Fatal("send succeeded")
					} else if !strings.Contains(err.Error(), tc.key) {
						t.Errorf("error %q does not name %s", err, tc.key)
					}
					if tc.key == "msgs:{1}" {
						continue // join does not use it
					}
					if _, err := s.Join(ctx, "1", "sam"); err == nil {
						t.Fatal("join succeeded")
					}
				}
				if after := snapshot(t, b.Client, b.Prefix); after != before {
					t.Fatalf("keys changed:\n%s\n%s", before, after)
				}
			})
		})
	}
}

// TestNoPermissionWritesNothing: an ACL user who may not publish to the
// notification channel (Redis 7's default for a new user) or may not
// write one of the chat's keys fails before anything is stored, so
// retrying does not duplicate. Redis >= 7 (redis.acl_check_cmd).
func TestNoPermissionWritesNothing(t *testing.T) {
	b := redistest.Real(t)
	ctx := context.Background()
	info := b.Client.Info(ctx, "server").Val()
	if strings.Contains(info, "redis_version:6.") {
		t.Skip("Redis 6 has no redis.acl_check_cmd")
	}
	s := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
	twoChats(t, s)
	for _, tc := range []struct{ name, keys, channels string }{
		{"no channel", "~*", "resetchannels"},
		{"no msgs key", "~" + b.Prefix + "chat:*", "&*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := fmt.Sprintf("chatqtest-%d", rand.Int64())
			args := []any{"ACL", "SETUSER", user, "on", ">pw", "+@all", tc.keys, tc.channels}
			if tc.keys != "~*" {
				// ids:{1} is allowed: the send must not move the counter
				// when it cannot store the message.
				args = append(args, "~"+b.Prefix+"ids:*")
			}
			if err := b.Client.Do(ctx, args...).Err(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Client.Do(context.Background(), "ACL", "DELUSER", user) })
			opt, _ := redis.ParseURL(b.URL)
			opt.Username, opt.Password = user, "pw"
			c := redis.NewClient(opt)
			defer c.Close()
			limited := chat.New(c, chat.Options{Prefix: b.Prefix})
			before := snapshot(t, b.Client, b.Prefix)
			for range 3 {
				if _, err := limited.Send(ctx, "1", "joe", "retried"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
					t.Fatalf("send: err = %v, want NOPERM", err)
				}
				if _, err := limited.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jim"}, ID: "9", Message: ptr("x")}); err == nil {
					t.Fatal("create succeeded")
				}
			}
			if after := snapshot(t, b.Client, b.Prefix); after != before {
				t.Fatalf("keys changed:\n%s\n%s", before, after)
			}
		})
	}
}

// snapshot renders every key under prefix with its type and value.
func snapshot(t testing.TB, c *redis.Client, prefix string) string {
	t.Helper()
	ctx := context.Background()
	keys := must(c.Keys(ctx, keyspace.Pattern(prefix)).Result())(t)
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		var v any
		switch typ := c.Type(ctx, k).Val(); typ {
		case "string":
			v = c.Get(ctx, k).Val()
		case "zset":
			v = c.ZRangeWithScores(ctx, k, 0, -1).Val()
		case "hash":
			v = c.HGetAll(ctx, k).Val()
		case "list":
			v = c.LRange(ctx, k, 0, -1).Val()
		case "set":
			m := c.SMembers(ctx, k).Val()
			sort.Strings(m)
			v = m
		default:
			v = typ
		}
		out = append(out, fmt.Sprintf("%s=%v", k, v))
	}
	return strings.Join(out, "\n")
}

// TestCorruptKeys corrupts a random chat key (wrong type, garbage value),
// runs a random operation, and checks that it either succeeded or changed
// no key (Pending: no key of a chat it reported), and that the server
// still answers.
func TestCorruptKeys(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		seed, _ := strconv.ParseUint(os.Getenv("CHATQ_TEST_CORRUPT_SEED"), 10, 64)
		rng := rand.New(rand.NewPCG(1+seed, 2))
		keys := []string{"chat:{1}", "msgs:{1}", "ids:{1}", "seen:{jeff}", "seen:{joe}", "seen:{sam}", "chat:{2}", "ids:{2}", "ids:chat:"}
		corrupt := []func(k string){
			func(k string) { b.Client.Set(ctx, k, "garbage", 0) },
			func(k string) { b.Client.HSet(ctx, k, "f", "v") },
			func(k string) { b.Client.RPush(ctx, k, "x") },
			func(k string) { b.Client.SAdd(ctx, k, "x") },
			func(k string) {
				b.Client.ZAdd(ctx, k, redis.Z{Score: float64(rng.IntN(10)), Member: "garbage"}, redis.Z{Score: 2.5, Member: "{\"id\":1}"})
			},
			func(k string) { b.Client.Set(ctx, k, "-7", 0) },
			func(k string) { b.Client.Set(ctx, k, "99999999999999999999", 0) },
		}
		ops := []struct {
			name string
			run  func() (*[]chat.ChatMessages, error)
		}{
			{"send", func() (*[]chat.ChatMessages, error) { _, err := s.Send(ctx, "1", "joe", "x"); return nil, err }},
			{"create", func() (*[]chat.ChatMessages, error) {
				_, err := s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, Message: ptr("new")})
				return nil, err
			}},
			{"join", func() (*[]chat.ChatMessages, error) { _, err := s.Join(ctx, "1", "sam"); return nil, err }},
			{"leave", func() (*[]chat.ChatMessages, error) { _, err := s.Leave(ctx, "1", "jeff"); return nil, err }},
			{"pending", func() (*[]chat.ChatMessages, error) {
				got, err := s.Pending(ctx, "jeff", chat.PendingOptions{})
				return &got, err
			}},
			{"pending --chat", func() (*[]chat.ChatMessages, error) {
				got, err := s.Pending(ctx, "jeff", chat.PendingOptions{Chat: "1"})
				return &got, err
			}},
			{"members", func() (*[]chat.ChatMessages, error) { _, err := s.Members(ctx, "1"); return nil, err }},
			{"history", func() (*[]chat.ChatMessages, error) {
				_, err := s.History(ctx, "1", chat.HistoryOptions{})
				return nil, err
			}},
			{"ls", func() (*[]chat.ChatMessages, error) { _, err := s.UserChats(ctx, "jeff"); return nil, err }},
		}
		rounds := 25
		if b.Real() {
			rounds = 60
		}
		if n, err := strconv.Atoi(os.Getenv("CHATQ_TEST_CORRUPT_ROUNDS")); err == nil {
			rounds = n // a longer run on demand, with CHATQ_TEST_CORRUPT_SEED
		}
		for round := range rounds {
			if err := keyspace.DeletePrefix(ctx, b.Client, b.Prefix); err != nil {
				t.Fatal(err)
			}
			twoChats(t, s)
			must(s.Send(ctx, "1", "jeff", "m2"))(t)
			key := keys[rng.IntN(len(keys))]
			b.Client.Del(ctx, b.Prefix+key)
			corrupt[rng.IntN(len(corrupt))](b.Prefix + key)
			op := ops[rng.IntN(len(ops))]
			before := snapshot(t, b.Client, b.Prefix)
			got, err := op.run()
			if err := b.Client.Ping(ctx).Err(); err != nil {
				t.Fatalf("round %d: server does not answer after %s with %s corrupt: %v", round, op.name, key, err)
			}
			after := snapshot(t, b.Client, b.Prefix)
			partial := got != nil && len(*got) > 0 // Pending: marking failed after the read
			if err != nil && after != before && !partial {
				t.Fatalf("round %d: %s failed with %s corrupt (%v) and changed keys:\n%s\n---\n%s", round, op.name, key, err, before, after)
			}
			if got != nil {
				for _, c := range *got {
					if c.Error == "" {
						continue
					}
					for _, k := range []string{"chat:{", "msgs:{", "ids:{"} {
						k = b.Prefix + k + c.ChatID + "}"
						if keyLines(before, k) != keyLines(after, k) {
							t.Fatalf("round %d: pending reported chat %s (%s) but changed %s", round, c.ChatID, c.Error, k)
						}
					}
				}
			}
		}
	})
}

// keyLines is the line of snapshot s about key k.
func keyLines(s, k string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, k+"=") {
			return l
		}
	}
	return ""
}
