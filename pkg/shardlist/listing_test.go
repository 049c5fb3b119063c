package shardlist_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/shardlist"
)

// Lists names every list under the prefix once per page, emptied ones
// too, and nothing else: not another prefix's, not keys that look alike.
func TestLists(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix, ShardSize: 2})
		for _, k := range []string{"jobs", "mail", "a:b"} {
			if _, err := c.RPush(ctx, k, "1", "2", "3"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.LPop(ctx, "mail", 3); err != nil { // emptied
			t.Fatal(err)
		}
		other := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix + "other:"})
		if _, err := other.RPush(ctx, "zzz", "x"); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"{x}:other", "{a b}:first", "plain", "chat:{1}"} {
			if err := b.Client.Set(ctx, b.Prefix+k, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		list := func(match string) []string {
			var out []string
			for cursor, calls := uint64(0), 0; ; calls++ {
				if calls > 1000 {
					t.Fatal("the listing does not end")
				}
				page, next, err := c.Lists(ctx, cursor, match, 2)
				if err != nil {
					t.Fatal(err)
				}
				if len(slices.Compact(slices.Sorted(slices.Values(page)))) != len(page) {
					t.Errorf("a page names a list twice: %q", page)
				}
				for _, k := range page {
					if !slices.Contains(out, k) {
						out = append(out, k)
					}
				}
				if cursor = next; cursor == 0 {
					slices.Sort(out)
					return out
				}
			}
		}
		if got, want := list(""), []string{"a:b", "jobs", "mail"}; !slices.Equal(got, want) {
			t.Errorf("lists %q, want %q", got, want)
		}
		if got, want := list("*o*"), []string{"jobs"}; !slices.Equal(got, want) {
			t.Errorf("lists matching *o*: %q, want %q", got, want)
		}
		if _, _, err := c.Lists(ctx, 0, "{", 10); !errors.Is(err, shardlist.ErrInvalid) {
			t.Errorf("a pattern with a brace: %v, want ErrInvalid", err)
		}
	})
}

// Info reads the length, the ends and the recorded size in one call.
func TestInfo(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix, ShardSize: 3})
		if _, err := c.RPush(ctx, "jobs", "1", "2", "3", "4", "5"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.LPush(ctx, "jobs", "0", "-1", "-2"); err != nil {
			t.Fatal(err)
		}
		got, err := c.Info(ctx, "jobs")
		lay, err2 := c.Layout(ctx, "jobs")
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		want := shardlist.Info{Key: "jobs", Length: 8, First: lay.First, Last: lay.Last,
			Shards: int64(len(lay.Shards)), ShardSize: 3}
		if *got != want || lay.Length != 8 {
			t.Errorf("info %+v, want %+v (layout %+v)", *got, want, lay)
		}
		none, err := c.Info(ctx, "none")
		if err != nil || *none != (shardlist.Info{Key: "none", Shards: 1}) {
			t.Errorf("info of no list: %+v, %v", none, err)
		}
		if _, err := c.Info(ctx, "a b"); !errors.Is(err, shardlist.ErrInvalid) {
			t.Errorf("a bad key: %v, want ErrInvalid", err)
		}
	})
}
