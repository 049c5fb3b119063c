package delayq_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/delayq/delayqtest"
	"github.com/redis/go-redis/v9"
)

// workCalls is a go-redis hook that records the delayq script calls a
// client makes, by script file name: how many, and for receives how many
// messages each returned and for acks how many receipts each carried.
// before, if set, runs before each call (from the calling goroutine).
type workCalls struct {
	names  map[string]string // SHA1 or source -> file name
	before func(name string)

	mu       sync.Mutex
	received []int // messages per receive.lua call
	acked    []int // receipts per ack.lua call
}

func newWorkCalls() *workCalls {
	names := map[string]string{}
	for name, src := range delayqtest.Scripts() {
		// As sent: after the permission prelude of scripts that write.
		for _, sent := range []string{src, luascript.Permitted + src} {
			names[redis.NewScript(sent).Hash()] = name
			names[sent] = name // EVAL, after a NOSCRIPT
		}
	}
	return &workCalls{names: names}
}

func (s *workCalls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s *workCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (s *workCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		name := ""
		if len(args) > 2 && (cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			if sha, ok := args[1].(string); ok {
				name = s.names[sha]
			}
		}
		if name != "" && s.before != nil {
			s.before(name)
		}
		err := next(ctx, cmd)
		if err != nil {
			return err // NOSCRIPT, say: go-redis sends the script again
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		switch name {
		case "ack.lua":
			keys, _ := args[2].(int)
			s.acked = append(s.acked, (len(args)-3-keys)/3)
		case "receive.lua":
			if a, ok := cmd.(*redis.Cmd).Val().([]any); ok && len(a) >= 8 {
				s.received = append(s.received, (len(a)-8)/4)
			}
		}
		return err
	}
}

func (s *workCalls) counts() (received, acked []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.received...), append([]int(nil), s.acked...)
}

