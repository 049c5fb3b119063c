package conn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// redisErr is a server error reply, as go-redis returns them.
type redisErr string

func (e redisErr) Error() string { return string(e) }
func (redisErr) RedisError()     {}

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{io.EOF, true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{fmt.Errorf("pending: %w", context.DeadlineExceeded), true},
		{redis.ErrPoolTimeout, true},
		{redisErr("LOADING Redis is loading the dataset in memory"), true},
		{redisErr("CLUSTERDOWN The cluster is down"), true},
		{redisErr("READONLY You can't write against a read only replica."), true},
		{redisErr("MASTERDOWN Link with MASTER is down"), true},
		{context.Canceled, false},
		{redisErr("WRONGPASS invalid username-password pair"), false},
		{redisErr("NOPERM this user has no permissions"), false},
		{redisErr("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{usageErrorf("bad flag"), false},
		{errors.New("queue \"x\": queue not found"), false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// Persistent retries transient failures, reports the loss and the recovery
// once each, and stops at the first error retrying cannot fix.
func TestPersistent(t *testing.T) {
	var errOut bytes.Buffer
	p := &Persistent{IO: &iostreams.IOStreams{ErrOut: &errOut}, MinBackoff: 1, MaxBackoff: 2}
	calls := 0
	refreshed := 0
	p.Refresh = func(context.Context) { refreshed++ }
	fatal := redisErr("NOPERM no")
	err := p.Run(t.Context(), func(context.Context) error {
		calls++
		switch {
		case calls <= 3:
			return io.EOF
		case calls == 4:
			p.Healthy()
			return io.EOF
		case calls == 5:
			p.Healthy()
			return fatal
		}
		return nil
	})
	if !errors.Is(err, fatal) || calls != 5 || refreshed != 4 {
		t.Errorf("err %v after %d calls and %d refreshes, want NOPERM after 5 and 4", err, calls, refreshed)
	}
	if got := strings.Count(errOut.String(), "lost the connection"); got != 2 {
		t.Errorf("said lost %d times, want 2:\n%s", got, errOut.String())
	}
	if got := strings.Count(errOut.String(), "reconnected after"); got != 2 {
		t.Errorf("said reconnected %d times, want 2:\n%s", got, errOut.String())
	}
}

// opaqueConn hides its socket, as a TLS connection does: go-redis cannot
// check it before handing it out.
type opaqueConn struct{ net.Conn }

// After some of its connections are cut (the older ones, below live ones in
// the pool), Probe leaves no broken one in the pool, even where go-redis
// cannot check a connection's socket (TLS): writes sent right after, at
// once, all succeed.
func TestProbeClearsEveryBrokenConnection(t *testing.T) {
	b, p := redistest.Proxied(t, redistest.Embedded(t))
	opt, err := redis.ParseURL(b.URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.MaxRetries = -1
	opt.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return opaqueConn{c}, nil
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx := t.Context()
	const n = 4
	writeAtOnce := func() []error {
		var held []*redis.Conn
		var errs []error
		for range n { // n connections, each used once
			cn := c.Conn()
			held = append(held, cn)
			if err := cn.Incr(ctx, "n").Err(); err != nil {
				errs = append(errs, err)
			}
		}
		for _, cn := range held {
			cn.Close()
		}
		return errs
	}
	if errs := writeAtOnce(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if idle := c.PoolStats().IdleConns; idle < n {
		t.Fatalf("%d idle connections, want %d", idle, n)
	}
	p.CutOldest(n - 1)
	if err := Probe(ctx, c); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if errs := writeAtOnce(); len(errs) > 0 {
		t.Errorf("writes after Probe: %v", errs)
	}
}

func TestNotRun(t *testing.T) {
	single, cluster, failover := retryable{}, retryable{cluster: true}, retryable{failover: true}
	for _, tc := range []struct {
		err                       error
		single, cluster, failover bool
	}{
		{redisErr("LOADING Redis is loading the dataset in memory"), true, true, true},
		{redisErr("TRYAGAIN Multiple keys request during rehashing of slot"), false, true, false},
		{redisErr("ASK 3999 127.0.0.1:6381"), false, true, false},
		{redisErr("MOVED 3999 127.0.0.1:6381"), false, true, false},
		{redisErr("CLUSTERDOWN The cluster is down"), false, true, false},
		{redisErr("READONLY You can't write against a read only replica."), false, true, true},
		{redisErr("MASTERDOWN Link with MASTER is down"), false, true, true},
		{fmt.Errorf("push to list k: %w", redisErr("TRYAGAIN Multiple keys")), false, true, false},
		{redisErr("ERR wrong number of arguments"), false, false, false},
		{redisErr("NOPERM this user has no permissions"), false, false, false},
		{io.EOF, false, false, false},
		{&lostReply{io.EOF}, false, false, false},
		{&ConnInitError{Err: io.EOF, Spoke: true}, true, true, true},
		{&handshakeError{&ConnInitError{Err: io.EOF, Spoke: true}}, true, true, true},
		{&ConnInitError{Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, Spoke: true}, true, true, true},
		{&ConnInitError{Err: io.EOF}, false, false, false},
		{&net.OpError{Op: "write", Err: syscall.EPIPE}, true, true, true},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, false, false, false},
		{nil, false, false, false},
	} {
		for _, k := range []struct {
			r    retryable
			want bool
		}{{single, tc.single}, {cluster, tc.cluster}, {failover, tc.failover}} {
			if got := k.r.notRun(tc.err); got != k.want {
				t.Errorf("%+v.notRun(%v) = %v, want %v", k.r, tc.err, got, k.want)
			}
		}
	}
}

// A lost reply hidden from go-redis is still a lost reply to chatq, and
// still transient for a long-running command.
func TestLostReply(t *testing.T) {
	err := fmt.Errorf("pop from list k: %w", &lostReply{io.EOF})
	if !ReplyLost(err) || !Transient(err) {
		t.Errorf("ReplyLost %v, Transient %v, want both", ReplyLost(err), Transient(err))
	}
	if errors.Is(err, io.EOF) {
		t.Error("a lostReply shows its cause to errors.Is: go-redis would send the command again")
	}
	if ReplyLost(&ConnInitError{Err: &lostReply{io.EOF}}) {
		t.Error("a failure before the first reply is a lost reply")
	}
}

// A lostReply wrapped twice (a node's hooks can see an error twice, on the
// ASKING path) is still transient.
func TestLostReplyTwice(t *testing.T) {
	err := &lostReply{&lostReply{io.EOF}}
	if !Transient(err) || !ReplyLost(err) || cause(err) != io.EOF {
		t.Errorf("Transient %v, ReplyLost %v, cause %v", Transient(err), ReplyLost(err), cause(err))
	}
	if retriedByCluster(&lostReply{io.EOF}) {
		t.Error("a lostReply would be wrapped again")
	}
}
