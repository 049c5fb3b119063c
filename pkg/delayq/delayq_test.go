package delayq_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func newClient(t testing.TB, b redistest.Backend) *delayq.Client {
	return delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
}

func mustCreate(t testing.TB, c *delayq.Client, q string, cfg delayq.Attributes) {
	t.Helper()
	if err := c.Create(context.Background(), q, cfg); err != nil {
		t.Fatalf("create %s: %v", q, err)
	}
}

func mustPush(t testing.TB, c *delayq.Client, q, body string, opt delayq.PushOptions) string {
	t.Helper()
	p, err := c.Push(context.Background(), q, body, opt)
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return p.ID
}

var idRE = regexp.MustCompile(`^[0-9a-z]{10}[A-Za-z0-9]{22}$`)

// listQueues returns the namespace's queue names, sorted, walking the
// registry with Queues.
func listQueues(ctx context.Context, c *delayq.Client) ([]string, error) {
	seen := map[string]bool{}
	var cursor uint64
	for {
		page, next, err := c.Queues(ctx, cursor, "", 100)
		if err != nil {
			return nil, err
		}
		for _, q := range page {
			seen[q] = true
		}
		if cursor = next; cursor == 0 {
			return slices.Sorted(maps.Keys(seen)), nil
		}
	}
}

// receiveEvents receives as c.Receive does, and returns what the receive's
// callbacks said too: how many messages it moved to the dead-letter queue,
// and whether that queue was missing.
func receiveEvents(ctx context.Context, c *delayq.Client, q string, opt delayq.ReceiveOptions) (ms []delayq.Message, moved int, missing bool, err error) {
	opt.Moved = func(n int, _ string) { moved += n }
	opt.DeadLetterMissing = func(string) { missing = true }
	ms, err = c.Receive(ctx, q, opt)
	return ms, moved, missing, err
}

// errOf is the error of a call that returns a value too.
func errOf[T any](_ T, err error) error { return err }

// sentAt reads the push time from a message id (RSMQ's "sent"): its first
// 10 characters are the server time in microseconds in base 36.
func sentAt(id string) time.Time {
	us, err := strconv.ParseInt(id[:10], 36, 64)
	if err != nil {
		panic(err)
	}
	return time.UnixMicro(us)
}

func TestQueueLifecycle(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "jobs", delayq.Attributes{})
		if err := c.Create(ctx, "jobs", delayq.Attributes{}); !errors.Is(err, delayq.ErrQueueExists) {
			t.Fatalf("second create: %v, want ErrQueueExists", err)
		}
		mustCreate(t, c, "other", delayq.Attributes{VT: time.Minute, Delay: 2 * time.Second, MaxSize: -1})
		qs, err := listQueues(ctx, c)
		if err != nil || strings.Join(qs, ",") != "jobs,other" {
			t.Fatalf("list = %v, %v", qs, err)
		}
		// The attribute hash is RSMQ's, field for field.
		h := b.Client.HGetAll(ctx, b.Prefix+"rsmq:other:Q").Val()
		if h["vt"] != "60" || h["delay"] != "2" || h["maxsize"] != "-1" || h["created"] == "" || h["created"] != h["modified"] {
			t.Fatalf("attribute hash = %v", h)
		}
		s, err := c.Stats(ctx, "jobs")
		if err != nil {
			t.Fatal(err)
		}
		if s.VT != 30*time.Second || s.Delay != 0 || s.MaxSize != 65536 || s.Messages != 0 {
			t.Fatalf("stats = %+v", s)
		}
		vt := 5 * time.Second
		if err := c.SetAttributes(ctx, "jobs", delayq.Attributes{VT: vt}); err != nil {
			t.Fatal(err)
		}
		if s, _ := c.Stats(ctx, "jobs"); s.VT != vt {
			t.Fatalf("vt after set = %v", s.VT)
		}
		mustPush(t, c, "jobs", "a", delayq.PushOptions{})
		mustPush(t, c, "jobs", "b", delayq.PushOptions{})
		if n, err := c.Purge(ctx, "jobs", -1); err != nil || n != 2 {
			t.Fatalf("purge = %d, %v", n, err)
		}
		if n := b.Client.HLen(ctx, b.Prefix+"rsmq:jobs:Q").Val(); n != 7 { // vt delay maxsize created modified totalsent rsync
			t.Fatalf("hash fields after purge = %d: %v", n, b.Client.HKeys(ctx, b.Prefix+"rsmq:jobs:Q").Val())
		}
		if _, err := c.Delete(ctx, "jobs", -1); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Delete(ctx, "jobs", -1); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		if _, err := c.Stats(ctx, "jobs"); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("stats of deleted: %v", err)
		}
		if _, err := c.Push(ctx, "jobs", "x", delayq.PushOptions{}); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("push to deleted: %v", err)
		}
		if _, err := c.Receive(ctx, "jobs", delayq.ReceiveOptions{}); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("receive from deleted: %v", err)
		}
		if qs, _ := listQueues(ctx, c); len(qs) != 1 {
			t.Fatalf("list after delete = %v", qs)
		}
	})
}

func TestInvalidInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{MaxSize: 1024})
		for name, err := range map[string]error{
			"bad name":         c.Create(ctx, "a:b", delayq.Attributes{}),
			"vt too big":       c.Create(ctx, "x", delayq.Attributes{VT: 10000000 * time.Second}),
			"vt fraction":      c.Create(ctx, "x", delayq.Attributes{VT: 1500 * time.Millisecond}),
			"negative delay":   c.Create(ctx, "x", delayq.Attributes{Delay: -time.Second}),
			"maxsize":          c.Create(ctx, "x", delayq.Attributes{MaxSize: 100}),
			"policy alone":     c.Create(ctx, "x", delayq.Attributes{MaxReceives: 3}),
			"dead letter self": c.Create(ctx, "x", delayq.Attributes{MaxReceives: 3, DeadLetter: "x"}),
			"at and delay": func() error {
				_, err := c.Push(ctx, "q", "m", delayq.PushOptions{At: time.Now(), Delay: time.Second})
				return err
			}(),
			"negative push delay": func() error {
				_, err := c.Push(ctx, "q", "m", delayq.PushOptions{Delay: -time.Second})
				return err
			}(),
			"too long": func() error {
				// 513 emoji are 1026 UTF-16 units (but 513 runes, 2052 bytes).
				_, err := c.Push(ctx, "q", strings.Repeat("😀", 513), delayq.PushOptions{})
				return err
			}(),
			"receive vt": func() error {
				_, err := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: -time.Second})
				return err
			}(),
			"ack bad id": func() error {
				_, err := c.Ack(ctx, "q", "nope")
				return err
			}(),
		} {
			if !errors.Is(err, delayq.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if err := c.Create(ctx, "x", delayq.Attributes{MaxReceives: 3, DeadLetter: "nope"}); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Errorf("missing dead-letter queue: %v", err)
		}
		// 512 emoji fit exactly; nothing was written by the failures.
		mustPush(t, c, "q", strings.Repeat("😀", 512), delayq.PushOptions{})
		if s, _ := c.Stats(ctx, "q"); s.Messages != 1 || s.TotalSent != 1 {
			t.Fatalf("stats after failures = %+v", s)
		}
		if qs, _ := listQueues(ctx, c); len(qs) != 1 {
			t.Fatalf("queues = %v", qs)
		}
	})
}

