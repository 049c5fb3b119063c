package stream_test

import (
	"context"
	"fmt"

	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/stream"
	"github.com/redis/go-redis/v9"
)

// A group's counts, then its entries delivered five times or more moved
// to its dead-letter stream, and back once the consumer is fixed.
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	reg := queues.NewRegistry(stream.New(queues.Env{RDB: rdb}))

	q, err := reg.Open("stream:orders/billing") // group billing of stream orders
	if err != nil {
		panic(err)
	}
	c, err := q.Counts(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("ready", *c.Ready, "inflight", *c.Inflight, "dead", *c.Dead)

	moved, err := q.(queues.DeadLetterer).DeadLetter(ctx, queues.DeadLetterOptions{MinAttempts: 5})
	if err != nil {
		panic(err)
	}
	fmt.Println("dead-lettered", len(moved.Done))

	back, err := q.(queues.Redriver).Redrive(ctx, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("redriven", len(back.Done))
}
