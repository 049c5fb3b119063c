package shardlist

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

func newList(t testing.TB, b redistest.Backend, key string, size int) *list {
	t.Helper()
	l, err := New(b.Client, Options{Prefix: b.Prefix, ShardSize: size, BatchSize: 4}).list(key)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestNewChecksInput(t *testing.T) {
	// Nothing listens there; no retries, so that a valid key's call fails
	// at once instead of after go-redis's backoff (its error is not checked).
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
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
		c := New(c, Options{ShardSize: tc.size})
		if _, err := c.list(tc.key); !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("list %q, size %d: %v, want %v", tc.key, tc.size, err, tc.want)
		}
		// every operation returns it, before sending anything
		if _, err := c.LLen(context.Background(), tc.key); tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("LLen %q, size %d: %v, want %v", tc.key, tc.size, err, tc.want)
		}
	}
}

func TestKeysShareTheHashTag(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	l := mustList(t, New(c, Options{Prefix: "app:"}), "jobs:eu")
	first, last := l.keys[0], l.keys[1]
	got := []string{first, last, l.shardKey(0), l.shardKey(-2)}
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
	redistest.SlowOnEmbedded(t, "random operations replayed on a plain LIST, three shard sizes: ~3.5 s of CPU")
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
							got, err = l.LPush(ctx, l.key, items...)
							want = b.Client.LPush(ctx, plain, toAny(items)...).Val()
						} else {
							got, err = l.RPush(ctx, l.key, items...)
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
							got, err = l.LPop(ctx, l.key, n)
							want, perr = b.Client.LPopCount(ctx, plain, n).Result()
						} else {
							got, err = l.RPop(ctx, l.key, n)
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
						got, err := l.LRange(ctx, l.key, start, stop)
						want := b.Client.LRange(ctx, plain, start, stop).Val()
						if err != nil || !slices.Equal(got, want) {
							t.Fatalf("op %d lrange %d %d: %q, %v; plain %q", op, start, stop, got, err, want)
						}
					default:
						// a blocking pop: no wait on a non-empty list, a
						// short one (that must leave no trace) on an empty one
						side := dir(rng.IntN(2))
						timeout := time.Second
						if b.Client.LLen(ctx, plain).Val() == 0 {
							timeout = 10 * time.Millisecond
						}
						item, err := l.bpop(ctx, side, timeout)
						// go-redis's BLPop rounds timeouts up to 1s: send it as is
						cmd := map[dir]string{left: "blpop", right: "brpop"}[side]
						plainPop, _ := b.Client.Do(ctx, cmd, plain, timeout.Seconds()).StringSlice()
						if len(plainPop) == 0 {
							if !errors.Is(err, ErrEmpty) {
								t.Fatalf("op %d bpop %s: %q, %v; plain is empty", op, side, item, err)
							}
							break
						}
						if err != nil || len(plainPop) != 2 || item != plainPop[1] {
							t.Fatalf("op %d bpop %s: %q, %v; plain %q", op, side, item, err, plainPop)
						}
					}
					// after every operation: Len as LLEN, and the stored
					// shards and mid count consistent
					got, err := l.LLen(ctx, l.key)
					want := b.Client.LLen(ctx, plain).Val()
					if err != nil || got != want {
						t.Fatalf("op %d llen: %d, %v; plain %d", op, got, err, want)
					}
					checkShards(t, l, size)
					if raw := rawLen(t, b, l); raw != want {
						t.Fatalf("op %d: shards hold %d items; plain %d", op, raw, want)
					}
				}
				got, _ := l.LRange(ctx, l.key, 0, -1)
				want := b.Client.LRange(ctx, plain, 0, -1).Val()
				if !slices.Equal(got, want) {
					t.Fatalf("final contents %q, plain %q", got, want)
				}
			})
		}
	})
}