func TestPushReceiveAck(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		p, err := c.Push(ctx, "q", "hello", delayq.PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !idRE.MatchString(p.ID) {
			t.Fatalf("id %q is not RSMQ's format", p.ID)
		}
		// The id's time is the server's push time, to the microsecond.
		if d := sentAt(p.ID).Sub(p.Sent); d < 0 || d >= time.Millisecond {
			t.Fatalf("id time %v vs sent %v", sentAt(p.ID), p.Sent)
		}
		score := b.Client.ZScore(ctx, b.Prefix+"rsmq:q", p.ID).Val()
		if int64(score) != p.VisibleAt.UnixMilli() || !p.VisibleAt.Equal(p.Sent) {
			t.Fatalf("score %v, visible %v, sent %v", score, p.VisibleAt, p.Sent)
		}
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: time.Hour, N: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(r) != 1 {
			t.Fatalf("received %d", len(r))
		}
		m := r[0]
		if m.ID != p.ID || m.Body != "hello" || m.RC != 1 || !m.FR.Equal(m.Now) || !m.VisibleAt.Equal(m.Now.Add(time.Hour)) {
			t.Fatalf("message = %+v", m)
		}
		h := b.Client.HGetAll(ctx, b.Prefix+"rsmq:q:Q").Val()
		if h[p.ID+":rc"] != "1" || h[p.ID+":fr"] != fmt.Sprint(m.Now.UnixMilli()) || h["totalrecv"] != "1" || h["totalsent"] != "1" {
			t.Fatalf("hash = %v", h)
		}
		// Invisible now: nothing more to receive.
		if r, _ := c.Receive(ctx, "q", delayq.ReceiveOptions{}); len(r) != 0 {
			t.Fatalf("received an invisible message: %+v", r)
		}
		// Retry makes it due again; the second receive counts 2 and keeps fr.
		if _, err := c.ChangeVisibility(ctx, "q", p.ID, 0); err != nil {
			t.Fatal(err)
		}
		r, _ = c.Receive(ctx, "q", delayq.ReceiveOptions{})
		if len(r) != 1 || r[0].RC != 2 || !r[0].FR.Equal(m.FR) {
			t.Fatalf("after retry: %+v", r)
		}
		// An id given twice is acked once.
		if a, err := c.Ack(ctx, "q", p.ID, p.ID); err != nil || a.Acked != 1 || a.Missing != nil {
			t.Fatalf("ack: %+v %v", a, err)
		}
		if a, err := c.Ack(ctx, "q", p.ID); !errors.Is(err, delayq.ErrMessageNotFound) || len(a.Missing) != 1 || a.Acked != 0 {
			t.Fatalf("second ack: %+v %v", a, err)
		}
		if _, err := c.ChangeVisibility(ctx, "q", p.ID, 0); !errors.Is(err, delayq.ErrMessageNotFound) {
			t.Fatalf("retry of acked: %v", err)
		}
		// Nothing of the message is left in the hash.
		if n := b.Client.HLen(ctx, b.Prefix+"rsmq:q:Q").Val(); n != 8 { // 7 of RSMQ's, chatq's rsync
			t.Fatalf("hash after ack: %v", b.Client.HKeys(ctx, b.Prefix+"rsmq:q:Q").Val())
		}
		// Pop deletes on receive.
		id := mustPush(t, c, "q", "once", delayq.PushOptions{})
		r, _ = c.Receive(ctx, "q", delayq.ReceiveOptions{Pop: true})
		if len(r) != 1 || r[0].ID != id || r[0].RC != 1 {
			t.Fatalf("pop: %+v", r)
		}
		if s, _ := c.Stats(ctx, "q"); s.Messages != 0 || s.TotalRecv != 3 {
			t.Fatalf("stats after pop = %+v", s)
		}
	})
}

func TestStatsSplit(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		mustPush(t, c, "q", "in flight", delayq.PushOptions{})
		if r, _ := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: time.Hour}); len(r) != 1 {
			t.Fatal("no message to put in flight")
		}
		mustPush(t, c, "q", "ready", delayq.PushOptions{})
		mustPush(t, c, "q", "ready too", delayq.PushOptions{At: time.Unix(1, 0)})
		mustPush(t, c, "q", "delayed", delayq.PushOptions{Delay: time.Hour})
		mustPush(t, c, "q", "at", delayq.PushOptions{At: time.Now().Add(2 * time.Hour)})
		s, err := c.Stats(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		if s.Messages != 5 || s.Ready != 2 || s.Delayed != 2 || s.InFlight != 1 || s.TotalSent != 5 || s.TotalRecv != 1 {
			t.Fatalf("stats = %+v", s)
		}
		if d := s.NextVisible.Sub(s.Now); d <= 59*time.Minute || d > time.Hour {
			t.Fatalf("next visible in %v", d)
		}
		ps, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 10})
		if err != nil || len(ps) != 5 {
			t.Fatalf("peek: %v %v", ps, err)
		}
		var states []string
		for _, p := range ps {
			states = append(states, p.Body+"="+string(p.State))
		}
		if got := strings.Join(states, ","); got != "ready too=ready,ready=ready,in flight=inflight,delayed=delayed,at=delayed" {
			t.Fatalf("peek states: %s", got)
		}
	})
}

