package shardlist_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/fakeclock"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// A pop repeated with the same token returns the same items and pops no
// others, from either end, over tiny shards and over 1000 items (two
// script calls, two records); a pop of an empty list records nothing; the
// record is a field of its minute's hash in the list's slot, which lives
// 10 minutes after the write.
func TestPopTokenRepeat(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix, ShardSize: 3})
		clock := newFakeClock(c)
		empty := shardlist.PopOptions{Token: rand.Text()}
		if got, err := c.Pop(ctx, "tok", empty); err != shardlist.ErrEmpty {
			t.Fatalf("pop of an empty list: %v %v", got, err)
		}
		items := []string{"a", "b:1:", "c", "d", "e"}
		for i := range 1200 {
			items = append(items, fmt.Sprint(i))
		}
		if _, err := c.RPush(ctx, "tok", items...); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			opt  shardlist.PopOptions
			want []string
		}{
			{empty, []string{"a"}}, // the empty pop recorded nothing
			{shardlist.PopOptions{Count: 2, Token: rand.Text()}, []string{"b:1:", "c"}},
			{shardlist.PopOptions{Tail: true, Token: rand.Text()}, []string{"1199"}},
			{shardlist.PopOptions{Count: 1100, Token: rand.Text()}, items[3:1103]},
		} {
			for try := range 3 {
				// A first try looks nothing up; the empty pop's token was
				// sent before.
				opt := tc.opt
				opt.FirstTry = try == 0 && opt.Token != empty.Token
				got, err := c.Pop(ctx, "tok", opt)
				if err != nil || !slices.Equal(got, tc.want) {
					t.Fatalf("%+v try %d: %d items %.40v (%v), want %d items %.40v", tc.opt, try, len(got), got, err, len(tc.want), tc.want)
				}
			}
		}
		if n, err := c.LLen(ctx, "tok"); err != nil || n != int64(len(items)-1104) {
			t.Errorf("after the repeats the list holds %d (%v), want %d", n, err, len(items)-1104)
		}
		records := b.Prefix + "{tok}:T:" + clock.Minute()
		if ok, err := b.Client.HExists(ctx, records, empty.Token).Result(); err != nil || !ok {
			t.Errorf("no record %s in %s (%v)", empty.Token, records, err)
		}
		ttl, err := b.Client.PTTL(ctx, records).Result()
		if err != nil || ttl <= tokenLifetime-time.Minute || ttl > tokenLifetime {
			t.Errorf("the record's hash has PTTL %v (%v); want at most %v, and about that", ttl, err, tokenLifetime)
		}
		if _, err := c.Pop(ctx, "tok", shardlist.PopOptions{Token: "short"}); err == nil {
			t.Error("a 5-character token was accepted")
		}
	})
}

// tokenLifetime is how long a minute's hash of records lives from its
// first write, so a record at least 10 minutes (docs/reliability.md).
const tokenLifetime = 11 * time.Minute

// A push repeated with the same token returns the first answer and stores
// nothing more, at either end, over shards of 3 items and 1,200 items
// (several script calls, a record each); another token pushes again.
func TestPushTokenRepeat(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix, ShardSize: 3, BatchSize: 500})
		var many []string
		for i := range 1200 {
			many = append(many, fmt.Sprint(i))
		}
		var want []string
		for _, tc := range []struct {
			opt   shardlist.PushOptions
			items []string
		}{
			{shardlist.PushOptions{Token: rand.Text()}, []string{"b", "c"}},
			{shardlist.PushOptions{Head: true, Token: rand.Text()}, []string{"a"}},
			{shardlist.PushOptions{Token: rand.Text()}, many},
		} {
			if tc.opt.Head {
				want = append(slices.Clone(tc.items), want...)
			} else {
				want = append(want, tc.items...)
			}
			firstTry := tc.opt
			firstTry.FirstTry = true
			first, err := c.Push(ctx, "ptok", tc.items, firstTry)
			if err != nil || first != int64(len(want)) {
				t.Fatalf("%+v: length %d (%v), want %d", tc.opt, first, err, len(want))
			}
			for try := range 2 {
				if again, err := c.Push(ctx, "ptok", tc.items, tc.opt); err != nil || again != first {
					t.Fatalf("%+v try %d: length %d (%v), want the first answer %d", tc.opt, try, again, err, first)
				}
			}
		}
		got, err := c.LRange(ctx, "ptok", 0, -1)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("after the repeats the list holds %d items %.40v (%v), want %d items %.40v", len(got), got, err, len(want), want)
		}
		if n, err := c.Push(ctx, "ptok", []string{"z"}, shardlist.PushOptions{Token: rand.Text()}); err != nil || n != int64(len(want)+1) {
			t.Errorf("another token: length %d (%v), want %d", n, err, len(want)+1)
		}
		if _, err := c.Push(ctx, "ptok", []string{"x"}, shardlist.PushOptions{Token: "short"}); err == nil {
			t.Error("a 5-character token was accepted")
		}
	})
}

