package shardlist

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// snapshot reads every key of the list's hash tag: its type and value.
func snapshot(t *testing.T, b redistest.Backend, l *list) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	iter := b.Client.Scan(ctx, 0, l.base+"*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		switch typ := b.Client.Type(ctx, k).Val(); typ {
		case "string":
			out[k] = "string:" + b.Client.Get(ctx, k).Val()
		case "list":
			out[k] = "list:" + strings.Join(b.Client.LRange(ctx, k, 0, -1).Val(), ",")
		default:
			out[k] = typ
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorruptStateIsRefused corrupts a list's keys in each way a bad or
// hostile write can, and checks that every operation that reads the bad
// value answers ErrCorrupt, naming the key, and changes nothing. Checks of
// the endpoint, count, size and version keys are O(1), so every operation
// refuses those; a bad shard is found by the operations that reach it. No
// operation may loop over the shard numbers the corrupted values claim (a
// loop over ten million shards would hold the server for many seconds).
func TestCorruptStateIsRefused(t *testing.T) {
	all := []string{"Len", "LPop", "RPop", "LPush", "RPush", "Range", "Range of the tail", "Layout", "BRPop"}
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		ops := map[string]func(l *list) error{
			"Len":               func(l *list) error { _, err := l.LLen(ctx, l.key); return err },
			"LPop":              func(l *list) error { _, err := l.LPop(ctx, l.key, 3); return err },
			"RPop":              func(l *list) error { _, err := l.RPop(ctx, l.key, 3); return err },
			"LPush":             func(l *list) error { _, err := l.LPush(ctx, l.key, "x"); return err },
			"RPush":             func(l *list) error { _, err := l.RPush(ctx, l.key, "x", "y", "z"); return err },
			"Range":             func(l *list) error { _, err := l.LRange(ctx, l.key, 0, -1); return err },
			"Range of the tail": func(l *list) error { _, err := l.LRange(ctx, l.key, -2, -1); return err },
			"Layout":            func(l *list) error { _, err := l.Layout(ctx, l.key); return err },
			"BRPop":             func(l *list) error { _, err := l.bpop(ctx, right, 10*time.Millisecond); return err },
		}
		for _, tc := range []struct {
			name    string
			corrupt func(l *list)
			names   string   // in the error message
			fail    []string // the operations that must refuse
		}{
			{"far last endpoint", func(l *list) { b.Client.Set(ctx, l.keys[1], 10000000, 0) }, ":mid", all},
			{"far first endpoint", func(l *list) { b.Client.Set(ctx, l.keys[0], -10000000, 0) }, ":mid", all},
			{"far endpoint, no mid", func(l *list) {
				b.Client.Set(ctx, l.keys[1], 10000000, 0)
				b.Client.Del(ctx, l.keys[2])
			}, "is empty", all},
			{"far endpoint and mid", func(l *list) {
				b.Client.Set(ctx, l.keys[1], 10000000, 0)
				b.Client.Set(ctx, l.keys[2], 10000000, 0)
			}, "is empty", []string{"RPop", "Range", "Range of the tail", "Layout"}},
			{"text endpoint", func(l *list) { b.Client.Set(ctx, l.keys[1], "abc", 0) }, `:last holds "abc"`, all},
			{"float endpoint", func(l *list) { b.Client.Set(ctx, l.keys[0], "1e7", 0) }, ":first holds", all},
			{"inf endpoint", func(l *list) { b.Client.Set(ctx, l.keys[0], "inf", 0) }, ":first holds", all},
			{"huge endpoint", func(l *list) { b.Client.Set(ctx, l.keys[1], "99999999999999999999", 0) }, ":last holds", all},
			{"text mid", func(l *list) { b.Client.Set(ctx, l.keys[2], "x", 0) }, `:mid holds "x"`, all},
			{"negative mid", func(l *list) { b.Client.Set(ctx, l.keys[2], -4, 0) }, ":mid counts -4", all},
			{"mid without middle", func(l *list) { b.Client.Set(ctx, l.keys[0], 2, 0) }, ":mid counts", all},
			{"first after last", func(l *list) {
				b.Client.Set(ctx, l.keys[0], 5, 0)
				b.Client.Del(ctx, l.keys[2])
			}, "after", all},
			{"hash endpoint", func(l *list) {
				b.Client.Del(ctx, l.keys[1])
				b.Client.HSet(ctx, l.keys[1], "a", "b")
			}, ":last is a hash", all},
			{"text size", func(l *list) { b.Client.Set(ctx, l.keys[3], "big", 0) }, ":size holds", all},
			{"size 1", func(l *list) { b.Client.Set(ctx, l.keys[3], 1, 0) }, "below 2", all},
			{"text version", func(l *list) { b.Client.Set(ctx, l.keys[4], "v", 0) }, ":ver holds", all},
			{"string middle shard", func(l *list) {
				b.Client.Del(ctx, l.shardKey(1))
				b.Client.Set(ctx, l.shardKey(1), "x", 0)
			}, ":1 is a string", []string{"LPop", "RPop", "Range", "Layout"}},
			{"string end shard", func(l *list) {
				b.Client.Del(ctx, l.shardKey(3))
				b.Client.Set(ctx, l.shardKey(3), "x", 0)
			}, ":3 is a string", []string{"Len", "RPop", "LPush", "RPush", "Range", "Range of the tail", "Layout", "BRPop"}},
			{"empty middle shard", func(l *list) { b.Client.Del(ctx, l.shardKey(1)) }, ":1 is empty or missing",
				[]string{"LPop", "RPop", "Range", "Layout"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for i, op := range all {
					l := newList(t, b, fmt.Sprintf("bad%s%d", strings.ReplaceAll(tc.name, " ", ""), i), 3)
					if _, err := l.RPush(ctx, l.key, "a", "b", "c", "d", "e", "f", "g"); err != nil { // shards 0..3
						t.Fatal(err)
					}
					tc.corrupt(l)
					before := snapshot(t, b, l)
					err := ops[op](l)
					if !slices.Contains(tc.fail, op) {
						if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrEmpty) {
							t.Errorf("%s: %v", op, err)
						}
						continue
					}
					if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.names) {
						t.Errorf("%s: %v, want ErrCorrupt naming %q", op, err, tc.names)
					}
					if after := snapshot(t, b, l); !maps.Equal(before, after) {
						t.Fatalf("%s changed the keys:\n%v\nto\n%v", op, before, after)
					}
				}
			})
		}
	})
}