// A message is never received before its due time, and Receive with Wait
// picks it up when it becomes due.
func TestNeverBeforeDue(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		mustPush(t, c, "q", "much later", delayq.PushOptions{Delay: time.Hour})
		if r, _ := c.Receive(ctx, "q", delayq.ReceiveOptions{}); len(r) != 0 {
			t.Fatal("received before due")
		}
		p, err := c.Push(ctx, "q", "later", delayq.PushOptions{Delay: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if d := p.VisibleAt.Sub(p.Sent); d != 300*time.Millisecond {
			t.Fatalf("visible after %v", d)
		}
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Wait: 10 * time.Second})
		if err != nil || len(r) != 1 {
			t.Fatalf("wait: %v %v", r, err)
		}
		if r[0].Now.Before(p.VisibleAt) {
			t.Fatalf("received at %v, due %v", r[0].Now, p.VisibleAt)
		}
		// A receive that waits is woken by a push.
		done := make(chan []delayq.Message, 1)
		go func() {
			r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Wait: time.Minute})
			if err != nil {
				t.Error(err)
			}
			done <- r
		}()
		// Push until the waiter has it: the first push may come before it
		// subscribed, and then it claims the message straight away anyway.
		mustPush(t, c, "q", "now", delayq.PushOptions{})
		select {
		case r := <-done:
			if r == nil || len(r) != 1 || r[0].Body != "now" {
				t.Fatalf("woken with %+v", r)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a push did not wake the waiting receive")
		}
		// A wait with nothing coming ends empty.
		r, err = c.Receive(ctx, "q", delayq.ReceiveOptions{Wait: 100 * time.Millisecond})
		if err != nil || len(r) != 0 {
			t.Fatalf("empty wait: %+v %v", r, err)
		}
	})
}

func pushMany(t testing.TB, c *delayq.Client, q string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		mustPush(t, c, q, fmt.Sprint(i), delayq.PushOptions{})
	}
}

// Eight consumers popping 2,000 due messages receive each exactly once.
func TestConcurrentPopExactlyOnce(t *testing.T) {
	t.Parallel()
	redistest.SlowOnEmbedded(t, "8 consumers × 2,000 messages: ~3 s of CPU")
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		const total = 2000
		pushMany(t, c, "q", total)
		counts := consume(t, c, 8, func(m delayq.Message) bool { return false }, delayq.ReceiveOptions{Pop: true, N: 5})
		checkCounts(t, counts, total, true)
		if s, _ := c.Stats(context.Background(), "q"); s.Messages != 0 || s.TotalRecv != total {
			t.Fatalf("stats after = %+v", s)
		}
	})
}

// Eight consumers with a visibility timeout, some of whom "crash" (do not
// ack) on a message's first receive: every message is received at least
// once, acked in the end, and none is lost.
func TestConcurrentVisibilityAtLeastOnce(t *testing.T) {
	t.Parallel()
	redistest.SlowOnEmbedded(t, "8 consumers × 2,000 messages with redeliveries: ~3.5 s of CPU")
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		const total = 2000
		pushMany(t, c, "q", total)
		// Every 100th message is dropped on its first receive and comes
		// back after the 200ms vt.
		drop := func(m delayq.Message) bool { return m.RC == 1 && atoi(m.Body)%100 == 47 }
		counts := consume(t, c, 8, drop, delayq.ReceiveOptions{VT: 200 * time.Millisecond, N: 5, Wait: 300 * time.Millisecond})
		checkRedelivered(t, c, counts, total)
	})
}

