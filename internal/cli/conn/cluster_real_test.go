package conn

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// clusterClient is chatq's client of c, as --cluster builds it.
func clusterClient(t *testing.T, c *redistest.Cluster) redis.UniversalClient {
	t.Helper()
	var errOut bytes.Buffer
	cl, err := NewClient(&Config{URL: c.URL(), Cluster: true, Timeout: 3 * time.Second},
		&iostreams.IOStreams{ErrOut: &errOut}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// A write whose reply is lost on a Cluster is not sent again: go-redis's
// cluster client retries a command after a read error (the same node, then
// another), which would apply a write twice; chatq reports it as lost
// (exit 4) instead.
func TestClusterLostReplyIsNotRetried(t *testing.T) {
	c := redistest.StartClusterWith(t, redistest.ClusterOptions{Masters: 3, Proxied: true})
	cl := clusterClient(t, c)
	ctx := t.Context()
	key := "lost-reply-counter"
	owner := c.MasterOf(t, key)
	owner.Proxy.DropReplyTo(key)
	err := cl.Incr(ctx, key).Err()
	if !ReplyLost(err) {
		t.Errorf("INCR with its reply dropped: %v, want a lost reply", err)
	}
	n, err := owner.Client().Get(ctx, key).Int()
	if err != nil || n != 1 {
		t.Errorf("the counter is %d (%v) after one INCR, want 1", n, err)
	}
}

// Single commands, scripts over several keys and pipelines succeed while
// their slot moves to another master one key at a time: chatq follows ASK
// and MOVED and retries TRYAGAIN, within --timeout.
func TestClusterCommandsRideOutAMigration(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	cl := clusterClient(t, c)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	keys := make([]string, 6)
	for i := range keys {
		keys[i] = fmt.Sprintf("{m}:%d", i)
		if err := cl.Set(ctx, keys[i], 0, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Increments every key by one, in one script: atomic, several keys.
	incrAll := redis.NewScript(`for i = 1, #KEYS do redis.call('incr', KEYS[i]) end return #KEYS`)
	var calls, failures atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				var err error
				switch w {
				case 0:
					err = incrAll.Run(ctx, cl, keys).Err()
				case 1:
					err = cl.Get(ctx, keys[0]).Err()
				case 2:
					_, err = cl.Pipelined(ctx, func(p redis.Pipeliner) error {
						for _, k := range keys {
							p.Get(ctx, k)
						}
						return nil
					})
				}
				calls.Add(1)
				if err != nil && ctx.Err() == nil {
					failures.Add(1)
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	slot, err := c.Slot(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		owner, err := c.Owner(ctx, slot)
		if err != nil {
			t.Fatal(err)
		}
		var dst *redistest.Server
		for _, m := range c.Masters(ctx) {
			if m != owner {
				dst = m
				break
			}
		}
		if err := c.MigrateSlot(ctx, slot, dst, redistest.MigrateOptions{AfterKey: func() { time.Sleep(50 * time.Millisecond) }}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	cancel()
	wg.Wait()
	t.Logf("%d calls, %d failed; the nodes answered %v", calls.Load(), failures.Load(), c.Redirects(context.Background()))
	for _, err := range errs[:min(len(errs), 10)] {
		t.Errorf("failed: %v", err)
	}
	// Every script call that succeeded incremented every key once.
	want, err := cl.Get(context.Background(), keys[0]).Int()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[1:] {
		if n, err := cl.Get(context.Background(), k).Int(); err != nil || n != want {
			t.Errorf("%s = %d (%v), want %d like %s", k, n, err, want, keys[0])
		}
	}
}

// After a server restart, the next command does not go out on a pooled
// connection the restart broke (it would end as "the reply was lost",
// exit 4, though the server never saw it): go-redis checks an idle
// connection's socket before handing it out, which chatq's dialer must
// leave possible.
func TestNoRequestOnAConnectionTheRestartBroke(t *testing.T) {
	s := redistest.StartServer(t)
	var errOut bytes.Buffer
	cl, err := NewClient(&Config{URL: s.URL(), Timeout: 3 * time.Second}, &iostreams.IOStreams{ErrOut: &errOut}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := t.Context()
	for round := range 5 {
		if err := cl.Incr(ctx, "n").Err(); err != nil {
			t.Fatalf("round %d, before the restart: %v", round, err)
		}
		s.Restart()
		if err := cl.Incr(ctx, "n").Err(); err != nil {
			t.Errorf("round %d, the first INCR after the restart: %v (reply lost: %v)", round, err, ReplyLost(err))
		}
	}
}

// A connection that fails before its first reply carried no command of
// chatq's (go-redis waits for HELLO's reply): not a lost reply, even when
// other connections of the client have had replies. A proxy in front of a
// server that is down accepts, then closes.
func TestNoReplyYetIsNotALostReply(t *testing.T) {
	s := redistest.StartServer(t)
	b, p := redistest.Proxied(t, redistest.Backend{Name: "redis", URL: s.URL()})
	var errOut bytes.Buffer
	cl, err := NewClient(&Config{URL: b.URL, Timeout: 500 * time.Millisecond}, &iostreams.IOStreams{ErrOut: &errOut}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := t.Context()
	if err := cl.Incr(ctx, "n").Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	// The proxy closes the client's side of the connection the server
	// closed (a request sent before that is lost, truly).
	for deadline := time.Now().Add(time.Minute); p.Open() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the proxy kept its connections")
		}
	}
	err = cl.Incr(ctx, "n").Err()
	if h := FailureHint(err, &Config{}, func(string) string { return "" }); !strings.Contains(h, "may be restarting") {
		t.Errorf("hint %q", h)
	}
	if err == nil || ReplyLost(err) || !Transient(err) {
		t.Errorf("INCR through a proxy whose server is down: %v (reply lost %v, transient %v), want a transient error, not a lost reply",
			err, ReplyLost(err), Transient(err))
	}
}

// A command whose new connection fails before the server's first reply
// (refused, or closed by a proxy whose server is down), after the client's
// other connections have had replies, never went out: it is sent again
// within --timeout, so a restart shorter than that ends as if nothing had
// happened, directly and through a proxy, and the command is applied once.
func TestNothingSentIsSentAgain(t *testing.T) {
	s := redistest.StartServer(t)
	b, p := redistest.Proxied(t, redistest.Backend{Name: "redis", URL: s.URL()})
	for _, url := range []string{s.URL(), b.URL} {
		var errOut bytes.Buffer
		cl, err := NewClient(&Config{URL: url, Timeout: 20 * time.Second}, &iostreams.IOStreams{ErrOut: &errOut}, 0)
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		for round := range 3 {
			before, err := cl.Incr(ctx, "n").Result()
			if err != nil {
				t.Fatal(err)
			}
			s.Kill()
			// The proxy closes its side of what the server closed (a
			// request sent before that would be lost, truly:
			// TestNoReplyYetIsNotALostReply).
			for deadline := time.Now().Add(time.Minute); p.Open() > 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the proxy kept its connections")
				}
			}
			back := make(chan struct{})
			go func() {
				defer close(back)
				time.Sleep(300 * time.Millisecond) // down for a moment: the INCR below meets it
				s.Start()
			}()
			start := time.Now()
			after, err := cl.Incr(ctx, "n").Result()
			<-back
			t.Logf("%s, round %d: INCR took %v", url, round, time.Since(start).Round(time.Millisecond))
			if err != nil {
				t.Fatalf("%s, round %d: INCR while the server restarts within --timeout: %v", url, round, err)
			}
			// The server keeps what it acknowledged (AOF): one more.
			if after != before+1 {
				t.Errorf("%s, round %d: n = %d after the restart, %d before: want one INCR applied", url, round, after, before)
			}
		}
		cl.Close()
	}
}
