package shardlist_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

func Example() {
	// An in-memory server for the example; point Addr at your Redis instead.
	s, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	ctx := context.Background()

	lists := shardlist.New(c, shardlist.Options{ShardSize: 3})
	n, err := lists.RPush(ctx, "jobs", "a", "b", "c", "d", "e")
	if err != nil {
		panic(err)
	}
	fmt.Println("length", n)
	lay, _ := lists.Layout(ctx, "jobs")
	for _, sh := range lay.Shards {
		fmt.Println(sh.Key, sh.Length)
	}
	items, _ := lists.LPop(ctx, "jobs", 3)
	fmt.Println(items)
	last, _ := lists.RPop(ctx, "jobs", 1)
	fmt.Println(last)
	// Output:
	// length 5
	// {jobs}:0 2
	// {jobs}:1 2
	// {jobs}:2 1
	// [a b c]
	// [e]
}

// A pop with a token may be sent again after a lost reply: the repeat
// returns the items the first pop took and pops no others.
func ExampleClient_Pop_token() {
	s, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	ctx := context.Background()

	lists := shardlist.New(c, shardlist.Options{})
	if _, err := lists.RPush(ctx, "jobs", "a", "b", "c"); err != nil {
		panic(err)
	}
	opt := shardlist.PopOptions{Count: 2, Token: rand.Text()} // one token per pop, kept across tries
	first, err := lists.Pop(ctx, "jobs", opt)
	if err != nil {
		panic(err)
	}
	// Say the reply was lost: send the same call again.
	again, err := lists.Pop(ctx, "jobs", opt)
	if err != nil {
		panic(err)
	}
	n, _ := lists.LLen(ctx, "jobs")
	fmt.Println(first, again, "left:", n)
	// Output: [a b] [a b] left: 1
}

// A push with a token may be sent again after a lost reply: the repeat
// returns the first answer and stores nothing more.
func ExampleClient_Push_token() {
	s, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	ctx := context.Background()

	lists := shardlist.New(c, shardlist.Options{})
	opt := shardlist.PushOptions{Token: rand.Text(), FirstTry: true} // one token per push, kept across tries
	first, err := lists.Push(ctx, "jobs", []string{"a", "b"}, opt)
	if err != nil {
		panic(err)
	}
	// Say the reply was lost: send the same call again, as a repeat, which
	// looks the first try's record up.
	opt.FirstTry = false
	again, err := lists.Push(ctx, "jobs", []string{"a", "b"}, opt)
	if err != nil {
		panic(err)
	}
	items, _ := lists.LRange(ctx, "jobs", 0, -1)
	fmt.Println(first, again, items)
	// Output: 2 2 [a b]
}

// A blocking pop with a token records the item it takes: sent again after
// a lost reply, it returns that item and takes no other.
func ExampleClient_Pop_blocking() {
	s, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	ctx := context.Background()

	lists := shardlist.New(c, shardlist.Options{})
	if _, err := lists.RPush(ctx, "jobs", "a", "b"); err != nil {
		panic(err)
	}
	opt := shardlist.PopOptions{Block: true, Wait: time.Second, Token: rand.Text()}
	first, err := lists.Pop(ctx, "jobs", opt)
	if err != nil {
		panic(err)
	}
	// Say the reply was lost: send the same call again.
	again, err := lists.Pop(ctx, "jobs", opt)
	if err != nil {
		panic(err)
	}
	n, _ := lists.LLen(ctx, "jobs")
	fmt.Println(first, again, "left:", n)
	// Output: [a] [a] left: 1
}