// A blocking pop with a token records the item it took: a repeat (with
// Block or without) returns it and takes no other, and an item pushed
// while it waits is taken once. Without a token the repeat takes the next
// item.
func TestBlockingPopTokenRepeat(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix, ShardSize: 3})
		if _, err := c.RPush(ctx, "btok", "a", "b", "c", "d"); err != nil {
			t.Fatal(err)
		}
		opt := shardlist.PopOptions{Block: true, Wait: time.Second, Token: rand.Text()}
		for try, o := range []shardlist.PopOptions{opt, opt, {Token: opt.Token}} {
			if got, err := c.Pop(ctx, "btok", o); err != nil || !slices.Equal(got, []string{"a"}) {
				t.Fatalf("try %d (%+v): %v %v, want [a]", try, o, got, err)
			}
		}
		tail := shardlist.PopOptions{Block: true, Tail: true, Wait: time.Second, Token: rand.Text()}
		for try := range 2 {
			if got, err := c.Pop(ctx, "btok", tail); err != nil || !slices.Equal(got, []string{"d"}) {
				t.Fatalf("tail try %d: %v %v, want [d]", try, got, err)
			}
		}
		// The control: without a token, a repeat takes another item.
		if got, err := c.Pop(ctx, "btok", shardlist.PopOptions{Block: true, Wait: time.Second}); err != nil || !slices.Equal(got, []string{"b"}) {
			t.Fatalf("without a token: %v %v, want [b]", got, err)
		}
		if got, err := c.Pop(ctx, "btok", shardlist.PopOptions{Block: true, Wait: time.Second}); err != nil || !slices.Equal(got, []string{"c"}) {
			t.Fatalf("without a token, again: %v %v, want [c] (another item)", got, err)
		}
		// An item pushed during the wait: taken by the waiting pop, once.
		wait := shardlist.PopOptions{Block: true, Wait: 30 * time.Second, Token: rand.Text()}
		done := make(chan []string, 1)
		go func() {
			got, err := c.Pop(ctx, "btok", wait)
			if err != nil {
				t.Error(err)
			}
			done <- got
		}()
		if _, err := c.RPush(ctx, "btok", "late", "later"); err != nil {
			t.Fatal(err)
		}
		if got := <-done; !slices.Equal(got, []string{"late"}) {
			t.Fatalf("the waiting pop took %v, want [late]", got)
		}
		if got, err := c.Pop(ctx, "btok", wait); err != nil || !slices.Equal(got, []string{"late"}) {
			t.Fatalf("its repeat: %v %v, want [late]", got, err)
		}
		if n, err := c.LLen(ctx, "btok"); err != nil || n != 1 {
			t.Errorf("the list holds %d (%v), want 1 (later)", n, err)
		}
		if _, err := c.Pop(ctx, "btok", shardlist.PopOptions{Block: true, Count: 2}); err == nil {
			t.Error("a blocking pop of 2 was accepted")
		}
	})
}

// A record written in minute m of the client's clock is found by a repeat
// made in minute m+10 (its last second), from the 11 hashes that repeat
// reads, and is not looked for in minute m+11, when a repeat applies
// again: pushes and pops.
func TestTokenRecordMinutes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix})
		clock := newFakeClock(c)
		push := shardlist.PushOptions{Token: rand.Text()}
		if n, err := c.Push(ctx, "min", []string{"a", "b", "c"}, push); err != nil || n != 3 {
			t.Fatalf("push: %d %v", n, err)
		}
		pop := shardlist.PopOptions{Token: rand.Text()}
		if got, err := c.Pop(ctx, "min", pop); err != nil || !slices.Equal(got, []string{"a"}) {
			t.Fatalf("pop: %v %v", got, err)
		}
		clock.Set(fakeclock.Minute0.Add(10*time.Minute + 59*time.Second))
		if n, err := c.Push(ctx, "min", []string{"a", "b", "c"}, push); err != nil || n != 3 {
			t.Errorf("push repeated in minute m+10: %d %v; want the first answer, 3", n, err)
		}
		if got, err := c.Pop(ctx, "min", pop); err != nil || !slices.Equal(got, []string{"a"}) {
			t.Errorf("pop repeated in minute m+10: %v %v; want [a]", got, err)
		}
		clock.Set(fakeclock.Minute0.Add(11 * time.Minute))
		if n, err := c.Push(ctx, "min", []string{"a", "b", "c"}, push); err != nil || n != 5 {
			t.Errorf("push repeated in minute m+11: %d %v; want a new push, 5", n, err)
		}
		if got, err := c.Pop(ctx, "min", pop); err != nil || !slices.Equal(got, []string{"b"}) {
			t.Errorf("pop repeated in minute m+11: %v %v; want the next item, [b]", got, err)
		}
	})
}

