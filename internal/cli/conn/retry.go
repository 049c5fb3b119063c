package conn

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Some error replies say that the server did not run the command and that
// the same command may succeed a moment later: the server is loading its
// data (LOADING); on a Cluster, the key lives elsewhere (MOVED), or is being
// moved there (ASK), a multi-key command's keys are split between two nodes
// while their slot moves (TRYAGAIN), or the cluster is failing over
// (CLUSTERDOWN); behind Sentinel or on a Cluster, the node is no longer the
// master (READONLY), or a replica lost its master (MASTERDOWN). Sending the
// command again is safe, since it was not run; a lost reply is not an
// answer and is never retried (see ReplyLost).
//
// go-redis (v9.23) follows MOVED and ASK itself, at most MaxRedirects (3)
// times per command, and on a Cluster retries TRYAGAIN and CLUSTERDOWN
// within that same budget, with a few ms of backoff: a slot that stays split
// for longer than that (a migration moving its keys one by one) turns into
// a TRYAGAIN or ASK error. retryHook goes on for up to --timeout.

// retryable is the kind of client: which refusals mean "not run, try again".
type retryable struct{ cluster, failover bool }

// notRun reports whether err is a refusal, from a server answering this kind
// of client, of a command it did not run and may run a moment later; a
// write that failed (the connection was closed under it); or a new
// connection that failed before the server's first reply (refused, or
// closed after accepting) when other connections of the client have had
// replies: the server is restarting, or a proxy in front of it lost it,
// and the command never went out. Before any reply at all, a failure says
// more likely that --url is wrong (nothing there, or TLS expected): it ends
// the command at once, with its hint.
func (r retryable) notRun(err error) bool {
	var ci *ConnInitError
	if errors.As(err, &ci) {
		return ci.Spoke
	}
	if unsent(err) {
		return true
	}
	switch replyCode(err) {
	case "LOADING":
		return true
	case "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN":
		// On a single server, these say that --cluster is missing
		// (a hint explains): retrying would not help.
		return r.cluster
	case "READONLY", "MASTERDOWN":
		// A single server that is a replica stays one.
		return r.cluster || r.failover
	}
	return false
}

// unsent reports whether err is a failure to write the command: the
// connection was already closed (a restart), the write wrote nothing the
// server could run, and ReplyLost says the same.
func unsent(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "write"
}

// replyCode is the first word of err when err is the server's error reply
// (MOVED, TRYAGAIN, WRONGTYPE...), else "".
func replyCode(err error) string {
	var re redis.Error
	if err == nil || !errors.As(err, &re) {
		return ""
	}
	code, _, _ := strings.Cut(re.Error(), " ")
	return code
}

// Backoff between tries of a refused command: full jitter around a wait
// that doubles from minRetryWait to maxRetryWait.
const (
	minRetryWait = 10 * time.Millisecond
	maxRetryWait = 500 * time.Millisecond
)

// retryHook sends a refused command again (see notRun) with bounded,
// jittered backoff, until it is run, another error comes, or budget (the
// --timeout) has passed since the first try, whichever comes first with
// ctx's deadline. In a pipeline only the refused commands are sent again;
// a transaction (MULTI/EXEC) is left as it is.
type retryHook struct {
	retryable
	budget time.Duration
	// top, when set, is the client's own Process: a command whose
	// connection failed before the server's first reply is sent again
	// through it, from the top, since go-redis (v9.23) answers a second
	// try through next with the first failure, without a new connection.
	top func(context.Context, redis.Cmder) error
}

// nested marks a context whose command retryHook is already retrying.
type nested struct{}

func (h retryHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h retryHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if !h.notRun(err) || ctx.Value(nested{}) != nil {
			return err
		}
		first := err
		b := h.backoff(ctx)
		for h.notRun(err) && b.wait(ctx) {
			var ci *ConnInitError
			if h.top != nil && (errors.As(err, &ci) || unsent(err)) {
				cmd.SetErr(nil)
				err = h.top(context.WithValue(ctx, nested{}, true), cmd)
			} else {
				err = next(ctx, cmd)
			}
		}
		if h.notRun(err) {
			// Still not run: the first failure says why, as it
			// would have without the retries (go-redis unwraps a
			// failed handshake's error once on its way out, which
			// a nested try's error has already been).
			err = first
		}
		cmd.SetErr(err)
		return err
	}
}

func (h retryHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if err == nil || len(cmds) == 0 || cmds[0].Name() == "multi" {
			return err
		}
		var b *backoff
		for {
			var again []redis.Cmder
			for _, c := range cmds {
				if h.notRun(c.Err()) {
					again = append(again, c)
				}
			}
			if len(again) == 0 {
				break
			}
			if b == nil {
				b = h.backoff(ctx)
			}
			if !b.wait(ctx) {
				break
			}
			_ = next(ctx, again)
		}
		for _, c := range cmds {
			if c.Err() != nil {
				return c.Err()
			}
		}
		return nil
	}
}

// backoff is the waits of one command's retries.
type backoff struct {
	next time.Duration
	stop time.Time
}

func (h retryHook) backoff(ctx context.Context) *backoff {
	stop := time.Now().Add(h.budget)
	if d, ok := ctx.Deadline(); ok && d.Before(stop) {
		stop = d
	}
	return &backoff{next: minRetryWait, stop: stop}
}

// wait sleeps before the next try and reports whether to make it: false
// when the wait would end past the budget, or ctx ends first.
func (b *backoff) wait(ctx context.Context) bool {
	d := b.next/2 + rand.N(b.next)
	b.next = min(2*b.next, maxRetryWait)
	if time.Now().Add(d).After(b.stop) {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// lostReply is a failure to read the reply of a command sent to a Cluster
// node: the node may have run it. It hides its cause from errors.Is and
// errors.As on purpose (it has no Unwrap): go-redis's cluster client sends
// a command again after an error it sees as a broken connection or a
// timeout (io.EOF, a reset, a net.Error), on the same node and then on
// another, within MaxRedirects, whatever MaxRetries says; for a write that
// is a second application. An error it does not recognise it returns.
// chatq's own checks (ReplyLost, Transient, the hints) look through it.
type lostReply struct{ err error }

func (e *lostReply) Error() string { return e.err.Error() }

// cause returns the error a lostReply in err's chain hides, or err.
func cause(err error) error {
	var lr *lostReply
	for errors.As(err, &lr) {
		err = lr.err
	}
	return err
}

// lostReplyHook, on each node client of a Cluster, makes a lost reply a
// lostReply, so that the cluster client returns it rather than sending the
// command again. A pipeline's replies lost on a Cluster are sent again
// before any hook sees them: chatq sends only reads and writes that are
// idempotent (ZADD GT, marks that only move forward) in pipelines.
type lostReplyHook struct{}

func (lostReplyHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (lostReplyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if retriedByCluster(err) {
			err = &lostReply{err}
		}
		return err
	}
}

// retriedByCluster reports whether err is a lost reply that go-redis's
// cluster client would answer by sending the command again: not a context
// error, which it returns as it is.
func retriedByCluster(err error) bool {
	return err != nil && !errors.As(err, new(*lostReply)) && ReplyLost(err) &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}

// ProcessPipelineHook covers the ASKING pipeline go-redis sends to follow
// an ASK redirect of a single command.
func (lostReplyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if !retriedByCluster(err) {
			return err
		}
		for _, c := range cmds {
			if retriedByCluster(c.Err()) {
				c.SetErr(&lostReply{c.Err()})
			}
		}
		return &lostReply{err}
	}
}
