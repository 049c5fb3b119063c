package shardlist_test

import (
	"crypto/rand"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/shardlist"
)

// A pop repeated with the same token returns the same items and pops no
// others, from either end, over tiny shards and over 1000 items (two
// script calls, two records); a pop of an empty list records nothing; the
// record lives 10 minutes in the list's slot.
func TestPopTokenRepeat(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix, ShardSize: 3})
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
				got, err := c.Pop(ctx, "tok", tc.opt)
				if err != nil || !slices.Equal(got, tc.want) {
					t.Fatalf("%+v try %d: %d items %.40v (%v), want %d items %.40v", tc.opt, try, len(got), got, err, len(tc.want), tc.want)
				}
			}
		}
		if n, err := c.LLen(ctx, "tok"); err != nil || n != int64(len(items)-1104) {
			t.Errorf("after the repeats the list holds %d (%v), want %d", n, err, len(items)-1104)
		}
		ttl, err := b.Client.PTTL(ctx, b.Prefix+"{tok}:T:"+empty.Token).Result()
		if err != nil || ttl <= tokenLifetime-time.Minute || ttl > tokenLifetime {
			t.Errorf("the record's PTTL is %v (%v); want about %v", ttl, err, tokenLifetime)
		}
		if _, err := c.Pop(ctx, "tok", shardlist.PopOptions{Token: "short"}); err == nil {
			t.Error("a 5-character token was accepted")
		}
	})
}

// tokenLifetime is how long a record lasts (docs/reliability.md).
const tokenLifetime = 10 * time.Minute

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
			first, err := c.Push(ctx, "ptok", tc.items, tc.opt)
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
