package chat_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/redis/go-redis/v9"
)

// roundTrips counts the requests a client sends: a command or a whole
// pipeline is one round trip.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.n.Add(1); return next(ctx, cmd) }
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { r.n.Add(1); return next(ctx, cmds) }
}

// counted returns a store on b's server whose round trips are counted, with
// jeff in k chats that each hold one message from joe. With cluster the
// store keeps every script on one slot, as on a Redis Cluster (checked).
func counted(tb testing.TB, b redistest.Backend, k int, cluster bool) (*chat.Client, *roundTrips, *redis.Client) {
	tb.Helper()
	opt, err := redis.ParseURL(b.URL)
	if err != nil {
		tb.Fatal(err)
	}
	c := redis.NewClient(opt)
	tb.Cleanup(func() { c.Close() })
	rt := &roundTrips{}
	c.AddHook(rt)
	if cluster {
		c.AddHook(oneSlotScripts{tb})
	}
	s := chat.New(c, chat.Options{Prefix: b.Prefix, Cluster: cluster})
	ctx := context.Background()
	msg := "hello"
	for i := 0; i < k; i++ {
		if _, err := s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: strconv.Itoa(i + 1), Message: &msg}); err != nil {
			tb.Fatal(err)
		}
	}
	return s, rt, c
}

// unsee moves jeff's seen ids back to 0 in all k chats, and in his index,
// so the next Pending has one message per chat again.
func unsee(tb testing.TB, c *redis.Client, prefix string, k int) {
	ctx := context.Background()
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 1; i <= k; i++ {
			p.ZAdd(ctx, prefix+"chat:{"+strconv.Itoa(i)+"}", redis.Z{Score: 0, Member: "jeff"})
			p.ZAdd(ctx, prefix+"seen:{jeff}", redis.Z{Score: 0, Member: strconv.Itoa(i)})
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func TestPendingRoundTripsDoNotGrowWithChats(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		for _, cluster := range []bool{false, true} {
			// Marking is one round trip after the read (after delivery);
			// on a cluster seen:{USER} is one more.
			mark := int64(1)
			name := "standalone"
			if cluster {
				mark, name = 2, "cluster"
			}
			for _, k := range []int{1, 50} {
				b := b
				b.Prefix += fmt.Sprintf("%s:k%d:", name, k)
				s, rt, c := counted(t, b, k, cluster)
				// Warm the script cache so the count has no NOSCRIPT retry.
				must(s.Pending(ctx, "nobody", chat.PendingOptions{}))(t)
				must(s.Pending(ctx, "joe", chat.PendingOptions{}))(t)
				// From 8 chats on, one MGET of the chats' last ids first.
				read := int64(2)
				if k >= 8 {
					read = 3
				}
				for i, tc := range []struct {
					opts  chat.PendingOptions
					want  int64
					chats int   // chats returned
					err   error // wanted error
				}{
					{chat.PendingOptions{Peek: true}, read, k, nil},
					{chat.PendingOptions{}, read + mark, k, nil},
					// Nothing new: no marking; with the MGET, no fetch either.
					{chat.PendingOptions{}, 2, 0, nil},
					{chat.PendingOptions{Chat: "1"}, 1, 0, nil},
					{chat.PendingOptions{Chat: "1", Peek: true}, 1, 0, nil},
					{chat.PendingOptions{Chat: "nope"}, 1, 0, chat.ErrChatNotFound},
				} {
					before := rt.n.Load()
					got, err := s.Pending(ctx, "jeff", tc.opts)
					if n := rt.n.Load() - before; n != tc.want {
						t.Errorf("%s k=%d case %d %+v: %d round trips, want %d", name, k, i, tc.opts, n, tc.want)
					}
					if !errors.Is(err, tc.err) || len(got) != tc.chats {
						t.Errorf("%s k=%d case %d %+v: %d chats, err %v; want %d, %v", name, k, i, tc.opts, len(got), err, tc.chats, tc.err)
					}
				}
				// One chat with news, restricted: the seen update is part of
				// the fetch script on a standalone server.
				must(s.Send(ctx, "1", "joe", "again"))(t)
				before := rt.n.Load()
				if got := must(s.Pending(ctx, "jeff", chat.PendingOptions{Chat: "1"}))(t); len(got) != 1 {
					t.Errorf("%s k=%d: --chat 1 returned %d chats", name, k, len(got))
				}
				if n, want := rt.n.Load()-before, 1+mark; n != want {
					t.Errorf("%s k=%d: --chat 1 with news: %d round trips, want %d", name, k, n, want)
				}
				// Fewer round trips, same index: every entry moved to its
				// chat's last message.
				zs := must(c.ZRangeWithScores(ctx, b.Prefix+"seen:{jeff}", 0, -1).Result())(t)
				for _, z := range zs {
					want := 1.0
					if z.Member == "1" {
						want = 2
					}
					if z.Score != want {
						t.Errorf("%s k=%d: seen:{jeff} %v = %v, want %v", name, k, z.Member, z.Score, want)
					}
				}
				if len(zs) != k {
					t.Errorf("%s k=%d: seen:{jeff} has %d entries", name, k, len(zs))
				}
			}
		}
	})
}

