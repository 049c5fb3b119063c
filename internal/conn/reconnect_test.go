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

	"github.com/chatq-dev/chatq/internal/iostreams"
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
