package shardlist_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// argsHook records the arguments of every script call.
type argsHook struct{ scripts *[][]any }

func (h argsHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h argsHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			*h.scripts = append(*h.scripts, cmd.Args())
		}
		return next(ctx, cmd)
	}
}
func (h argsHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// An ASK reply to a sharded list's script is declined as TRYAGAIN (retried,
// not followed); to a queue's or a chat's script, whose keys are all
// declared, it is left to go-redis to follow. The scripts are the packages'
// own, as they call them.
func TestASKHook(t *testing.T) {
	ctx := context.Background()
	b := redistest.Embedded(t)
	var scripts [][]any
	b.Client.AddHook(argsHook{&scripts})

	calls := func(what string, do func() error) [][]any {
		t.Helper()
		scripts = nil
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(scripts) == 0 {
			t.Fatalf("%s ran no script", what)
		}
		return scripts
	}
	lists := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix})
	queues := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
	chats := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
	list := append(calls("list push", func() error { _, err := lists.RPush(ctx, "items", "a"); return err }),
		calls("list pop", func() error { _, err := lists.LPop(ctx, "items", 1); return err })...)
	var others [][]any
	others = append(others, calls("queue create", func() error { return queues.Create(ctx, "jobs", delayq.Attributes{}) })...)
	others = append(others, calls("queue push", func() error {
		_, err := queues.Push(ctx, "jobs", "x", delayq.PushOptions{})
		return err
	})...)
	others = append(others, calls("chat create", func() error {
		_, err := chats.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "room"})
		return err
	})...)
	others = append(others, calls("chat send", func() error { _, err := chats.Send(ctx, "room", "joe", "hi"); return err })...)

	ask := redisErr("ASK 3999 127.0.0.1:6381")
	hook := shardlist.ASKHook().ProcessHook(func(context.Context, redis.Cmder) error { return ask })
	for _, args := range list {
		cmd := redis.NewCmd(ctx, args...)
		err := hook(ctx, cmd)
		if err == nil || !strings.HasPrefix(err.Error(), "TRYAGAIN ") || cmd.Err() != err || !conn.Transient(err) {
			t.Errorf("%v: ASK became %v (cmd: %v), want a TRYAGAIN refusal", args[:8], err, cmd.Err())
		}
	}
	for _, args := range others {
		if err := hook(ctx, redis.NewCmd(ctx, args...)); err != ask {
			t.Errorf("%v: ASK became %v, want it as it was", args, err)
		}
	}
	if err := hook(ctx, redis.NewCmd(ctx, "get", "t:{items}:first")); err != ask {
		t.Errorf("GET: ASK became %v, want it as it was", err)
	}
}

// redisErr is an error reply of the server's.
type redisErr string

func (e redisErr) Error() string { return string(e) }
func (redisErr) RedisError()     {}