// checkShards checks the layout's invariants: no shard over size-1 items,
// no empty shard strictly between the endpoints, the mid count equal to the
// sum of those shards' lengths, and Len equal to the sum of all.
func checkShards(t *testing.T, l *list, size int) {
	t.Helper()
	ctx := context.Background()
	lay, err := l.Layout(ctx, l.key)
	if err != nil {
		t.Fatal(err)
	}
	if lay.First > lay.Last {
		t.Fatalf("first %d > last %d", lay.First, lay.Last)
	}
	var mid int64
	for _, s := range lay.Shards {
		if s.Length > int64(size-1) {
			t.Fatalf("shard %d holds %d items, more than %d", s.Index, s.Length, size-1)
		}
		if s.Index > lay.First && s.Index < lay.Last {
			if s.Length == 0 {
				t.Fatalf("middle shard %d is empty: %+v", s.Index, lay)
			}
			mid += s.Length
		}
	}
	if lay.Mid != mid {
		t.Fatalf("mid count %d, middle shards hold %d: %+v", lay.Mid, mid, lay)
	}
	if n, err := l.LLen(ctx, l.key); err != nil || n != lay.Length {
		t.Fatalf("Len %d, %v; shards hold %d: %+v", n, err, lay.Length, lay)
	}
}

// rawLen counts the list's items with plain commands, independently of the
// package: GET of the endpoints and LLEN of every shard key that exists
// (found with SCAN). It fails the test if a shard outside the endpoints holds
// anything, or if the mid key holds 0 or the wrong count.
func rawLen(t *testing.T, b redistest.Backend, l *list) int64 {
	t.Helper()
	ctx := context.Background()
	fk, lk := l.keys[0], l.keys[1]
	first, _ := b.Client.Get(ctx, fk).Int64() // absent = 0
	last, _ := b.Client.Get(ctx, lk).Int64()
	base := strings.TrimSuffix(fk, "first")
	var keys []string
	iter := b.Client.Scan(ctx, 0, base+"*", 1000).Iterator()
	for iter.Next(ctx) {
		if k := iter.Val(); k != fk && k != lk && k != l.midKey() && k != l.keys[3] && k != l.keys[4] {
			keys = append(keys, k)
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	pipe := b.Client.Pipeline()
	lens := map[string]*redis.IntCmd{}
	for _, k := range keys {
		lens[k] = pipe.LLen(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && len(keys) > 0 {
		t.Fatal(err)
	}
	var total, mid int64
	for _, k := range keys {
		n, err := strconv.ParseInt(strings.TrimPrefix(k, base), 10, 64)
		if err != nil {
			t.Fatalf("unexpected key %q", k)
		}
		length := lens[k].Val()
		if n < first || n > last {
			t.Fatalf("shard %d outside %d..%d holds %q", n, first, last, b.Client.LRange(ctx, k, 0, -1).Val())
		}
		total += length
		if n > first && n < last {
			mid += length
		}
	}
	stored, err := b.Client.Get(ctx, l.midKey()).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		if mid != 0 {
			t.Fatalf("mid key absent, middle shards hold %d", mid)
		}
	case err != nil:
		t.Fatal(err)
	case stored != mid || stored == 0:
		t.Fatalf("mid key %d, middle shards hold %d", stored, mid)
	}
	return total
}

// TestMidCountExact runs a long random sequence of pushes and pops (both
// ends, counts and batches spanning many shards) on a list of one-item
// shards, then 4 goroutines doing the same at once with blocking pops, and
// checks Len, the pushes' returned lengths and the mid count against the
// shards read independently (rawLen) and against the items counted.
func TestMidCountExact(t *testing.T) {
	redistest.SlowOnEmbedded(t, "a long random sequence, then 4 goroutines: ~4 s of CPU")
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "midcount", 2)
		rng := rand.New(rand.NewPCG(3, 9))
		check := func(what string, want int64) {
			t.Helper()
			if n, err := l.LLen(ctx, l.key); err != nil || n != want {
				t.Fatalf("%s: Len %d, %v; want %d", what, n, err, want)
			}
			if n := rawLen(t, b, l); n != want {
				t.Fatalf("%s: shards hold %d items, want %d", what, n, want)
			}
			checkShards(t, l, 2)
		}
		var want int64
		next := 0
		for op := 0; op < 1200; op++ {
			side := dir(rng.IntN(2))
			pushPct := 70 // grow for 200 operations, then shrink for 200
			if op/200%2 == 1 {
				pushPct = 30
			}
			if rng.IntN(100) < pushPct {
				items := make([]string, 1+rng.IntN(12))
				for i := range items {
					next++
					items[i] = fmt.Sprint(next)
				}
				n, err := l.push(ctx, side, items)
				want += int64(len(items))
				if err != nil || n != want {
					t.Fatalf("op %d push %d: length %d, %v; want %d", op, len(items), n, err, want)
				}
			} else {
				got, err := l.pop(ctx, side, 1+rng.IntN(12))
				if err != nil && !errors.Is(err, ErrEmpty) {
					t.Fatal(err)
				}
				want -= int64(len(got))
			}
			if op%20 == 0 {
				check(fmt.Sprint("op ", op), want)
			}
		}
		check("after the sequence", want)

		// concurrently, with blocking pops
		l.RPush(ctx, l.key, "x", "y", "z")
		want += 3
		var pushed, popped [4]int64
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 11))
				for op := 0; op < 150; op++ {
					side := dir(rng.IntN(2))
					switch k := rng.IntN(10); {
					case k < 5:
						items := make([]string, 1+rng.IntN(6))
						for i := range items {
							items[i] = fmt.Sprintf("w%d-%d-%d", w, op, i)
						}
						if _, err := l.push(ctx, side, items); err != nil {
							errs <- err
							return
						}
						pushed[w] += int64(len(items))
					case k < 8:
						got, err := l.pop(ctx, side, 1+rng.IntN(6))
						if err != nil && !errors.Is(err, ErrEmpty) {
							errs <- err
							return
						}
						popped[w] += int64(len(got))
					default:
						_, err := l.bpop(ctx, side, 10*time.Millisecond)
						if errors.Is(err, ErrEmpty) {
							break
						}
						if err != nil {
							errs <- err
							return
						}
						popped[w]++
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for w := range pushed {
			want += pushed[w] - popped[w]
		}
		check("after the concurrent phase", want)
	})
}

