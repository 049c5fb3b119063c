package delayq_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/faultproxy"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
)

// proxied returns a client of b's server through a fault-injecting proxy,
// with the given read timeout (-1: none, so only chatq's own deadlines
// can end a read).
func proxied(t *testing.T, b redistest.Backend, readTimeout time.Duration) (*delayq.Client, *faultproxy.Proxy) {
	t.Helper()
	pb, p := redistest.Proxied(t, b)
	opt, err := redis.ParseURL(pb.URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.ReadTimeout = readTimeout
	opt.MaxRetries = -1
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil { // the pool's first connection, before any fault
		t.Fatal(err)
	}
	return delayq.New(rdb, delayq.Options{Prefix: b.Prefix}), p
}

// cancelAfter runs receive with a context cancelled once ready reports
// true (checked every 5ms, for up to 20s; nil: after 50ms) and returns its
// error and how long after the cancel it returned. A receive that ignores
// the cancel fails the test after 20s instead of hanging it.
func cancelAfter(t *testing.T, ready func() bool, receive func(ctx context.Context) error) (error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- receive(ctx) }()
	if ready == nil {
		time.Sleep(50 * time.Millisecond)
	} else {
		for deadline := time.Now().Add(20 * time.Second); !ready(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the fault never happened")
			}
		}
	}
	cancel()
	at := time.Now()
	select {
	case err := <-done:
		return err, time.Since(at)
	case <-time.After(20 * time.Second):
		t.Fatal("receive ignored its cancelled context")
		return nil, 0
	}
}

// Waits have deadlines and honour cancellation even when the server's
// replies never come: the SUBSCRIBE confirmation blackholed, a claim's
// reply blackholed. Latencies are logged, not asserted (CI is slow and
// shared); the test fails only if a call hangs.
func TestPromptCancel(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		mustCreate(t, newClient(t, b), "q", delayq.Attributes{})

		// SUBSCRIBE's reply never comes, the client has no read timeout.
		c, p := proxied(t, b, -1)
		p.DropReplyTo("subscribe")
		dropped := func() bool { _, _, _, n := p.Counts(); return n == 1 }
		err, lat := cancelAfter(t, dropped, func(ctx context.Context) error {
			_, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Wait: time.Hour})
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("blackholed SUBSCRIBE, cancelled: %v", err)
		}
		t.Logf("blackholed SUBSCRIBE: returned %v after the cancel", lat)
		// Not cancelled: the wait ends (nothing received), not never; and
		// with a wait longer than the client's read timeout, an error.
		p.DropReplyTo("subscribe")
		start := time.Now()
		r, err := c.Receive(context.Background(), "q", delayq.ReceiveOptions{Wait: 300 * time.Millisecond})
		if err != nil || len(r) != 0 {
			t.Fatalf("blackholed SUBSCRIBE, 300ms wait: %+v %v", r, err)
		}
		t.Logf("blackholed SUBSCRIBE, 300ms wait: ended after %v", time.Since(start))
		c, p = proxied(t, b, 500*time.Millisecond)
		p.DropReplyTo("subscribe")
		start = time.Now()
		_, err = c.Receive(context.Background(), "q", delayq.ReceiveOptions{Wait: time.Hour})
		if err == nil || !strings.Contains(err.Error(), "subscribe to") {
			t.Fatalf("blackholed SUBSCRIBE, 1h wait: %v", err)
		}
		// A timeout, whichever limit noticed it first: a worker that
		// retries after timeouts must not take it for a lasting error.
		var ne net.Error
		if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
			t.Fatalf("blackholed SUBSCRIBE, 1h wait: not a timeout: %v", err)
		}
		t.Logf("blackholed SUBSCRIBE, 1h wait: error after %v: %v", time.Since(start), err)

		// A claim's reply never comes (bounded by a 5s read timeout so
		// that the abandoned call ends with the test).
		c, p = proxied(t, b, 5*time.Second)
		p.Blackhole(true)
		for _, wait := range []time.Duration{0, time.Hour} {
			err, lat = cancelAfter(t, nil, func(ctx context.Context) error {
				_, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Wait: wait})
				return err
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("blackholed claim (wait %v), cancelled: %v", wait, err)
			}
			t.Logf("blackholed claim (wait %v): returned %v after the cancel", wait, lat)
		}

		// A claim whose reply comes after the caller left: its message is
		// made visible again, not hidden for the queue's 30s vt.
		p.Blackhole(false)
		c, p = proxied(t, b, 5*time.Second)
		id := mustPush(t, c, "q", "released", delayq.PushOptions{})
		p.Latency(300 * time.Millisecond)
		err, _ = cancelAfter(t, nil, func(ctx context.Context) error {
			_, err := c.Receive(ctx, "q", delayq.ReceiveOptions{})
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("slow claim, cancelled: %v", err)
		}
		p.Latency(0)
		// Wait for the delayed claim to reach the server.
		for deadline := time.Now().Add(10 * time.Second); b.Client.HGet(context.Background(), b.Prefix+"rsmq:q:Q", id+":rc").Val() != "1"; {
			if time.Now().After(deadline) {
				t.Fatal("the abandoned claim never reached the server")
			}
			time.Sleep(5 * time.Millisecond)
		}
		r, err = newClient(t, b).Receive(context.Background(), "q", delayq.ReceiveOptions{Wait: 10 * time.Second})
		if err != nil || len(r) != 1 || r[0].ID != id || r[0].RC != 2 {
			t.Fatalf("after an abandoned claim: %+v %v", r, err)
		}
	})
}
