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
