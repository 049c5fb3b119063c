package delayq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// receiveWait claims messages, and when none is due sleeps until the next
// one is (by the server's clock: the wait is the difference of two server
// times) or a push is published on the queue's realtime channel, until
// opt.Wait has passed. It subscribes before the claim it sleeps after, so
// a push between that claim and the sleep still wakes it. It sleeps at most
// recheckInterval between claims, in case a notification was lost.
//
// Every read has a deadline, and cancelling ctx returns within moments
// whatever the server does (see claimPrompt).
func (c *Client) receiveWait(ctx context.Context, q string, opt ReceiveOptions, vt string) (*received, error) {
	deadline := time.Now().Add(opt.Wait)
	// When something is due, one round trip and no subscription (which
	// costs a connection of its own).
	res, err := c.claimPrompt(ctx, q, opt, vt)
	if err != nil || len(res.messages) > 0 || res.moved > 0 {
		return res, err
	}
	ps := c.rdb.Subscribe(ctx) // no channel yet: no connection yet
	// Close waits for the lock a blocked Subscribe holds: never wait for it.
	defer func() { go ps.Close() }()
	if err := c.subscribe(ctx, ps, c.channel(q), deadline); err != nil {
		if errors.Is(err, errWaitOver) {
			return res, nil // a slow confirmation ate the wait: nothing was due
		}
		return nil, err
	}
	// With subscriptions: after go-redis re-subscribes on a new connection
	// (the old one died), a push published meanwhile was missed, so the
	// re-subscription wakes the loop to claim again.
	pushes := ps.ChannelWithSubscriptions()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		res, err := c.claimPrompt(ctx, q, opt, vt)
		// A dead-letter move ends the wait too: the caller may want to
		// know, and the queue changed.
		if err != nil || len(res.messages) > 0 || res.moved > 0 {
			return res, err
		}
		sleep := time.Until(deadline)
		if sleep <= 0 {
			return res, nil
		}
		if !res.nextVisible.IsZero() {
			if d := res.nextVisible.Sub(res.exactNow); d < sleep {
				// Due at the start of the NextVisible millisecond; should
				// the timer fire early, the claim finds nothing and sleeps
				// again, for at least 100µs.
				sleep = max(d, 100*time.Microsecond)
			}
		}
		// A notification can be lost with a subscription whose replies
		// stopped (go-redis notices a dead subscription only when a write
		// fails): claim again at least every recheckInterval.
		sleep = min(sleep, recheckInterval)
		timer.Reset(sleep)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-pushes:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
	}
}

// recheckInterval is the longest a wait sleeps without claiming: the safety
// net for a push notification lost on a broken subscription. One claim per
// interval per idle waiter.
const recheckInterval = 5 * time.Second

// defaultReplyTimeout bounds the wait for the SUBSCRIBE confirmation when
// the client's own read timeout is unknown or disabled.
const defaultReplyTimeout = 3 * time.Second

// errWaitOver: the wait ended before the SUBSCRIBE was confirmed.
var errWaitOver = errors.New("wait over")

// subscribe subscribes ps to channel and reads the confirmation, within the
// client's read timeout (defaultReplyTimeout if it has none; past it, an
// error) and at most until the wait's deadline (past it, errWaitOver).
// PubSub.Receive has no deadline of its own, and the new connection's
// handshake reads with the client's read timeout, none at all if it is
// disabled: either hangs forever when a reply never comes. Running them
// aside, subscribe returns when a limit passes or ctx is done; the caller
// then closes the subscription, which ends a blocked confirmation read (a
// handshake that never gets its reply stays blocked until the connection
// dies).
func (c *Client) subscribe(ctx context.Context, ps *redis.PubSub, channel string, deadline time.Time) error {
	limit := defaultReplyTimeout
	if rt := readTimeout(c.rdb); rt > 0 {
		limit = rt
	}
	done := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
		defer cancel()
		err := ps.Subscribe(wctx, channel)
		if err == nil {
			_, err = ps.ReceiveTimeout(wctx, limit)
		}
		done <- err
	}()
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	over := time.NewTimer(time.Until(deadline))
	defer over.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("subscribe to %s: %w", channel, err)
		}
		return nil
	case <-timeout.C:
		// A deadline passed, as a read timeout would say: a caller that
		// retries after timeouts (queue work) retries this too.
		return fmt.Errorf("subscribe to %s: no confirmation within %s: %w", channel, limit, context.DeadlineExceeded)
	case <-over.C:
		return errWaitOver
	case <-ctx.Done():
		return ctx.Err()
	}
}

func readTimeout(rdb redis.UniversalClient) time.Duration {
	switch r := rdb.(type) {
	case *redis.Client:
		return r.Options().ReadTimeout
	case *redis.ClusterClient:
		return r.Options().ReadTimeout
	case *redis.Ring:
		return r.Options().ReadTimeout
	}
	return 0
}

// claimPrompt is claim that returns as soon as ctx is done, even while its
// script is in flight (a reply that never comes would otherwise hold the
// caller for the client's read timeout, or forever without one). The claim
// itself is never interrupted; should it have taken messages after the
// caller left, they are made visible again at once, by receipt, so they are
// not hidden for the vt unseen. A pop is the exception: popped messages
// exist nowhere else, so cancelling waits for the pop's reply (bounded by
// the client's read timeout).
func (c *Client) claimPrompt(ctx context.Context, q string, opt ReceiveOptions, vt string) (*received, error) {
	if opt.Pop {
		return c.claim(context.WithoutCancel(ctx), q, opt, vt)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		res *received
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := c.claim(context.WithoutCancel(ctx), q, opt, vt)
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		go func() {
			r := <-done
			if r.err != nil {
				return
			}
			for _, m := range r.res.messages {
				_, _ = c.ChangeVisibility(context.WithoutCancel(ctx), q, m.Receipt, 0)
			}
		}()
		return nil, ctx.Err()
	}
}
