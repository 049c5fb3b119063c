package shardlist_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// Delete refuses a list that holds items unless forced, changing nothing;
// forced, it removes every key of a list of many shards in bounded calls;
// an empty or missing list goes without force.
func TestDelete(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix, ShardSize: 4})
		items := make([]string, 1000) // 334 shards of 3: four delete calls
		for i := range items {
			items[i] = fmt.Sprint(i)
		}
		if _, err := c.RPush(ctx, "big", items...); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Delete(ctx, "big", false); !errors.Is(err, shardlist.ErrNotEmpty) || n != 1000 {
			t.Fatalf("unforced: %d, %v", n, err)
		}
		if n, _ := c.LLen(ctx, "big"); n != 1000 {
			t.Fatalf("after a refused delete: %d items", n)
		}
		if n, err := c.Delete(ctx, "big", true); err != nil || n != 1000 {
			t.Fatalf("forced: %d, %v", n, err)
		}
		keys, err := b.Client.Keys(ctx, b.Prefix+"{big}*").Result() // a test's own small keyspace
		if err != nil || len(keys) != 0 {
			t.Fatalf("left %v, %v", keys, err)
		}
		// Emptied by pops: no force needed.
		if _, err := c.RPush(ctx, "e", "a", "b"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.LPop(ctx, "e", 2); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Delete(ctx, "e", false); err != nil || n != 0 {
			t.Fatalf("empty: %d, %v", n, err)
		}
		if n, err := c.Delete(ctx, "never", false); err != nil || n != 0 {
			t.Fatalf("missing: %d, %v", n, err)
		}
		// A forced delete stopped after its first call (an interrupt)
		// leaves a list that still reads right: the items of the shards
		// not yet deleted, exactly.
		if _, err := c.RPush(ctx, "half", items...); err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(b.Client.Options())
		defer rdb.Close()
		stop, cancel := context.WithCancel(ctx)
		rdb.AddHook(cancelAfterScript{cancel})
		ch := shardlist.New(rdb, shardlist.Options{Prefix: b.Prefix, ShardSize: 4})
		if _, err := ch.Delete(stop, "half", true); !errors.Is(err, context.Canceled) {
			t.Fatalf("stopped delete: %v", err)
		}
		if n, err := c.LLen(ctx, "half"); err != nil || n != 700 { // 100 shards of 3 items gone
			t.Fatalf("after one call: %d, %v", n, err)
		}
		if got, err := c.LRange(ctx, "half", 0, 0); err != nil || len(got) != 1 || got[0] != "300" {
			t.Fatalf("first item %v, %v", got, err)
		}
		if n, err := c.Delete(ctx, "half", true); err != nil || n != 700 {
			t.Fatalf("the rest: %d, %v", n, err)
		}
	})
}

// cancelAfterScript cancels a context once a script call has returned.
type cancelAfterScript struct{ cancel context.CancelFunc }

func (h cancelAfterScript) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h cancelAfterScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			h.cancel()
		}
		return err
	}
}
func (h cancelAfterScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