// BenchmarkPending measures Pending for a user in K chats with one new
// message each, and reports its round trips per call: peeking, marking,
// and marking in cluster mode (seen:{USER} updated after the scripts).
func BenchmarkPending(b *testing.B) {
	for _, backend := range []struct {
		name  string
		start func(testing.TB) redistest.Backend
	}{{"embedded", redistest.Embedded}, {"redis", redistest.Real}} {
		for _, k := range []int{1, 100, 1000} {
			for _, m := range []struct {
				name          string
				peek, cluster bool
			}{{"peek", true, false}, {"mark", false, false}, {"mark-cluster", false, true}} {
				peek := m.peek
				b.Run(fmt.Sprintf("%s/K=%d/%s", backend.name, k, m.name), func(b *testing.B) {
					s, rt, c := counted(b, backend.start(b), k, m.cluster)
					prefix := chat.Channel(s)[:len(chat.Channel(s))-len("chat:sent")]
					ctx := context.Background()
					// Load the script first: the timed calls find it cached.
					if _, err := s.Pending(ctx, "jeff", chat.PendingOptions{Peek: true}); err != nil {
						b.Fatal(err)
					}
					var trips int64
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if !peek {
							b.StopTimer()
							unsee(b, c, prefix, k)
							b.StartTimer()
						}
						before := rt.n.Load()
						got, err := s.Pending(ctx, "jeff", chat.PendingOptions{Peek: peek})
						trips += rt.n.Load() - before
						if err != nil || len(got) != k {
							b.Fatalf("pending: %d chats, %v", len(got), err)
						}
					}
					b.ReportMetric(float64(trips)/float64(b.N), "roundtrips/op")
				})
			}
		}
	}
}

// TestWatchSleepsWhileIdle: with nothing sent, Watch makes no requests
// after its first read (a spinning loop would make thousands).
func TestWatchSleepsWhileIdle(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		s, rt, _ := counted(t, b, 1, false)
		ctx, cancel := context.WithCancel(context.Background())
		reads := make(chan int, 10)
		done := make(chan error, 1)
		go func() {
			done <- s.Watch(ctx, "jeff", chat.WatchOptions{Poll: time.Minute}, func(cs []chat.ChatMessages) error {
				reads <- len(cs)
				return nil
			})
		}()
		select {
		case <-reads:
		case <-time.After(10 * time.Second):
			t.Fatal("no first read")
		}
		before := rt.n.Load()
		time.Sleep(300 * time.Millisecond) // idle on purpose: counting what happens meanwhile
		idle := rt.n.Load() - before
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if idle > 0 {
			t.Fatalf("%d requests while idle", idle)
		}
	})
}