// TestBadMidIsCheckedBeforeTheFirstWrite is issue 12's case: a pop with a
// non-numeric mid count used to delete a shard, then fail.
func TestBadMidIsCheckedBeforeTheFirstWrite(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "badmid", 2)
		l.RPush(ctx, l.key, "a", "b", "c")
		b.Client.Set(ctx, l.midKey(), "many", 0)
		if _, err := l.LPop(ctx, l.key, 1); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("LPop: %v", err)
		}
		if got := b.Client.LRange(ctx, l.shardKey(0), 0, -1).Val(); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("shard 0 holds %q after the refused pop", got)
		}
		// repaired as docs/shardlist.md says: delete the count, chatq counts again
		b.Client.Del(ctx, l.midKey())
		if got, err := l.LPop(ctx, l.key, 3); err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("LPop after the repair: %q, %v", got, err)
		}
	})
}

// TestRangeAndLayoutInSteps reads ranges and the layout with budgets of a
// few shards and items per call, so that every read takes many calls, and
// compares them with a plain LIST and with one-call reads.
func TestRangeAndLayoutInSteps(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "steps", 4)
		plain := b.Prefix + "stepsplain"
		var items []string
		for i := range 60 {
			items = append(items, fmt.Sprint(i))
		}
		l.RPush(ctx, l.key, items[30:]...)
		l.LPush(ctx, l.key, items[:30]...)
		b.Client.RPush(ctx, plain, toAny(items[30:])...)
		b.Client.LPush(ctx, plain, toAny(items[:30])...)
		l.LPop(ctx, l.key, 2)
		b.Client.LPopCount(ctx, plain, 2)
		rng := rand.New(rand.NewPCG(1, 2))
		for range 40 {
			start, stop := int64(rng.IntN(80)-40), int64(rng.IntN(80)-40)
			want := b.Client.LRange(ctx, plain, start, stop).Val()
			for _, budget := range [][2]int{{1, 1}, {2, 3}, {3, 1000}} {
				got, err := l.rangeSteps(ctx, start, stop, budget[0], budget[1])
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("range %d %d in steps %v: %q, %v; plain %q", start, stop, budget, got, err, want)
				}
			}
		}
		one, err := l.Layout(ctx, l.key)
		if err != nil {
			t.Fatal(err)
		}
		for _, steps := range []int{1, 2, 5} {
			lay, err := l.layoutSteps(ctx, steps)
			if err != nil || !slices.Equal(lay.Shards, one.Shards) || lay.Mid != one.Mid || lay.Length != 58 {
				t.Fatalf("layout in steps of %d: %+v, %v; in one call %+v", steps, lay, err, one)
			}
		}
	})
}