// TestListWithoutMidKey covers a list written before the mid count existed
// (simulated by deleting the key): it is counted from the shards, and the
// next push or pop stores the count.
func TestListWithoutMidKey(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "legacy", 3)
		l.RPush(ctx, l.key, "a", "b", "c", "d", "e", "f", "g") // 0: [a b], 1: [c d], 2: [e f], 3: [g]
		l.LPush(ctx, l.key, "z", "y", "x")                     // -2: [x], -1: [y z]
		b.Client.Del(ctx, l.midKey())
		if n, err := l.LLen(ctx, l.key); err != nil || n != 10 {
			t.Fatalf("Len = %d, %v; want 10", n, err)
		}
		checkShards(t, l, 3)
		if got, err := l.LPop(ctx, l.key, 2); err != nil || !slices.Equal(got, []string{"x", "y"}) {
			t.Fatalf("LPop = %q, %v", got, err)
		}
		if m, err := b.Client.Get(ctx, l.midKey()).Int64(); err != nil || m != 6 {
			t.Fatalf("mid key after the pop: %d, %v; want 6 (shards 0..2)", m, err)
		}
		b.Client.Del(ctx, l.midKey())
		if n, err := l.RPush(ctx, l.key, "h", "i"); err != nil || n != 10 {
			t.Fatalf("RPush = %d, %v; want 10", n, err)
		}
		if n := rawLen(t, b, l); n != 10 {
			t.Fatalf("shards hold %d items", n)
		}
		if got, err := l.LPop(ctx, l.key, 20); err != nil || len(got) != 10 {
			t.Fatalf("LPop = %q, %v", got, err)
		}
		if n := rawLen(t, b, l); n != 0 {
			t.Fatalf("shards hold %d items", n)
		}
	})
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
		if _, err := l.RPush(ctx, l.key, "a", "b", "c", "d", "e"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.LPush(ctx, l.key, "z", "y"); err != nil {
			t.Fatal(err)
		}
		lay, err := l.Layout(ctx, l.key)
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
		if got := b.Client.LRange(ctx, l.shardKey(-1), 0, -1).Val(); !slices.Equal(got, []string{"y", "z"}) {
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
		if _, err := l.RPush(ctx, l.key, "a", "b", "c", "d", "e"); err != nil {
			t.Fatal(err)
		}
		b.Client.LPop(ctx, l.shardKey(0))
		b.Client.LPop(ctx, l.shardKey(0))
		b.Client.RPop(ctx, l.shardKey(2))
		if lay, _ := l.Layout(ctx, l.key); lay.First != 0 || lay.Last != 2 {
			t.Fatalf("endpoints moved: %+v", lay)
		}
		if n, err := l.LLen(ctx, l.key); err != nil || n != 2 {
			t.Fatalf("Len = %d, %v; want 2", n, err)
		}
		if got, _ := l.LRange(ctx, l.key, 0, -1); !slices.Equal(got, []string{"c", "d"}) {
			t.Fatalf("Range = %q", got)
		}
		if got, err := l.RPop(ctx, l.key, 1); err != nil || !slices.Equal(got, []string{"d"}) {
			t.Fatalf("RPop = %q, %v", got, err)
		}
		if got, err := l.LPop(ctx, l.key, 5); err != nil || !slices.Equal(got, []string{"c"}) {
			t.Fatalf("LPop = %q, %v", got, err)
		}
		if _, err := l.LPop(ctx, l.key, 1); !errors.Is(err, ErrEmpty) {
			t.Fatalf("LPop on empty = %v", err)
		}
		if n, _ := l.RPush(ctx, l.key, "x"); n != 1 {
			t.Fatalf("RPush after emptying: length %d", n)
		}
	})
}

