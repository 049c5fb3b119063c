package delayq

import (
	"context"
	"time"
)

// receiveWait claims messages, and when none is due sleeps until the next
// one is (by the server's clock: the wait is the difference of two server
// times) or a push is published on the queue's realtime channel, until
// opt.Wait has passed. It subscribes before the claim it sleeps after, so
// a push between that claim and the sleep still wakes it. It never polls on a
// fixed tick.
func (c *Client) receiveWait(ctx context.Context, q string, opt ReceiveOptions) (*Received, error) {
	deadline := time.Now().Add(opt.Wait)
	// When something is due, one round trip and no subscription (which
	// costs a connection of its own).
	res, err := c.claim(context.WithoutCancel(ctx), q, opt)
	if err != nil || len(res.Messages) > 0 || res.Moved > 0 {
		return res, err
	}
	ps := c.rdb.Subscribe(ctx, c.Channel(q))
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		return nil, err
	}
	pushes := ps.Channel()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		// Cancelling ctx ends the sleep, never a claim in flight, whose
		// messages would otherwise stay hidden for the vt unseen.
		res, err := c.claim(context.WithoutCancel(ctx), q, opt)
		// A dead-letter move ends the wait too: the caller may want to
		// know, and the queue changed.
		if err != nil || len(res.Messages) > 0 || res.Moved > 0 {
			return res, err
		}
		sleep := time.Until(deadline)
		if sleep <= 0 {
			return res, nil
		}
		if !res.NextVisible.IsZero() {
			if d := res.NextVisible.Sub(res.exactNow); d < sleep {
				// Due at the start of the NextVisible millisecond; should
				// the timer fire early, the claim finds nothing and sleeps
				// again, for at least 100µs.
				sleep = max(d, 100*time.Microsecond)
			}
		}
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