// TestRangeRestartsWhenWritten writes between the calls of a range read:
// the next call answers 'changed', and a read gives up after 5 tries.
func TestRangeRestartsWhenWritten(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, "restart", 3)
		l.RPush(ctx, l.key, "a", "b", "c", "d", "e", "f")
		res, err := l.run(ctx, rangeScript, WakeMarker, "", "new", 0, -1, 0, 1000, 2).Slice()
		if err != nil || len(res) != 7 || res[1] != "read" {
			t.Fatalf("first call: %v, %v", res, err)
		}
		l.RPush(ctx, l.key, "g")
		res, err = l.run(ctx, rangeScript, WakeMarker, res[0], res[1], res[2], res[3], res[4], 1000, 2).Slice()
		if err != nil || len(res) != 2 || res[1] != "changed" {
			t.Fatalf("call after a write: %v, %v", res, err)
		}
		// A reader whose every try sees a write: ErrChanged.
		hooked := newClient(t, b)
		hooked.AddHook(writeAfterEachCall{b.Client, l.shardKey(9)})
		hl := mustList(t, New(hooked, Options{Prefix: b.Prefix}), "restart")
		if _, err := hl.rangeSteps(ctx, 0, -1, 1, 1); !errors.Is(err, ErrChanged) {
			t.Fatalf("range under writes: %v", err)
		}
	})
}

// writeAfterEachCall is a hook that, after each script call, bumps the
// list's write counter as a concurrent push would.
type writeAfterEachCall struct {
	c   *redis.Client
	key string
}

func (h writeAfterEachCall) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h writeAfterEachCall) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h writeAfterEachCall) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() == "evalsha" || cmd.Name() == "eval" {
			h.c.Incr(ctx, strings.TrimSuffix(h.key, "9")+"ver")
		}
		return err
	}
}

// TestShardSizeIsRecorded: the first push records the size; later pushes
// without a size use it, one with another size is refused (nothing
// written), and a list written before sizes were recorded takes the size
// of its next push.
func TestShardSizeIsRecorded(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l3 := newList(t, b, "ss", 3)
		l3.RPush(ctx, l3.key, "a", "b", "c", "d", "e", "f", "g")
		if v := b.Client.Get(ctx, l3.keys[3]).Val(); v != "3" {
			t.Fatalf("size key %q", v)
		}
		dflt := mustList(t, New(b.Client, Options{Prefix: b.Prefix, BatchSize: 4}), "ss")
		if n, err := dflt.RPush(ctx, dflt.key, "h", "i", "j"); err != nil || n != 10 {
			t.Fatalf("push with the default size: %d, %v", n, err)
		}
		checkShards(t, l3, 3)
		l5 := mustList(t, New(b.Client, Options{Prefix: b.Prefix, ShardSize: 5}), "ss")
		before := snapshot(t, b, l3)
		var se *ShardSizeError
		_, err := l5.RPush(ctx, l5.key, "k")
		if !errors.As(err, &se) || se.Recorded != 3 || se.Asked != 5 || !errors.Is(err, ErrShardSizeMismatch) {
			t.Fatalf("push with size 5: %v", err)
		}
		if after := snapshot(t, b, l3); !maps.Equal(before, after) {
			t.Fatalf("refused push wrote: %v", after)
		}
		if lay, _ := l3.Layout(ctx, l3.key); lay.ShardSize != 3 {
			t.Fatalf("layout shard size %d", lay.ShardSize)
		}
		// a list written before sizes were recorded
		b.Client.Del(ctx, l3.keys[3])
		if _, err := l5.RPush(ctx, l5.key, "k"); err != nil {
			t.Fatal(err)
		}
		if v := b.Client.Get(ctx, l3.keys[3]).Val(); v != "5" {
			t.Fatalf("size key after a push to an older list: %q", v)
		}
		if got, _ := l3.LRange(ctx, l3.key, 0, -1); len(got) != 11 {
			t.Fatalf("items %q", got)
		}
	})
}

