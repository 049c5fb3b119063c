package shardlist

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func newList(t testing.TB, b redistest.Backend, key string, size int) *List {
	t.Helper()
	l, err := New(b.Client, key, Options{Prefix: b.Prefix, ShardSize: size, BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestNewChecksInput(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, tc := range []struct {
		key  string
		size int
		want error
	}{
		{"jobs", 0, nil},
		{"jobs", 2, nil},
		{"jobs", 1, ErrShardSize},
		{"jobs", -3, ErrShardSize},
		{"", 0, names.ErrInvalid},
		{"a b", 0, names.ErrInvalid},
		{"a{b}", 0, names.ErrInvalid},
	} {
		_, err := New(c, tc.key, Options{ShardSize: tc.size})
		if !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("New(%q, size %d) = %v, want %v", tc.key, tc.size, err, tc.want)
		}
	}
}

func TestKeysShareTheHashTag(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	l, err := New(c, "jobs:eu", Options{Prefix: "app:"})
	if err != nil {
		t.Fatal(err)
	}
	first, last := l.EndpointKeys()
	got := []string{first, last, l.ShardKey(0), l.ShardKey(-2)}
	want := []string{"app:{jobs:eu}:first", "app:{jobs:eu}:last", "app:{jobs:eu}:0", "app:{jobs:eu}:-2"}
	if !slices.Equal(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
}

// TestMatchesPlainList replays the same random operations on a sharded list
// and on a plain LIST (pushes, pops with counts, ranges, lengths, blocking
// pops on a non-empty list) and compares every result, with small shards so that
// pushes and pops cross shard boundaries all the time.
func TestMatchesPlainList(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		for _, size := range []int{2, 3, 5} {
			t.Run(fmt.Sprint("size", size), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(size), 42))
				key := fmt.Sprint("r", size)
				l := newList(t, b, key, size)
				plain := b.Prefix + "plain" + key
				next := 0
				for op := 0; op < 300; op++ {
					// Grow for 50 operations, then shrink for 50, so that
					// both long and empty lists are covered.
					k := rng.IntN(10)
					if op/50%2 == 1 && k < 4 && rng.IntN(2) == 0 {
						k += 4 // a pop instead of a push
					}
					switch {
					case k < 4: // push a batch, possibly larger than BatchSize
						items := make([]string, 1+rng.IntN(9))
						for i := range items {
							next++
							items[i] = fmt.Sprint("i", next)
						}
						var got, want int64
						var err error
						if k < 2 {
							got, err = l.LPush(ctx, items...)
							want = b.Client.LPush(ctx, plain, toAny(items)...).Val()
						} else {
							got, err = l.RPush(ctx, items...)
							want = b.Client.RPush(ctx, plain, toAny(items)...).Val()
						}
						if err != nil || got != want {
							t.Fatalf("op %d push: %d, %v; plain %d", op, got, err, want)
						}
					case k < 8: // pop with a count
						n := 1 + rng.IntN(6)
						var got, want []string
						var err, perr error
						if k < 6 {
							got, err = l.LPop(ctx, n)
							want, perr = b.Client.LPopCount(ctx, plain, n).Result()
						} else {
							got, err = l.RPop(ctx, n)
							want, perr = b.Client.RPopCount(ctx, plain, n).Result()
						}
						if errors.Is(perr, redis.Nil) {
							if !errors.Is(err, ErrEmpty) {
								t.Fatalf("op %d pop %d: %q, %v; plain is empty", op, n, got, err)
							}
							break
						}
						if err != nil || !slices.Equal(got, want) {
							t.Fatalf("op %d pop %d: %q, %v; plain %q, %v", op, n, got, err, want, perr)
						}
					case k < 9:
						start, stop := int64(rng.IntN(21)-10), int64(rng.IntN(21)-10)
						got, err := l.Range(ctx, start, stop)
						want := b.Client.LRange(ctx, plain, start, stop).Val()
						if err != nil || !slices.Equal(got, want) {
							t.Fatalf("op %d lrange %d %d: %q, %v; plain %q", op, start, stop, got, err, want)
						}
					default:
						got, err := l.Len(ctx)
						want := b.Client.LLen(ctx, plain).Val()
						if err != nil || got != want {
							t.Fatalf("op %d llen: %d, %v; plain %d", op, got, err, want)
						}
						if want == 0 {
							break
						}
						// a blocking pop on a non-empty list: no wait
						side := Side(rng.IntN(2))
						item, err := l.BPop(ctx, side, time.Second)
						var plainPop []string
						if side == Left {
							plainPop = b.Client.BLPop(ctx, time.Second, plain).Val()
						} else {
							plainPop = b.Client.BRPop(ctx, time.Second, plain).Val()
						}
						if err != nil || len(plainPop) != 2 || item != plainPop[1] {
							t.Fatalf("op %d bpop %s: %q, %v; plain %q", op, side, item, err, plainPop)
						}
					}
					if op%5 == 0 {
						checkShards(t, l, size)
					}
				}
				got, _ := l.Range(ctx, 0, -1)
				want := b.Client.LRange(ctx, plain, 0, -1).Val()
				if !slices.Equal(got, want) {
					t.Fatalf("final contents %q, plain %q", got, want)
				}
			})
		}
	})
}