func TestWakeMarker(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "mark", 3)
		if _, err := l.RPush(ctx, l.key, "a", WakeMarker); !errors.Is(err, ErrReserved) {
			t.Fatalf("push of the marker: %v", err)
		}
		if n, _ := l.LLen(ctx, l.key); n != 0 {
			t.Fatalf("refused push wrote %d items", n)
		}
		// A marker left in a shard (a blocking pop that died) is skipped.
		l.RPush(ctx, l.key, "a", "b")
		b.Client.LPush(ctx, l.shardKey(0), WakeMarker)
		b.Client.RPush(ctx, l.shardKey(0), WakeMarker)
		if got, err := l.LPop(ctx, l.key, 3); err != nil || !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("LPop = %q, %v", got, err)
		}

		// The wake script pushes the marker into a shard the list has
		// left, and the wait that follows returns at once.
		l.RPush(ctx, l.key, "c", "d", "e") // shards 0: [c d], 1: [e]
		l.LPop(ctx, l.key, 2)              // first moves to 1
		start := time.Now()
		item, ok, err := testWait(ctx, l, left, 0, 5*time.Second)
		if err != nil || !ok || item != WakeMarker || time.Since(start) > 2*time.Second {
			t.Fatalf("wait on a stale shard: %q, %v, %v after %s", item, ok, err, time.Since(start))
		}
		// The wait left the marker; the next pop of the same caller
		// removes it (the shard is outside the list).
		if n := b.Client.LLen(ctx, l.shardKey(0)).Val(); n != 1 {
			t.Fatalf("stale shard holds %d elements, want the marker", n)
		}
		if got, _, _, err := l.popCall(ctx, left, 1, int64(0)); err != nil || !slices.Equal(got, []string{"e"}) {
			t.Fatalf("pop = %q, %v", got, err)
		}
		if n := b.Client.Exists(ctx, l.shardKey(0)).Val(); n != 0 {
			t.Fatalf("marker left in the stale shard")
		}
		if n := rawLen(t, b, l); n != 0 {
			t.Fatalf("shards hold %d items", n)
		}
	})
}