// failNth makes the nth script call of a client fail, with err, as a lost
// reply (after the call ran) or as a refusal (before it ran).
type failNth struct {
	n     *int
	at    int
	err   error
	after bool
}

func (h failNth) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h failNth) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h failNth) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "evalsha" && cmd.Name() != "eval" {
			return next(ctx, cmd)
		}
		*h.n++
		if *h.n != h.at {
			return next(ctx, cmd)
		}
		if h.after {
			next(ctx, cmd)
		}
		cmd.SetErr(h.err)
		return h.err
	}
}

type protoErr string

func (e protoErr) Error() string { return string(e) }
func (protoErr) RedisError()     {}

// TestPushReportsWhatWasStored fails the third batch of a push: as a
// refusal (an error reply: nothing of it stored) and as a lost reply (it
// ran: it may be stored), and checks the PushError against the list.
func TestPushReportsWhatWasStored(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		items := make([]string, 10)
		for i := range items {
			items[i] = fmt.Sprint(i)
		}
		for _, tc := range []struct {
			name      string
			err       error
			after     bool
			stored    int
			uncertain int
			inList    int
		}{
			{"refused", protoErr("OOM command not allowed"), false, 8, 0, 8},
			{"reply lost", errors.New("read: connection reset by peer"), true, 8, 2, 10},
			{"first batch refused", protoErr("OOM command not allowed"), false, 0, 0, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := newClient(t, b)
				pushScript.Load(ctx, c)
				n, at := 0, 3
				if tc.stored == 0 {
					at = 1
				}
				c.AddHook(failNth{&n, at, tc.err, tc.after})
				key := "stored" + strings.ReplaceAll(tc.name, " ", "")
				l := mustList(t, New(c, Options{Prefix: b.Prefix, BatchSize: 4}), key)
				_, err := l.RPush(ctx, l.key, items...)
				var pe *PushError
				switch {
				case tc.stored == 0 && tc.uncertain == 0:
					if err == nil || errors.As(err, &pe) {
						t.Fatalf("push: %v, want a plain error", err)
					}
				case !errors.As(err, &pe) || pe.Stored != tc.stored || pe.Uncertain != tc.uncertain || pe.Total != 10:
					t.Fatalf("push: %v (%+v), want stored %d, uncertain %d", err, pe, tc.stored, tc.uncertain)
				}
				check := newList(t, b, key, 3)
				if got, _ := check.LRange(ctx, check.key, 0, -1); !slices.Equal(got, items[:tc.inList]) {
					t.Fatalf("list holds %q, want %q", got, items[:tc.inList])
				}
			})
		}
	})
}