// countedClient is a delayq client on b whose script calls are recorded.
func countedClient(t *testing.T, b redistest.Backend) (*delayq.Client, *workCalls) {
	t.Helper()
	opt, err := redis.ParseURL(b.URL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	calls := newWorkCalls()
	rdb.AddHook(calls)
	return delayq.New(rdb, delayq.Options{Prefix: b.Prefix}), calls
}

// Work receives as many messages as it has free slots in one call, and
// acks in one call the handlers that finished while an ack was on its way
// (one receive and one ack per message before).
func TestWorkReceivesAndAcksInBatches(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		c, calls := countedClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		pushMany(t, c, "q", 4)
		// The first ack call waits until all four acks are queued: each
		// handler's context ends once its ack is.
		ended := make(chan struct{}, 4)
		var first sync.Once
		calls.before = func(name string) {
			if name != "ack.lua" {
				return
			}
			first.Do(func() {
				for i := 0; i < 4; i++ {
					select {
					case <-ended:
					case <-time.After(time.Minute):
						t.Error("the handlers' contexts did not end")
						return
					}
				}
			})
		}
		var acked atomic.Int64
		err := c.Work(context.Background(), "q", delayq.WorkOptions{
			Concurrency: 4, UntilEmpty: true, VT: 30 * time.Second,
			Report: func(o delayq.Outcome) {
				if o.Acked {
					acked.Add(1)
				}
			},
		}, func(ctx context.Context, m delayq.Message) error {
			go func() { <-ctx.Done(); ended <- struct{}{} }()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		received, acks := calls.counts()
		if len(received) == 0 || received[0] != 4 {
			t.Errorf("receive calls returned %v messages: want 4 in the first (a slot each)", received)
		}
		total := 0
		for _, n := range acks {
			total += n
		}
		// The first call took what was queued when it went (at least
		// one); the second, all the others.
		if acked.Load() != 4 || total != 4 || len(acks) > 2 {
			t.Errorf("%d acked, in ack calls of %v receipts: want 4 in at most 2 calls", acked.Load(), acks)
		}
		if s, err := c.Stats(context.Background(), "q"); err != nil || s.Messages != 0 {
			t.Fatalf("left: %+v %v", s, err)
		}
	})
}

// A message received ahead of a free slot keeps its lease while it waits:
// behind a handler that runs three times the vt, it is neither delivered
// to a rival consumer nor handled twice, and every message is handled once
// on its first receive.
func TestWorkKeepsLeasesOfMessagesReceivedAhead(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		c, calls := countedClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		// Quick jobs first, so that Work receives ahead; then a slow one
		// and three behind it.
		bodies := []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "slow", "w1", "w2", "w3"}
		for _, body := range bodies {
			mustPush(t, c, "q", body, delayq.PushOptions{})
		}
		const vt = 2 * time.Second // a renewal must come back within 5/6 of it, on a loaded machine too
		var mu sync.Mutex
		handled := map[string]int64{} // body -> receive count
		renewals := map[string]int{}
		stolen := 0
		var during *delayq.Stats
		err := c.Work(context.Background(), "q", delayq.WorkOptions{
			Concurrency: 1, UntilEmpty: true, VT: vt,
			Report: func(o delayq.Outcome) {
				mu.Lock()
				defer mu.Unlock()
				if o.Err != nil || !o.Acked {
					t.Errorf("%s: err %v, ack err %v, renewals %d, after %v", o.Message.Body, o.Err, o.AckErr, o.Renewals, o.Duration)
				}
				renewals[o.Message.Body] = o.Renewals
			},
		}, func(ctx context.Context, m delayq.Message) error {
			mu.Lock()
			if _, again := handled[m.Body]; again {
				t.Errorf("%s handled twice", m.Body)
			}
			handled[m.Body] = m.RC
			mu.Unlock()
			if m.Body != "slow" {
				return nil
			}
			// Work receives w1-w3 ahead while slow runs (its handlers so
			// far were quick); only then may a rival look.
			for deadline := time.Now().Add(vt); ; time.Sleep(10 * time.Millisecond) {
				if s, err := c.Stats(context.Background(), "q"); err == nil && s.Ready == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Error("Work did not receive ahead while slow ran")
					break
				}
			}
			// A rival polls all the while: it must never get a message.
			rc := newClient(t, b)
			stop := make(chan struct{})
			var rival sync.WaitGroup
			rival.Add(1)
			go func() {
				defer rival.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					r, err := rc.Receive(context.Background(), "q", delayq.ReceiveOptions{Wait: 100 * time.Millisecond})
					if err == nil && len(r) > 0 {
						mu.Lock()
						stolen += len(r)
						mu.Unlock()
					}
				}
			}()
			time.Sleep(5 * vt / 2) // the job's work
			s, err := c.Stats(context.Background(), "q")
			time.Sleep(vt / 2)
			close(stop)
			rival.Wait()
			mu.Lock()
			during = s
			mu.Unlock()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if stolen != 0 {
			t.Errorf("a rival received %d leased messages", stolen)
		}
		for _, body := range bodies {
			if handled[body] != 1 {
				t.Errorf("%s: receive count %d, want 1 (handled once, never redelivered)", body, handled[body])
			}
		}
		// 2.5 vts into the slow job, w1-w3 were held (received ahead,
		// their leases renewed): in flight with slow, not ready again.
		if during == nil || during.InFlight != 4 || during.Ready != 0 {
			t.Errorf("during the slow job: %+v, want 4 in flight (slow; w1-w3 held) and none ready", during)
		}
		for _, body := range []string{"w1", "w2", "w3"} {
			if renewals[body] < 2 {
				t.Errorf("%s renewed %d times while it waited 3 vts", body, renewals[body])
			}
		}
		received, _ := calls.counts()
		if len(received) >= len(bodies) {
			t.Errorf("receive calls returned %v: want fewer calls than messages", received)
		}
		if s, err := c.Stats(context.Background(), "q"); err != nil || s.Messages != 0 {
			t.Fatalf("left: %+v %v", s, err)
		}
	})
}
