package delayq_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
)

// A delayed message is received once it is due, then acked.
func Example() {
	// An in-memory server for the example; point Addr at your Redis instead.
	s, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	q := delayq.New(rdb, delayq.Options{}) // namespace "rsmq", as rsmq's default
	if err := q.Create(ctx, "jobs", delayq.Attributes{VT: time.Minute}); err != nil {
		panic(err)
	}
	p, _ := q.Push(ctx, "jobs", "resize photo 42", delayq.PushOptions{Delay: 200 * time.Millisecond})

	// Sleeps until the message is due (or a push arrives), up to 10s.
	r, _ := q.Receive(ctx, "jobs", delayq.ReceiveOptions{Wait: 10 * time.Second})
	m := r[0]
	fmt.Println(m.Body, m.RC, m.ID == p.ID, "received after due:", !m.Now.Before(p.VisibleAt))

	st, _ := q.Stats(ctx, "jobs")
	fmt.Println("in flight:", st.InFlight)
	if _, err := q.Ack(ctx, "jobs", m.ID); err != nil {
		panic(err)
	}
	st, _ = q.Stats(ctx, "jobs")
	fmt.Println("messages:", st.Messages)
	// Output:
	// resize photo 42 1 true received after due: true
	// in flight: 1
	// messages: 0
}

// A message received too often moves to the dead-letter queue; redrive
// moves it back under the same id, with its receive count reset.
func ExampleClient_Redrive() {
	s, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	q := delayq.New(rdb, delayq.Options{})
	_ = q.Create(ctx, "jobs-dead", delayq.Attributes{})
	_ = q.Create(ctx, "jobs", delayq.Attributes{MaxReceives: 1, DeadLetter: "jobs-dead"})
	p, _ := q.Push(ctx, "jobs", "poison", delayq.PushOptions{})
	_, _ = q.Receive(ctx, "jobs", delayq.ReceiveOptions{VT: -1}) // received once, not acked (a vt of 0)
	_, _ = q.Receive(ctx, "jobs", delayq.ReceiveOptions{         // would be the second: moved
		Moved: func(n int, to string) { fmt.Println("dead-lettered:", n, "to", to) },
	})

	rd, err := q.Redrive(ctx, "jobs-dead", delayq.RedriveOptions{}) // to the queue whose dead-letter queue it is
	if err != nil {
		panic(err)
	}
	fmt.Println("moved", rd.Moved, "to", rd.To)
	m, _ := q.Get(ctx, "jobs", p.ID)
	fmt.Println(m.Body, m.State, m.RC)
	// Output:
	// dead-lettered: 1 to jobs-dead
	// moved 1 to jobs
	// poison ready 0
}

// A push with a token may be sent again after a lost reply: the repeat
// returns the first push's answer and stores nothing more.
func ExampleClient_Push_token() {
	s, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	q := delayq.New(rdb, delayq.Options{})
	if err := q.Create(ctx, "jobs", delayq.Attributes{}); err != nil {
		panic(err)
	}
	opt := delayq.PushOptions{Token: rand.Text(), FirstTry: true} // one token per message, kept across tries
	first, err := q.Push(ctx, "jobs", "resize photo 42", opt)
	if err != nil {
		panic(err)
	}
	// Say the reply was lost: send the same call again, as a repeat, which
	// looks the first try's record up.
	opt.FirstTry = false
	again, err := q.Push(ctx, "jobs", "resize photo 42", opt)
	if err != nil {
		panic(err)
	}
	st, _ := q.Stats(ctx, "jobs")
	fmt.Println("same id:", again.ID == first.ID, "messages:", st.Messages)
	// Output: same id: true messages: 1
}

// A pop with a token may be sent again after a lost reply: the repeat
// returns the message the first pop took and pops no other.
func ExampleClient_Receive_token() {
	s, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	q := delayq.New(rdb, delayq.Options{})
	if err := q.Create(ctx, "jobs", delayq.Attributes{}); err != nil {
		panic(err)
	}
	for _, body := range []string{"resize photo 42", "resize photo 43"} {
		if _, err := q.Push(ctx, "jobs", body, delayq.PushOptions{}); err != nil {
			panic(err)
		}
	}
	opt := delayq.ReceiveOptions{Pop: true, Token: rand.Text()} // one token per pop, kept across tries
	first, err := q.Receive(ctx, "jobs", opt)
	if err != nil {
		panic(err)
	}
	// Say the reply was lost: send the same call again.
	again, err := q.Receive(ctx, "jobs", opt)
	if err != nil {
		panic(err)
	}
	st, _ := q.Stats(ctx, "jobs")
	fmt.Println(again[0].Body, "same id:", again[0].ID == first[0].ID, "left:", st.Messages)
	// Output: resize photo 42 same id: true left: 1
}

// A batch pushed with a token (the first due's) may be sent again after a
// lost reply: the repeat returns the batch's ids and stores nothing more.
func ExampleClient_PushMany_token() {
	s, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	q := delayq.New(rdb, delayq.Options{})
	if err := q.Create(ctx, "jobs", delayq.Attributes{}); err != nil {
		panic(err)
	}
	bodies := []string{"resize photo 42", "resize photo 43"}
	due := []delayq.PushOptions{{Token: rand.Text()}} // one token per batch, kept across tries
	first, err := q.PushMany(ctx, "jobs", bodies, delayq.PushManyOptions{Due: due})
	if err != nil {
		panic(err)
	}
	// Say the reply was lost: send the same call again.
	again, err := q.PushMany(ctx, "jobs", bodies, delayq.PushManyOptions{Due: due})
	if err != nil {
		panic(err)
	}
	st, _ := q.Stats(ctx, "jobs")
	fmt.Println("same ids:", again[1].ID == first[1].ID, "messages:", st.Messages)
	// Output: same ids: true messages: 2
}