// consume runs n consumers until the queue stays empty for a receive with
// Wait (or, for Pop, an empty receive), acking every message except those
// drop says to leave, and counts receipts per message body.
func consume(t *testing.T, c *delayq.Client, n int, drop func(delayq.Message) bool, opt delayq.ReceiveOptions) map[string]int {
	ctx := context.Background()
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r, err := c.Receive(ctx, "q", opt)
				if err != nil {
					t.Error(err)
					return
				}
				if len(r) == 0 {
					// A failed Stats (a timeout on a loaded machine)
					// ended this consumer silently, and with all eight
					// so ended the test saw messages "lost": look again;
					// a server that is gone fails the next Receive.
					s, err := c.Stats(ctx, "q")
					if err != nil {
						t.Logf("stats: %v (receiving again)", err)
						continue
					}
					if s.Messages == 0 {
						return
					}
					continue
				}
				var ack []string
				mu.Lock()
				for _, m := range r {
					counts[m.Body]++
					if !drop(m) {
						ack = append(ack, m.ID)
					}
				}
				mu.Unlock()
				if !opt.Pop && len(ack) > 0 {
					// A consumer slower than the vt (a loaded machine)
					// finds a message acked by the consumer that received
					// it again: at least once, as promised; the others
					// of the call are acked.
					if _, err := c.Ack(ctx, "q", ack...); err != nil && !errors.Is(err, delayq.ErrMessageNotFound) {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return counts
}

func checkCounts(t *testing.T, counts map[string]int, total int, exactlyOnce bool) {
	t.Helper()
	extra := 0
	for i := 0; i < total; i++ {
		n := counts[fmt.Sprint(i)]
		if n == 0 {
			t.Fatalf("message %d was lost", i)
		}
		if exactlyOnce && n != 1 {
			t.Fatalf("message %d received %d times", i, n)
		}
		extra += n - 1
	}
	if len(counts) != total {
		t.Fatalf("%d distinct messages, want %d", len(counts), total)
	}
	t.Logf("%d messages, %d redeliveries", total, extra)
}

// checkRedelivered checks a run with a vt: the queue is empty, the server
// counted as many receives as the consumers did, and every message dropped
// on its first receive was received again.
func checkRedelivered(t *testing.T, c *delayq.Client, counts map[string]int, total int) {
	t.Helper()
	checkCounts(t, counts, total, false)
	s, err := c.Stats(context.Background(), "q")
	if err != nil || s.Messages != 0 {
		t.Fatalf("left in the queue: %+v %v", s, err)
	}
	sum := 0
	for body, n := range counts {
		sum += n
		if atoi(body)%100 == 47 && n < 2 {
			t.Fatalf("message %s was not redelivered", body)
		}
	}
	if s.TotalRecv != int64(sum) {
		t.Fatalf("server counted %d receives, consumers %d", s.TotalRecv, sum)
	}
}

func TestDeadLetter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dead", delayq.Attributes{})
		mustCreate(t, c, "q", delayq.Attributes{MaxReceives: 2, DeadLetter: "dead"})
		id := mustPush(t, c, "q", "poison", delayq.PushOptions{})
		other := mustPush(t, c, "q", "fine", delayq.PushOptions{Delay: time.Hour})
		// A fresh client (as each CLI call is) that does not know the policy.
		for rc := int64(1); rc <= 2; rc++ {
			r, err := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix}).Receive(ctx, "q", delayq.ReceiveOptions{VT: -1})
			if err != nil || len(r) != 1 || r[0].RC != rc {
				t.Fatalf("receive %d: %+v %v", rc, r, err)
			}
		}
		if _, err := c.ChangeVisibility(ctx, "q", other, 0); err != nil {
			t.Fatal(err)
		}
		// The third receive moves the poison message and delivers the other.
		moved := 0
		r, err := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix}).Receive(ctx, "q", delayq.ReceiveOptions{N: 2, VT: time.Hour,
			Moved: func(n int, to string) {
				if to != "dead" {
					t.Errorf("moved to %q", to)
				}
				moved += n
			}})
		if err != nil {
			t.Fatal(err)
		}
		if moved != 1 || len(r) != 1 || r[0].ID != other {
			t.Fatalf("third receive: %+v, moved %d", r, moved)
		}
		s, _ := c.Stats(ctx, "q")
		if s.Messages != 1 || s.InFlight != 1 || s.MaxReceives != 2 || s.DeadLetter != "dead" || s.TotalDead != 1 {
			t.Fatalf("source stats: %+v", s)
		}
		if d, _ := c.Stats(ctx, "dead"); d.TotalDead != 0 || d.TotalSent != 1 {
			t.Fatalf("dead-letter queue stats: %+v", d)
		}
		r, err = c.Receive(ctx, "dead", delayq.ReceiveOptions{})
		if err != nil || len(r) != 1 || r[0].ID != id || r[0].Body != "poison" || r[0].RC != 1 {
			t.Fatalf("dead-letter receive: %+v %v", r, err)
		}
		if h := b.Client.HMGet(ctx, b.Prefix+"rsmq:q:Q", id, id+":rc", id+":fr").Val(); h[0] != nil || h[1] != nil || h[2] != nil {
			t.Fatalf("left in source: %v", h)
		}
		// Removing the policy.
		if err := c.SetAttributes(ctx, "q", delayq.Attributes{MaxReceives: -1}); err != nil {
			t.Fatal(err)
		}
		if s, _ := c.Stats(ctx, "q"); s.MaxReceives != 0 || s.DeadLetter != "" {
			t.Fatalf("policy left: %+v", s)
		}
	})
}