// checkShards checks the layout's invariants: no shard over size-1 items,
// lengths summing to Len.
func checkShards(t *testing.T, l *List, size int) {
	t.Helper()
	lay, err := l.Layout(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if lay.First > lay.Last {
		t.Fatalf("first %d > last %d", lay.First, lay.Last)
	}
	for _, s := range lay.Shards {
		if s.Length > int64(size-1) {
			t.Fatalf("shard %d holds %d items, more than %d", s.Index, s.Length, size-1)
		}
	}
}

func toAny(items []string) []any {
	out := make([]any, len(items))
	for i, s := range items {
		out[i] = s
	}
	return out
}

func TestShardLayout(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "lay", 3)
		if _, err := l.RPush(ctx, "a", "b", "c", "d", "e"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.LPush(ctx, "z", "y"); err != nil {
			t.Fatal(err)
		}
		lay, err := l.Layout(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lens := []int64{}
		for _, s := range lay.Shards {
			lens = append(lens, s.Length)
		}
		// shard -1: [y z]; 0: [a b]; 1: [c d]; 2: [e]
		if lay.First != -1 || lay.Last != 2 || lay.Length != 7 || !slices.Equal(lens, []int64{2, 2, 2, 1}) {
			t.Fatalf("layout %+v", lay)
		}
		if got := b.Client.LRange(ctx, l.ShardKey(-1), 0, -1).Val(); !slices.Equal(got, []string{"y", "z"}) {
			t.Fatalf("shard -1 = %q", got)
		}
	})
}

// TestLenWhileEndpointLags empties the end shard the way a blocking pop
// does (a plain LPOP on the shard, which moves no endpoint).
func TestLenWhileEndpointLags(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "lag", 3)
		if _, err := l.RPush(ctx, "a", "b", "c", "d", "e"); err != nil {
			t.Fatal(err)
		}
		b.Client.LPop(ctx, l.ShardKey(0))
		b.Client.LPop(ctx, l.ShardKey(0))
		b.Client.RPop(ctx, l.ShardKey(2))
		if lay, _ := l.Layout(ctx); lay.First != 0 || lay.Last != 2 {
			t.Fatalf("endpoints moved: %+v", lay)
		}
		if n, err := l.Len(ctx); err != nil || n != 2 {
			t.Fatalf("Len = %d, %v; want 2", n, err)
		}
		if got, _ := l.Range(ctx, 0, -1); !slices.Equal(got, []string{"c", "d"}) {
			t.Fatalf("Range = %q", got)
		}
		if got, err := l.RPop(ctx, 1); err != nil || !slices.Equal(got, []string{"d"}) {
			t.Fatalf("RPop = %q, %v", got, err)
		}
		if got, err := l.LPop(ctx, 5); err != nil || !slices.Equal(got, []string{"c"}) {
			t.Fatalf("LPop = %q, %v", got, err)
		}
		if _, err := l.LPop(ctx, 1); !errors.Is(err, ErrEmpty) {
			t.Fatalf("LPop on empty = %v", err)
		}
		if n, _ := l.RPush(ctx, "x"); n != 1 {
			t.Fatalf("RPush after emptying: length %d", n)
		}
	})
}