// TestPopOfManyItems pops more items than one call takes (1000).
func TestPopOfManyItems(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := mustList(t, New(b.Client, Options{Prefix: b.Prefix, ShardSize: 100, BatchSize: 1000}), "many")
		items := make([]string, 2500)
		for i := range items {
			items[i] = fmt.Sprint(i)
		}
		if n, err := l.RPush(ctx, l.key, items...); err != nil || n != 2500 {
			t.Fatalf("push: %d, %v", n, err)
		}
		got, err := l.LPop(ctx, l.key, 2400)
		if err != nil || !slices.Equal(got, items[:2400]) {
			t.Fatalf("LPop 2400: %d items, %v", len(got), err)
		}
		got, err = l.RPop(ctx, l.key, 5000)
		if err != nil || len(got) != 100 || got[0] != "2499" || got[99] != "2400" {
			t.Fatalf("RPop 5000: %d items, %v", len(got), err)
		}
		// one-item shards: a call opens or empties at most 100 shards,
		// the package calls again for the rest
		tiny := mustList(t, New(b.Client, Options{Prefix: b.Prefix, ShardSize: 2, BatchSize: 1000}), "tiny")
		if n, err := tiny.LPush(ctx, tiny.key, items[:900]...); err != nil || n != 900 {
			t.Fatalf("push of 900 one-item shards: %d, %v", n, err)
		}
		got, err = tiny.RPop(ctx, tiny.key, 700)
		if err != nil || !slices.Equal(got, items[:700]) {
			t.Fatalf("RPop 700 of one-item shards: %d items, %v", len(got), err)
		}
		checkShards(t, tiny, 2)
	})
}

// TestLegacyListWithManyShards is a list written before the mid count with
// more middle shards than a script counts: the client counts them in
// bounded calls, stores the count, and the operation goes on.
func TestLegacyListWithManyShards(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		l := mustList(t, New(b.Client, Options{Prefix: b.Prefix, ShardSize: 2, BatchSize: 1000}), "legacybig")
		items := make([]string, 300)
		for i := range items {
			items[i] = fmt.Sprint(i)
		}
		l.RPush(ctx, l.key, items...)
		b.Client.Del(ctx, l.midKey(), l.keys[3], l.keys[4])
		if n, err := l.LLen(ctx, l.key); err != nil || n != 300 {
			t.Fatalf("Len: %d, %v", n, err)
		}
		if v := b.Client.Get(ctx, l.midKey()).Val(); v != "298" {
			t.Fatalf("mid stored %q", v)
		}
		b.Client.Del(ctx, l.midKey())
		if got, err := l.RPop(ctx, l.key, 2); err != nil || !slices.Equal(got, []string{"299", "298"}) {
			t.Fatalf("RPop: %q, %v", got, err)
		}
		checkShards(t, l, 2)
	})
}

// TestBlockingPopCancels ends the context of a blocking pop that waits
// forever: it returns the context's error and has taken nothing. The time
// it takes is logged (measured, not asserted: see docs/shardlist.md).
func TestBlockingPopCancels(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		l := newList(t, b, "cancel", 3)
		for _, deadline := range []bool{false, true} {
			var ctx context.Context
			var cancel context.CancelFunc
			if deadline {
				ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
			} else {
				ctx, cancel = context.WithCancel(context.Background())
			}
			done := make(chan error, 1)
			var ended time.Time
			go func() {
				_, err := l.BLPop(ctx, l.key, 0)
				ended = time.Now()
				done <- err
			}()
			waitBlocked(t, b, 1)
			var at time.Time
			if deadline {
				at, _ = ctx.Deadline()
			} else {
				at = time.Now()
				cancel()
			}
			err := <-done
			cancel()
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("BLPop: %v", err)
			}
			t.Logf("%s: deadline %v: BLPop returned %s after the context ended", b.Name, deadline, ended.Sub(at))
		}
		// nothing was taken, and the list works
		l.RPush(context.Background(), l.key, "a")
		if got, err := l.BLPop(context.Background(), l.key, time.Second); err != nil || got != "a" {
			t.Fatalf("BLPop after: %q, %v", got, err)
		}
	})
}

