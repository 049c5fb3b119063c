package chat_test

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/redis/go-redis/v9"
)

// The book's scenario: joe starts a chat with jeff and jenny, and each
// fetches what they have not seen.
func Example() {
	// An in-memory server for the example; point Addr at your Redis instead.
	srv, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	chats := chat.New(rdb, chat.Options{Prefix: "example:"})
	first := "message 1"
	c, err := chats.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff", "jenny"}, Message: &first})
	if err != nil {
		panic(err)
	}
	if _, err := chats.Send(ctx, c.ChatID, "joe", "message 2"); err != nil {
		panic(err)
	}
	for _, user := range []string{"jeff", "jeff"} {
		pending, err := chats.Pending(ctx, user, chat.PendingOptions{})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s has %d chat(s) with news\n", user, len(pending))
		for _, cm := range pending {
			for _, m := range cm.Messages {
				fmt.Printf("  chat %s #%d %s: %s\n", cm.ChatID, m.ID, m.Sender, m.Message)
			}
		}
	}
	// Output:
	// jeff has 1 chat(s) with news
	//   chat 1 #1 joe: message 1
	//   chat 1 #2 joe: message 2
	// jeff has 0 chat(s) with news
}

// A send with a token may be sent again after a lost reply: the repeat
// returns the first send's id and stores nothing more.
func ExampleClient_SendWith_token() {
	srv, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	chats := chat.New(rdb, chat.Options{})
	c, err := chats.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}})
	if err != nil {
		panic(err)
	}
	opt := chat.SendOptions{Token: rand.Text(), FirstTry: true} // one token per message, kept across tries
	first, err := chats.SendWith(ctx, c.ChatID, "joe", "lunch?", opt)
	if err != nil {
		panic(err)
	}
	// Say the reply was lost: send the same call again, as a repeat, which
	// looks the first try's record up.
	opt.FirstTry = false
	again, err := chats.SendWith(ctx, c.ChatID, "joe", "lunch?", opt)
	if err != nil {
		panic(err)
	}
	msgs, _ := chats.History(ctx, c.ChatID, chat.HistoryOptions{})
	fmt.Println("same id:", again == first, "messages:", len(msgs))
	// Output: same id: true messages: 1
}

// A create and a join with a token may be sent again after a lost reply:
// the repeat returns the first answer and makes nothing more.
func ExampleClient_JoinWith_token() {
	srv, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	chats := chat.New(rdb, chat.Options{})
	req := chat.CreateRequest{From: "joe", To: []string{"jeff"}, Token: rand.Text()} // one token per create
	c, err := chats.Create(ctx, req)
	if err != nil {
		panic(err)
	}
	// Say the reply was lost: send the same request again.
	again, err := chats.Create(ctx, req)
	if err != nil {
		panic(err)
	}
	opt := chat.JoinOptions{Token: rand.Text()}
	if _, err := chats.JoinWith(ctx, c.ChatID, "sam", opt); err != nil {
		panic(err)
	}
	j, err := chats.JoinWith(ctx, c.ChatID, "sam", opt) // the repeat
	if err != nil {
		panic(err)
	}
	fmt.Println("same chat:", again.ChatID == c.ChatID, "added:", j.Added)
	// Output: same chat: true added: true
}