func TestWakeMarker(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "mark", 3)
		if _, err := l.RPush(ctx, "a", WakeMarker); !errors.Is(err, ErrReserved) {
			t.Fatalf("push of the marker: %v", err)
		}
		if n, _ := l.Len(ctx); n != 0 {
			t.Fatalf("refused push wrote %d items", n)
		}
		// A marker left in a shard (a blocking pop that died) is skipped.
		l.RPush(ctx, "a", "b")
		b.Client.LPush(ctx, l.ShardKey(0), WakeMarker)
		b.Client.RPush(ctx, l.ShardKey(0), WakeMarker)
		if got, err := l.LPop(ctx, 3); err != nil || !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("LPop = %q, %v", got, err)
		}

		// The wake script pushes the marker into a shard the list has
		// left, and the BLPOP that follows returns at once.
		l.RPush(ctx, "c", "d", "e") // shards 0: [c d], 1: [e]
		l.LPop(ctx, 2)              // first moves to 1
		start := time.Now()
		item, ok, err := l.wait(ctx, Left, 0, 5*time.Second)
		if err != nil || !ok || item != WakeMarker || time.Since(start) > 2*time.Second {
			t.Fatalf("wait on a stale shard: %q, %v, %v after %s", item, ok, err, time.Since(start))
		}
		if got, err := l.BLPop(ctx, time.Second); err != nil || got != "e" {
			t.Fatalf("BLPop = %q, %v", got, err)
		}
	})
}

// TestSettleTakenItem covers what happens after BLPOP took an item: kept if
// its shard was the end, else put back and the end item popped instead.
func TestSettleTakenItem(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "settle", 3)
		l.RPush(ctx, "a", "b", "c", "d", "e") // 0: [a b], 1: [c d], 2: [e]

		// from the end shard: it is the answer
		taken := b.Client.LPop(ctx, l.ShardKey(0)).Val()
		got, _, err := l.pop(ctx, Left, 1, int64(0), taken)
		if err != nil || !slices.Equal(got, []string{"a"}) {
			t.Fatalf("settle end item: %q, %v", got, err)
		}
		// from a middle shard (the end moved outward meanwhile): put back
		taken = b.Client.LPop(ctx, l.ShardKey(1)).Val()
		got, _, err = l.pop(ctx, Left, 1, int64(1), taken)
		if err != nil || !slices.Equal(got, []string{"b"}) {
			t.Fatalf("settle middle item: %q, %v", got, err)
		}
		if all, _ := l.Range(ctx, 0, -1); !slices.Equal(all, []string{"c", "d", "e"}) {
			t.Fatalf("after settling: %q", all)
		}
		// from beyond the other end (the list was drained past it)
		taken = b.Client.RPop(ctx, l.ShardKey(2)).Val() // "e"
		if got, _ := l.RPop(ctx, 1); !slices.Equal(got, []string{"d"}) {
			t.Fatalf("RPop = %q", got)
		}
		got, _, err = l.pop(ctx, Left, 1, int64(2), taken)
		if err != nil || !slices.Equal(got, []string{"c"}) {
			t.Fatalf("settle item beyond the other end: %q, %v", got, err)
		}
		if all, _ := l.Range(ctx, 0, -1); !slices.Equal(all, []string{"e"}) {
			t.Fatalf("after settling: %q", all)
		}
		checkShards(t, l, 3)
	})
}