// newClient is a client of its own on b's server, for hooks.
func newClient(t *testing.T, b redistest.Backend) *redis.Client {
	opt, err := redis.ParseURL(b.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRandomCorruption writes random garbage into a random key of a list
// (an endpoint, the count, size or version key, a shard: wrong type, text,
// huge or negative numbers) and runs a random operation: it must either
// succeed or fail with ErrCorrupt having changed nothing, and the server
// must answer at once afterwards. CHATQ_CORRUPT_SEED=n runs 600 rounds
// with another seed.
func TestRandomCorruption(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		seed, _ := strconv.ParseUint(os.Getenv("CHATQ_CORRUPT_SEED"), 10, 64)
		rng := rand.New(rand.NewPCG(7, seed))
		rounds := 60
		if seed != 0 {
			rounds = 600
		}
		values := []string{"abc", "", "-1", "0", "1", "2", "3", "7", "99", "10000000", "-10000000", "1e9", "nan", " 5", "5.5", "99999999999999999999"}
		for i := range rounds {
			l := newList(t, b, fmt.Sprint("rnd", i), 2+rng.IntN(3))
			items := make([]string, 1+rng.IntN(12))
			for j := range items {
				items[j] = fmt.Sprint(j)
			}
			l.RPush(ctx, l.key, items...)
			l.LPush(ctx, l.key, items[:rng.IntN(len(items))]...)
			keys := append([]string{}, l.keys...)
			for s := int64(-4); s <= 6; s++ {
				keys = append(keys, l.shardKey(s))
			}
			k := keys[rng.IntN(len(keys))]
			switch rng.IntN(4) {
			case 0:
				b.Client.Del(ctx, k)
				b.Client.HSet(ctx, k, "f", "v")
			case 1:
				b.Client.Del(ctx, k)
				b.Client.RPush(ctx, k, "x")
			case 2:
				b.Client.Del(ctx, k)
			default:
				b.Client.Del(ctx, k)
				b.Client.Set(ctx, k, values[rng.IntN(len(values))], 0)
			}
			before := snapshot(t, b, l)
			opCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			var err error
			var op string
			switch rng.IntN(8) {
			case 0:
				op = "Len"
				_, err = l.LLen(opCtx, l.key)
			case 1:
				op = "LPop"
				_, err = l.LPop(opCtx, l.key, 1+rng.IntN(5))
			case 2:
				op = "RPop"
				_, err = l.RPop(opCtx, l.key, 1+rng.IntN(5))
			case 3:
				op = "LPush"
				_, err = l.LPush(opCtx, l.key, "n1", "n2", "n3")
			case 4:
				op = "RPush"
				_, err = l.RPush(opCtx, l.key, "n1")
			case 5:
				op = "Range"
				_, err = l.LRange(opCtx, l.key, int64(rng.IntN(10)-5), int64(rng.IntN(10)-5))
			case 6:
				op = "Layout"
				_, err = l.Layout(opCtx, l.key)
			default:
				op = "BPop"
				_, err = l.bpop(opCtx, dir(rng.IntN(2)), 5*time.Millisecond)
			}
			cancel()
			if err != nil && !errors.Is(err, ErrEmpty) {
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrShardSizeMismatch) {
					t.Fatalf("%d: %s after corrupting %s: %v", i, op, k, err)
				}
				if after := snapshot(t, b, l); !maps.Equal(before, after) {
					t.Fatalf("%d: %s failed (%v) after corrupting %s, and changed the keys:\n%v\nto\n%v", i, op, err, k, before, after)
				}
			}
			if err := b.Client.Ping(ctx).Err(); err != nil {
				t.Fatalf("%d: server after %s: %v", i, op, err)
			}
		}
	})
}

// TestBlockingPopOnOneConnection: a client with a pool of one connection
// still waits and pops (the wait has a connection of its own), rather than
// deadlocking the pop that follows.
func TestBlockingPopOnOneConnection(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		opt, err := redis.ParseURL(b.URL)
		if err != nil {
			t.Fatal(err)
		}
		opt.PoolSize = 1
		c := redis.NewClient(opt)
		defer c.Close()
		l := mustList(t, New(c, Options{Prefix: b.Prefix}), "onepool")
		if _, err := l.BLPop(ctx, l.key, 50*time.Millisecond); !errors.Is(err, ErrEmpty) {
			t.Fatalf("BLPop on empty: %v", err)
		}
		other := newList(t, b, "onepool", 0)
		got := make(chan string, 1)
		go func() {
			item, err := l.BLPop(ctx, l.key, 10*time.Second)
			if err != nil {
				item = err.Error()
			}
			got <- item
		}()
		other.RPush(ctx, other.key, "a")
		if item := <-got; item != "a" {
			t.Fatalf("BLPop: %q", item)
		}
	})
}