// TestWaitTakesNothing checks that the wait of a blocking pop (BLMOVE of a
// shard onto itself) returns an element but leaves every shard as it was,
// even when the shard waited on has become a middle shard meanwhile: only
// the pop script removes items, so the mid count stays exact.
func TestWaitTakesNothing(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "waitonly", 3)
		l.RPush(ctx, l.key, "a", "b", "c", "d", "e") // 0: [a b], 1: [c d], 2: [e]
		before := b.Client.LRange(ctx, l.shardKey(1), 0, -1).Val()
		for _, side := range []dir{left, right} {
			for _, shard := range []int64{0, 1, 2} {
				item, ok, err := testWait(ctx, l, side, shard, time.Second)
				if err != nil || !ok || item == WakeMarker {
					t.Fatalf("wait %s on shard %d: %q, %v, %v", side, shard, item, ok, err)
				}
			}
		}
		if got, _ := l.LRange(ctx, l.key, 0, -1); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
			t.Fatalf("after waits: %q", got)
		}
		if after := b.Client.LRange(ctx, l.shardKey(1), 0, -1).Val(); !slices.Equal(after, before) {
			t.Fatalf("middle shard %q, was %q", after, before)
		}
		checkShards(t, l, 3)
		if n := rawLen(t, b, l); n != 5 {
			t.Fatalf("shards hold %d items", n)
		}
	})
}

func TestBlockingPop(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "block", 3)

		// Empty: the wait ends at the timeout, sub-second honoured.
		for _, side := range []dir{left, right} {
			const timeout = 250 * time.Millisecond
			start := time.Now()
			_, err := l.bpop(ctx, side, timeout)
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
			side  dir
			push  func(context.Context, string, ...string) (int64, error)
			items []string
			want  string
		}{
			{left, l.RPush, []string{"a", "b", "c", "d"}, "a"},
			{left, l.LPush, []string{"a", "b", "c", "d"}, "d"},
			{right, l.RPush, []string{"a", "b", "c", "d"}, "d"},
			{right, l.LPush, []string{"a", "b", "c", "d"}, "a"},
		} {
			got := make(chan string, 1)
			go func() {
				item, err := l.bpop(ctx, tc.side, 10*time.Second)
				if err != nil {
					item = err.Error()
				}
				got <- item
			}()
			waitBlocked(t, b, 1)
			if _, err := tc.push(ctx, l.key, tc.items...); err != nil {
				t.Fatal(err)
			}
			if item := <-got; item != tc.want {
				t.Fatalf("BPop %s got %q, want %q", tc.side, item, tc.want)
			}
			l.LPop(ctx, l.key, 10)
		}
	})
}

// waitBlocked polls until n clients are blocked on a real server. The
// embedded server does not report blocked clients: there the waiter may
// still be before its wait, and the result is checked all the same.
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
					side := dir(rng.IntN(2))
					if _, err := l.push(ctx, side, items); err != nil {
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
				side := dir(c % 2)
				for {
					var items []string
					var err error
					if c < 2 {
						var item string
						item, err = l.bpop(ctx, side, 100*time.Millisecond)
						items = []string{item}
					} else {
						items, err = l.pop(ctx, side, 1+c)
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
		if n, _ := l.LLen(ctx, l.key); n != 0 {
			t.Errorf("%d items left", n)
		}
	})
}

// testWait runs one wait of a blocking pop on its own waiter.
func testWait(ctx context.Context, l *list, side dir, shard int64, d time.Duration) (string, bool, error) {
	w, err := l.newWaiter(ctx, shard)
	if err != nil {
		return "", false, err
	}
	defer w.close()
	return w.wait(ctx, side, shard, d)
}

// mustList returns the list KEY of c.
func mustList(t testing.TB, c *Client, key string) *list {
	t.Helper()
	l, err := c.list(key)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestShortWaitEnds runs waits of a millisecond and less on an empty list:
// each must time out, taking nothing. Redis 6.2 truncates a blocking
// timeout to whole milliseconds, and reads 0.001 s as 0 (block forever).
func TestShortWaitEnds(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		l := newList(t, b, "short", 2)
		for _, d := range []time.Duration{0, 500 * time.Microsecond, time.Millisecond, 1400 * time.Microsecond} {
			if item, ok, err := testWait(context.Background(), l, left, 0, d); err != nil || ok {
				t.Fatalf("a wait of %s on an empty list: %q, %v, %v", d, item, ok, err)
			}
		}
	})
}