func TestWaitLateness(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		const n = 40
		for i := 0; i < n; i++ {
			mustPush(t, c, "q", fmt.Sprint(i), delayq.PushOptions{Delay: time.Duration(50+i*17) * time.Millisecond})
		}
		var late, seen []time.Duration
		for len(late) < n {
			r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Wait: 5 * time.Second, Pop: true})
			if err != nil {
				t.Fatal(err)
			}
			got := time.Now()
			if len(r) == 0 {
				t.Fatal("wait ended with messages still due")
			}
			for _, m := range r {
				due := m.Sent.Truncate(time.Millisecond).Add(time.Duration(50+atoi(m.Body)*17) * time.Millisecond)
				if m.Now.Before(due) {
					t.Fatalf("message %s received at %v before due %v", m.Body, m.Now, due)
				}
				late = append(late, m.Now.Sub(due))
				// The server and the tests share the machine's clock.
				seen = append(seen, got.Sub(due))
			}
		}
		med, worst := summarize(late)
		t.Logf("wake lateness over %d messages, server time of the claim (ms resolution) - due: median %v, worst %v", n, med, worst)
		med, worst = summarize(seen)
		t.Logf("wake lateness over %d messages, client clock when Receive returned - due: median %v, worst %v", n, med, worst)
	})
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

func summarize(ds []time.Duration) (median, worst time.Duration) {
	s := append([]time.Duration(nil), ds...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2], s[len(s)-1]
}

// With HashTag (Redis Cluster) a queue's keys share a hash tag.
func TestHashTag(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix, HashTag: true})
		mustCreate(t, c, "q", delayq.Attributes{})
		id := mustPush(t, c, "q", "tagged", delayq.PushOptions{})
		if b.Client.ZScore(ctx, b.Prefix+"rsmq:{q}", id).Err() != nil || b.Client.HGet(ctx, b.Prefix+"rsmq:{q}:Q", id).Val() != "tagged" {
			t.Fatal("the message is not under the hash-tagged keys")
		}
		if qs, _ := listQueues(ctx, c); len(qs) != 1 || qs[0] != "q" {
			t.Fatalf("list = %v", qs)
		}
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{})
		if err != nil || len(r) != 1 {
			t.Fatalf("receive: %+v %v", r, err)
		}
		mustCreate(t, c, "dead", delayq.Attributes{})
		if err := c.Create(ctx, "x", delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"}); !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("dead letter with hash tags: %v", err)
		}
	})
}

// A dead-letter count that is not a number stops a receive that would
// move a message before it writes anything.
func TestDeadLetterCountChecked(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dead", delayq.Attributes{})
		mustCreate(t, c, "q", delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"})
		mustPush(t, c, "q", "poison", delayq.PushOptions{})
		if _, err := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: -1}); err != nil {
			t.Fatal(err)
		}
		b.Client.HSet(ctx, b.Prefix+"rsmq:q:Q", "totaldead", "nan")
		before := b.Client.HGetAll(ctx, b.Prefix+"rsmq:q:Q").Val()
		if _, err := c.Receive(ctx, "q", delayq.ReceiveOptions{}); err == nil || !strings.Contains(err.Error(), "totaldead") {
			t.Fatalf("receive with a garbage totaldead: %v", err)
		}
		if after := b.Client.HGetAll(ctx, b.Prefix+"rsmq:q:Q").Val(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("hash changed: %v -> %v", before, after)
		}
		if n := b.Client.ZCard(ctx, b.Prefix+"rsmq:dead").Val(); n != 0 {
			t.Fatalf("%d moved", n)
		}
	})
}