func TestBlockingPop(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "block", 3)

		// Empty: the wait ends at the timeout, sub-second honoured.
		for _, side := range []Side{Left, Right} {
			const timeout = 250 * time.Millisecond
			start := time.Now()
			_, err := l.BPop(ctx, side, timeout)
			took := time.Since(start)
			if !errors.Is(err, ErrEmpty) {
				t.Fatalf("BPop %s on empty: %v", side, err)
			}
			t.Logf("%s: BPop %s timeout %s returned after %s (late by %s)", b.Name, side, timeout, took, took-timeout)
			if took < timeout || took > timeout+2*time.Second {
				t.Fatalf("BPop %s with timeout %s took %s", side, timeout, took)
			}
		}

		// Items pushed while waiting wake the waiter; it gets the end
		// item a plain list's BLPOP/BRPOP would give, even when the
		// push overflows the shard it waits on.
		for _, tc := range []struct {
			side  Side
			push  func(context.Context, ...string) (int64, error)
			items []string
			want  string
		}{
			{Left, l.RPush, []string{"a", "b", "c", "d"}, "a"},
			{Left, l.LPush, []string{"a", "b", "c", "d"}, "d"},
			{Right, l.RPush, []string{"a", "b", "c", "d"}, "d"},
			{Right, l.LPush, []string{"a", "b", "c", "d"}, "a"},
		} {
			got := make(chan string, 1)
			go func() {
				item, err := l.BPop(ctx, tc.side, 10*time.Second)
				if err != nil {
					item = err.Error()
				}
				got <- item
			}()
			waitBlocked(t, b, 1)
			if _, err := tc.push(ctx, tc.items...); err != nil {
				t.Fatal(err)
			}
			if item := <-got; item != tc.want {
				t.Fatalf("BPop %s got %q, want %q", tc.side, item, tc.want)
			}
			l.LPop(ctx, 10)
		}
	})
}

// waitBlocked polls until n clients are blocked on a real server. The
// embedded server does not report blocked clients: there the waiter may
// still be before its BLPOP, and the result is checked all the same.
func waitBlocked(t *testing.T, b redistest.Backend, n int) {
	t.Helper()
	if !b.Real() {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		info := b.Client.Info(context.Background(), "clients").Val()
		var blocked int
		for _, line := range splitLines(info) {
			if _, err := fmt.Sscanf(line, "blocked_clients:%d", &blocked); err == nil && blocked >= n {
				return
			}
		}
		time.Sleep(5 * time.Millisecond) // poll interval, bounded by the deadline
	}
	t.Fatalf("no client blocked within 5s")
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// TestProducersConsumers runs 4 producers and 4 consumers at once on a list
// of tiny shards: every item is popped exactly once, none is lost.
func TestProducersConsumers(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "pc", 3)
		const producers, consumers, perProducer = 4, 4, 150
		var pwg, cwg sync.WaitGroup
		done := make(chan struct{})
		popped := make([][]string, consumers)
		errs := make(chan error, producers+consumers)
		for p := 0; p < producers; p++ {
			pwg.Add(1)
			go func() {
				defer pwg.Done()
				rng := rand.New(rand.NewPCG(uint64(p), 7))
				for i := 0; i < perProducer; {
					n := min(1+rng.IntN(6), perProducer-i)
					items := make([]string, n)
					for j := range items {
						items[j] = fmt.Sprintf("p%d-%d", p, i+j)
					}
					i += n
					side := Side(rng.IntN(2))
					if _, err := l.Push(ctx, side, items); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		for c := 0; c < consumers; c++ {
			cwg.Add(1)
			go func() {
				defer cwg.Done()
				side := Side(c % 2)
				for {
					var items []string
					var err error
					if c < 2 {
						var item string
						item, err = l.BPop(ctx, side, 100*time.Millisecond)
						items = []string{item}
					} else {
						items, err = l.Pop(ctx, side, 1+c)
					}
					if errors.Is(err, ErrEmpty) {
						select {
						case <-done:
							return // producers finished and the list is empty
						default:
							continue
						}
					}
					if err != nil {
						errs <- err
						return
					}
					popped[c] = append(popped[c], items...)
				}
			}()
		}
		pwg.Wait()
		close(done)
		cwg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, items := range popped {
			for _, it := range items {
				seen[it]++
			}
		}
		if len(seen) != producers*perProducer {
			t.Errorf("%d distinct items popped, want %d", len(seen), producers*perProducer)
		}
		for it, n := range seen {
			if n != 1 {
				t.Errorf("item %q popped %d times", it, n)
			}
		}
		if n, _ := l.Len(ctx); n != 0 {
			t.Errorf("%d items left", n)
		}
	})
}
