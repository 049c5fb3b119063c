package cmd

import (
	"context"
	"fmt"

	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// benchChat: one chat per client, with a sender and a reader; "send" sends
// --size byte messages, "pending" has each reader fetch and mark what is new.
func benchChat(ctx context.Context, c redis.UniversalClient, prefix string, o *benchOptions) ([]benchStep, error) {
	setup := chat.New(c, chat.Options{Prefix: prefix})
	for i := range o.clients {
		id := fmt.Sprint(i + 1)
		if _, err := setup.Create(ctx, chat.CreateRequest{From: "sender", To: []string{"reader" + id}, ID: id}); err != nil {
			return nil, err
		}
	}
	msg := benchPayload(o.size)
	chatOf := func(g int) string { return fmt.Sprint(g/o.pipeline + 1) }
	return []benchStep{
		{name: "send", worker: func(c redis.UniversalClient, g int) func(context.Context) error {
			s, id := chat.New(c, chat.Options{Prefix: prefix}), chatOf(g)
			return func(ctx context.Context) error {
				_, err := s.Send(ctx, id, "sender", msg)
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
	item := benchPayload(o.size)
	list := func(c redis.UniversalClient) (*shardlist.List, error) {
		return shardlist.New(c, "bench", shardlist.Options{Prefix: prefix})
	}
	if _, err := list(c); err != nil {
		return nil, err
	}
	return []benchStep{
		{name: "push", worker: func(c redis.UniversalClient, g int) func(context.Context) error {
			l, _ := list(c)
			return func(ctx context.Context) error {
				_, err := l.RPush(ctx, item)
				return err
			}
		}},
		{name: "pop", worker: func(c redis.UniversalClient, g int) func(context.Context) error {
			l, _ := list(c)
			return func(ctx context.Context) error {
				_, err := l.LPop(ctx, 1)
				return err
			}
		}},
	}, nil
}
