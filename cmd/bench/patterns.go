package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// benchChat: one chat per client, with a sender and a reader; "send" sends
// --size byte messages, "pending" has each reader fetch and mark what is new.
func benchChat(ctx context.Context, c redis.UniversalClient, prefix string, o *benchOptions) ([]benchStep, error) {
	setup := chat.New(c, chat.Options{Prefix: prefix})
	for i := range o.Clients {
		id := fmt.Sprint(i + 1)
		if _, err := setup.Create(ctx, chat.CreateRequest{From: "sender", To: []string{"reader" + id}, ID: id}); err != nil {
			return nil, err
		}
	}
	// Each reader is also in --preload other chats, with one unseen
	// message each, so that pending reads across that many chats.
	err := preloadParallel(ctx, c, o.Preload, func(ctx context.Context, c redis.UniversalClient, i int) error {
		members := make([]string, o.Clients)
		for r := range members {
			members[r] = fmt.Sprint("reader", r+1)
		}
		m := "preloaded"
		_, err := chat.New(c, chat.Options{Prefix: prefix}).Create(ctx,
			chat.CreateRequest{From: "sender", To: members, ID: fmt.Sprint("p", i), Message: &m})
		return err
	})
	if err != nil {
		return nil, err
	}
	msg := benchPayload(o.Size)
	chatOf := func(g int) string { return fmt.Sprint(g/o.Pipeline + 1) }
	return []benchStep{
		{name: "send", worker: func(c redis.UniversalClient, g int) func(context.Context) error {
			s, id := chat.New(c, chat.Options{Prefix: prefix}), chatOf(g)
			return func(ctx context.Context) error {
				_, err := s.SendWith(ctx, id, "sender", msg, chat.SendOptions{Token: rand.Text(), FirstTry: true})
				return err
			}
		}},
		{name: "pending", worker: func(c redis.UniversalClient, g int) func(context.Context) error {
			s, user := chat.New(c, chat.Options{Prefix: prefix}), "reader"+chatOf(g)
			return func(ctx context.Context) error {
				_, err := s.Pending(ctx, user, chat.PendingOptions{})
				return err
			}
		}},
	}, nil
}

// benchList: "push" appends one --size byte item, "pop" takes one from the
// other end, on one sharded list shared by every client.
func benchList(ctx context.Context, c redis.UniversalClient, prefix string, o *benchOptions) ([]benchStep, error) {
	item := benchPayload(o.Size)
	lists := func(c redis.UniversalClient) *shardlist.Client {
		return shardlist.New(c, shardlist.Options{Prefix: prefix})
	}
	l := lists(c)
	// Preloaded items are pushed at the right end, before the timed
	// pushes; pops take from the left, so each push and pop runs with about
	// --preload items stored.
	const chunk = 5000
	err := preloadParallel(ctx, c, (o.Preload+chunk-1)/chunk, func(ctx context.Context, _ redis.UniversalClient, i int) error {
		n := min(chunk, o.Preload-i*chunk)
		items := make([]string, n)
		for j := range items {
			items[j] = item
		}
		_, err := l.RPush(ctx, "bench", items...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return []benchStep{
		{name: "push", worker: func(c redis.UniversalClient, g int) func(context.Context) error {
			l := lists(c)
			return func(ctx context.Context) error {
				_, err := l.Push(ctx, "bench", []string{item}, shardlist.PushOptions{Token: rand.Text(), FirstTry: true})
				return err
			}
		}},
		{name: "pop", worker: func(c redis.UniversalClient, g int) func(context.Context) error {
			l := lists(c)
			return func(ctx context.Context) error {
				_, err := l.Pop(ctx, "bench", shardlist.PopOptions{Token: rand.Text(), FirstTry: true})
				return err
			}
		}},
	}, nil
}

// benchQueue: "push" pushes --size byte messages due now, "poll" receives
// one at a time with a visibility timeout, "ack" acks what poll received.
func benchQueue(ctx context.Context, c redis.UniversalClient, prefix string, o *benchOptions) ([]benchStep, error) {
	queue := func(c redis.UniversalClient) *delayq.Client {
		return delayq.New(c, delayq.Options{Prefix: prefix})
	}
	if err := queue(c).Create(ctx, "bench", delayq.Attributes{}); err != nil {
		return nil, err
	}
	msg := benchPayload(o.Size)
	push := func(ctx context.Context, q *delayq.Client) error {
		_, err := q.Push(ctx, "bench", msg, delayq.PushOptions{Token: rand.Text(), FirstTry: true})
		return err
	}
	// Preloaded messages are due in an hour, so they are stored but never
	// received: poll runs with --preload messages in the queue.
	err := preloadParallel(ctx, c, o.Preload, func(ctx context.Context, c redis.UniversalClient, i int) error {
		_, err := queue(c).Push(ctx, "bench", msg, delayq.PushOptions{Delay: time.Hour})
		return err
	})
	if err != nil {
		return nil, err
	}
	received := make(chan string, o.Requests)
	return []benchStep{
		{name: "push", worker: func(c redis.UniversalClient, g int) func(context.Context) error {
			q := queue(c)
			return func(ctx context.Context) error { return push(ctx, q) }
		}},
		{name: "poll", worker: func(c redis.UniversalClient, g int) func(context.Context) error {
			q := queue(c)
			return func(ctx context.Context) error {
				r, err := q.Receive(ctx, "bench", delayq.ReceiveOptions{N: 1, VT: time.Hour, Token: rand.Text(), FirstTry: true})
				if err != nil {
					return err
				}
				if len(r) != 1 {
					return fmt.Errorf("poll received %d messages, want 1", len(r))
				}
				received <- r[0].ID
				return nil
			}
		}},
		{name: "ack", worker: func(c redis.UniversalClient, g int) func(context.Context) error {
			q := queue(c)
			return func(ctx context.Context) error {
				_, err := q.AckWith(ctx, "bench", delayq.AckOptions{Token: rand.Text(), FirstTry: true}, <-received)
				return err
			}
		}},
	}, nil
}
