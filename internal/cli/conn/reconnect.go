package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
)

// Transient reports whether err is one that waiting and trying again can
// fix: a lost or refused connection, a timeout, or a server that is loading
// its data, failing over or busy. Errors of the caller's making (auth, ACL,
// wrong type, usage) are not.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	err = cause(err)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		for _, p := range []string{"LOADING", "BUSY", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "NOREPLICAS", "UNBLOCKED"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
	}
	return false
}

// Persistent runs a long-running command's work again after a transient
// failure, with capped exponential backoff and jitter, saying once on stderr
// that the connection was lost and once that it is back.
type Persistent struct {
	IO *iostreams.IOStreams
	// GiveUpAfter ends the retries when the server has been unreachable
	// this long; 0 retries until interrupted.
	GiveUpAfter time.Duration
	// MinBackoff and MaxBackoff bound the wait between tries (100ms, 5s).
	MinBackoff, MaxBackoff time.Duration
	// Retryable, when set, narrows which transient errors are retried: a
	// command whose failed step may have applied (a pop whose reply was
	// lost) ends instead, so that nothing is lost silently.
	Retryable func(error) bool
	// Probe, when set, runs before each retry, which waits for it to
	// succeed: it checks that the server answers again and clears the
	// connections the outage broke, so that the retried step (which may
	// write) does not go out on a dead connection and end as "may have
	// applied".
	Probe func(ctx context.Context) error
	// Refresh, when set, runs before each retry: it makes the client look
	// up the topology again (a Cluster's slots after a failover).
	Refresh func(ctx context.Context)
	// Redirects makes MOVED and ASK transient too: on a Cluster they mean
	// that a slot is moving (each command follows them for up to
	// --timeout; a long-running command waits longer).
	Redirects bool

	mu      sync.Mutex
	lostAt  time.Time
	refused bool // the loss was a refusal (a server error reply), not the connection
}

// Run calls op until it returns nil, an error that is not transient, or ctx
// ends (then it returns nil: an interrupt is the normal end of a
// long-running command). op calls Healthy after each successful server call,
// so that a recovery is reported and the backoff starts again from its
// minimum.
func (p *Persistent) Run(ctx context.Context, op func(ctx context.Context) error) error {
	minB, maxB := p.MinBackoff, p.MaxBackoff
	if minB <= 0 {
		minB = 100 * time.Millisecond
	}
	if maxB <= 0 {
		maxB = 5 * time.Second
	}
	backoff := minB
	var err error
	for {
		if err == nil || p.Probe == nil {
			err = op(ctx)
		} else if err = p.Probe(ctx); err == nil {
			err = op(ctx)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err == nil || !(Transient(err) || p.Redirects && redirect(err)) || (p.Retryable != nil && !p.Retryable(err)) {
			return err
		}
		p.mu.Lock()
		if p.lostAt.IsZero() {
			p.lostAt = time.Now()
			p.refused = replyCode(err) != ""
			if p.refused {
				p.IO.Infof("the server cannot serve this now (%v); retrying", err)
			} else {
				p.IO.Infof("lost the connection to the server (%v); reconnecting", err)
			}
			backoff = minB
		}
		down := time.Since(p.lostAt)
		p.mu.Unlock()
		if p.GiveUpAfter > 0 && down >= p.GiveUpAfter {
			return withHint(fmt.Errorf("gave up after %s without the server: %w", p.GiveUpAfter, err),
				"check that the server is up and reachable, or raise --give-up-after")
		}
		// Full jitter: a fleet of workers does not reconnect in lockstep.
		wait := time.Duration(rand.Int64N(int64(backoff))) + backoff/2
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(backoff*2, maxB)
		if p.Refresh != nil {
			p.Refresh(ctx)
		}
	}
}

// Healthy tells p that a server call succeeded: after a loss, it says on
// stderr that the connection is back.
func (p *Persistent) Healthy() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lostAt.IsZero() {
		return
	}
	if p.refused {
		p.IO.Infof("served again after %s", time.Since(p.lostAt).Round(time.Millisecond))
	} else {
		p.IO.Infof("reconnected after %s", time.Since(p.lostAt).Round(time.Millisecond))
	}
	p.lostAt = time.Time{}
}

// redirect reports whether err is a Cluster's MOVED or ASK reply.
func redirect(err error) bool {
	code := replyCode(err)
	return code == "MOVED" || code == "ASK"
}
