package delayq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// Work acks what the handler handles, leaves failures for retry, and on
// cancellation stops taking messages and waits for running handlers.
func TestWork(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		const total = 50
		pushMany(t, c, "q", total)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var mu sync.Mutex
		seen := map[string]int{}
		acked := 0
		done := make(chan error, 1)
		go func() {
			done <- c.Work(ctx, "q", delayq.WorkOptions{
				Concurrency: 4, VT: 300 * time.Millisecond,
				Report: func(o delayq.Outcome) {
					mu.Lock()
					defer mu.Unlock()
					if o.Err == nil && o.AckErr == nil {
						acked++
						if acked == total {
							cancel()
						}
					}
				},
			}, func(ctx context.Context, m delayq.Message) error {
				mu.Lock()
				seen[m.Body]++
				mu.Unlock()
				if m.Body == "7" && m.RC == 1 {
					return errors.New("fails once")
				}
				return nil
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("work did not finish")
		}
		// 7 failed once and came back; a slow handler may see others twice.
		if len(seen) != total || seen["7"] < 2 {
			t.Fatalf("seen %d distinct, message 7 %d times", len(seen), seen["7"])
		}
		if s, _ := c.Stats(context.Background(), "q"); s.Messages != 0 {
			t.Fatalf("left: %+v", s)
		}
		if err := c.Work(context.Background(), "nope", delayq.WorkOptions{}, nil); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("work on missing queue: %v", err)
		}
	})
}

// UntilEmpty drains the queue and returns, leaving a delayed message and a
// failed one (which comes back only after its vt); MaxJobs returns after
// that many messages, their handlers done.
func TestWorkUntilEmptyAndMaxJobs(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		pushMany(t, c, "q", 10)
		if _, err := c.Push(ctx, "q", "later", delayq.PushOptions{Delay: time.Hour}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		handled := 0
		count := func(ctx context.Context, m delayq.Message) error {
			mu.Lock()
			defer mu.Unlock()
			handled++
			return nil
		}
		if err := c.Work(ctx, "q", delayq.WorkOptions{MaxJobs: 3, Concurrency: 2}, count); err != nil {
			t.Fatal(err)
		}
		if handled != 3 {
			t.Fatalf("MaxJobs 3 handled %d", handled)
		}
		done := make(chan error, 1)
		go func() {
			done <- c.Work(ctx, "q", delayq.WorkOptions{UntilEmpty: true, Concurrency: 3, VT: time.Hour},
				func(ctx context.Context, m delayq.Message) error {
					if m.Body == "5" {
						return errors.New("fails")
					}
					return count(ctx, m)
				})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("UntilEmpty did not return")
		}
		s, err := c.Stats(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		if handled != 9 || s.Messages != 2 || s.Delayed != 1 || s.InFlight != 1 || s.Ready != 0 {
			t.Fatalf("after the drain: handled %d, stats %+v", handled, s)
		}
		if err := c.Work(ctx, "q", delayq.WorkOptions{MaxJobs: -1}, count); err == nil {
			t.Fatal("MaxJobs -1 accepted")
		}
	})
}