// A busy stream of calls with tokens writes one record key per minute,
// not one per call: 1,000 pushes over 11 minutes of the client's clock
// leave at most 11 keys under {KEY}:T:*, holding the 1,000 records; a
// key of another type under a record key's name is refused (WRONGTYPE)
// with nothing pushed or popped.
func TestTokenRecordsFewKeys(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix})
		clock := newFakeClock(c)
		const pushes = 1000
		for i := range pushes {
			clock.Set(fakeclock.Minute0.Add(time.Duration(i) * 11 * time.Minute / pushes))
			if _, err := c.Push(ctx, "busy", []string{"x"}, shardlist.PushOptions{Token: rand.Text()}); err != nil {
				t.Fatal(err)
			}
		}
		redistest.RequireRecords(t, b, "{busy}:T:*", 11, pushes)

		other := b.Prefix + "{busy}:T:" + fmt.Sprint(fakeclock.Minute0.UnixMilli()/60000+12)
		if err := b.Client.Set(ctx, other, "x", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		clock.Set(fakeclock.Minute0.Add(13 * time.Minute))
		if _, err := c.Push(ctx, "busy", []string{"y"}, shardlist.PushOptions{Token: rand.Text()}); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("push with a string among its record keys: %v, want WRONGTYPE", err)
		}
		if got, err := c.Pop(ctx, "busy", shardlist.PopOptions{Token: rand.Text()}); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("pop with a string among its record keys: %v %v, want WRONGTYPE", got, err)
		}
		if n, err := c.LLen(ctx, "busy"); err != nil || n != pushes {
			t.Errorf("the list holds %d (%v), want %d: nothing pushed or popped", n, err, pushes)
		}
	})
}

// Each pop call of a blocking pop reads and writes the record keys of its
// own minute: a pop that began in minute m and took its item in minute
// m+11, after its wait, records it in m+11's hash, where a repeat in
// minute m+21 finds it.
func TestBlockingPopRecordsInItsMinute(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		rdb := redis.NewClient(b.Client.Options())
		t.Cleanup(func() { rdb.Close() })
		firstCall := make(chan struct{})
		rdb.AddHook(scriptRan{done: firstCall})
		c := shardlist.New(rdb, shardlist.Options{Prefix: b.Prefix})
		clock := newFakeClock(c)
		opt := shardlist.PopOptions{Block: true, Wait: 30 * time.Second, Token: rand.Text()}
		done := make(chan []string, 1)
		go func() {
			got, err := c.Pop(ctx, "bmin", opt)
			if err != nil {
				t.Error(err)
			}
			done <- got
		}()
		<-firstCall // the first pop found nothing, in minute m: it waits
		clock.Set(fakeclock.Minute0.Add(11 * time.Minute))
		if _, err := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix}).RPush(ctx, "bmin", "late"); err != nil {
			t.Fatal(err)
		}
		if got := <-done; !slices.Equal(got, []string{"late"}) {
			t.Fatalf("the waiting pop took %v, want [late]", got)
		}
		at := func(d time.Duration) string {
			return b.Prefix + "{bmin}:T:" + fmt.Sprint(fakeclock.Minute0.Add(d).UnixMilli()/60000)
		}
		if ok, err := b.Client.HExists(ctx, at(11*time.Minute), opt.Token).Result(); err != nil || !ok {
			t.Errorf("no record in minute m+11's hash %s (%v)", at(11*time.Minute), err)
		}
		if n, err := b.Client.Exists(ctx, at(0)).Result(); err != nil || n != 0 {
			t.Errorf("minute m's hash %s exists (%v): the pop recorded in the minute it began", at(0), err)
		}
		clock.Set(fakeclock.Minute0.Add(21 * time.Minute))
		if got, err := c.Pop(ctx, "bmin", opt); err != nil || !slices.Equal(got, []string{"late"}) {
			t.Errorf("repeat in minute m+21: %v %v, want [late]", got, err)
		}
	})
}

// scriptRan closes done after the first script call that ran (EVALSHA or
// EVAL without an error).
type scriptRan struct{ done chan struct{} }

func (s scriptRan) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s scriptRan) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (s scriptRan) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	var once sync.Once
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil && (cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			once.Do(func() { close(s.done) })
		}
		return err
	}
}

// newFakeClock gives c a clock at fakeclock.Minute0.
func newFakeClock(c *shardlist.Client) *fakeclock.Clock {
	f := fakeclock.New()
	shardlist.SetClock(c, f.Now)
	return f
}
