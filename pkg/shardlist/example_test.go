package shardlist_test

import (
	"context"
	"fmt"

	"github.com/chatq-dev/chatq/internal/embedded"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

func Example() {
	s, err := embedded.Start("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer s.Close()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	ctx := context.Background()

	l, err := shardlist.New(c, "jobs", shardlist.Options{ShardSize: 3})
	if err != nil {
		panic(err)
	}
	n, _ := l.RPush(ctx, "a", "b", "c", "d", "e")
	fmt.Println("length", n)
	lay, _ := l.Layout(ctx)
	for _, sh := range lay.Shards {
		fmt.Println(sh.Key, sh.Length)
	}
	items, _ := l.LPop(ctx, 3)
	fmt.Println(items)
	last, _ := l.RPop(ctx, 1)
	fmt.Println(last)
	// Output:
	// length 5
	// {jobs}:0 2
	// {jobs}:1 2
	// {jobs}:2 1
	// [a b c]
	// [e]
}
