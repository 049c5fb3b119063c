package chat_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/redistest"
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
// jeff in k chats that each hold one message from joe.
func counted(tb testing.TB, b redistest.Backend, k int) (*chat.Store, *roundTrips, *redis.Client) {
	tb.Helper()
	opt, err := redis.ParseURL(b.URL)
	if err != nil {
		tb.Fatal(err)
	}
	c := redis.NewClient(opt)
	tb.Cleanup(func() { c.Close() })
	rt := &roundTrips{}
	c.AddHook(rt)
	s := chat.New(c, chat.Options{Prefix: b.Prefix})
	ctx := context.Background()
	msg := "hello"
	for i := 0; i < k; i++ {
		if _, err := s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: strconv.Itoa(i + 1), Message: &msg}); err != nil {
			tb.Fatal(err)
		}
	}
	return s, rt, c
}

// unsee moves jeff's seen ids back to 0 in all k chats, so the next Pending
// has one message per chat again.
func unsee(tb testing.TB, c *redis.Client, prefix string, k int) {
	ctx := context.Background()
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 1; i <= k; i++ {
			p.ZAdd(ctx, prefix+"chat:{"+strconv.Itoa(i)+"}", redis.Z{Score: 0, Member: "jeff"})
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
		for _, k := range []int{1, 50} {
			b := b
			b.Prefix += fmt.Sprintf("k%d:", k)
			s, rt, _ := counted(t, b, k)
			// Warm the script cache so the count has no NOSCRIPT retry.
			must(s.Pending(ctx, "nobody", chat.PendingOptions{}))(t)
			must(s.Pending(ctx, "joe", chat.PendingOptions{Peek: true}))(t)
			for _, tc := range []struct {
				opts chat.PendingOptions
				want int64
			}{
				{chat.PendingOptions{Peek: true}, 2},
				{chat.PendingOptions{}, 3},
				{chat.PendingOptions{}, 2}, // nothing new: no seen update
				{chat.PendingOptions{Chat: "1"}, 1},
			} {
				before := rt.n.Load()
				got := must(s.Pending(ctx, "jeff", tc.opts))(t)
				if n := rt.n.Load() - before; n != tc.want {
					t.Errorf("k=%d %+v: %d round trips, want %d", k, tc.opts, n, tc.want)
				}
				if tc.want == 2 && !tc.opts.Peek && len(got) != 0 {
					t.Errorf("k=%d: second pending returned %d chats", k, len(got))
				}
				if tc.opts.Peek && len(got) != k {
					t.Errorf("k=%d: peek returned %d chats", k, len(got))
				}
			}
		}
	})
}

// BenchmarkPending measures Pending for a user in K chats with one new
// message each, and reports its round trips per call.
func BenchmarkPending(b *testing.B) {
	for _, backend := range []struct {
		name  string
		start func(testing.TB) redistest.Backend
	}{{"embedded", redistest.Embedded}, {"redis", redistest.Real}} {
		for _, k := range []int{1, 100, 1000} {
			for _, peek := range []bool{true, false} {
				mode := "mark"
				if peek {
					mode = "peek"
				}
				b.Run(fmt.Sprintf("%s/K=%d/%s", backend.name, k, mode), func(b *testing.B) {
					s, rt, c := counted(b, backend.start(b), k)
					prefix := s.Channel()[:len(s.Channel())-len("chat:sent")]
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
		s, rt, _ := counted(t, b, 1)
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
