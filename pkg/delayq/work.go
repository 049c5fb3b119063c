package delayq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrLeaseLost is the error a handler's context is cancelled with
// (context.Cause), and that Outcome.Err wraps, when Work could not renew
// its lease before it ended (the server was unreachable), or the message
// was received by someone else or deleted meanwhile.
var ErrLeaseLost = errors.New("lease lost")

// WorkOptions control Work.
type WorkOptions struct {
	// Concurrency is how many messages are handled at once (default 1).
	Concurrency int
	// VT overrides the queue's visibility timeout (0: the queue's; -1: 0).
	// It is the lease: Work renews it while the handler runs, so a handler
	// may run longer than the vt; a worker that dies stops renewing, and
	// its message comes back at most a vt later.
	VT time.Duration
	// Heartbeat is how often a running handler's lease is renewed: a third
	// of the vt by default, and never less often.
	Heartbeat time.Duration
	// Report, if set, is called after each message is handled (from the
	// handler's goroutine).
	Report func(Outcome)
	// Received, if set, is called after each receive that reached the
	// server (with or without messages): a caller that reconnects after
	// errors learns that the server answers again.
	Received func()
	// Moved, if set, is called when a receive moved messages to the
	// dead-letter queue (received too often), with how many and where to.
	Moved func(n int, deadLetter string)
	// DeadLetterMissing, if set, is called when a receive delivered a
	// message received too often again because its dead-letter queue
	// deadLetter does not exist (as ReceiveOptions.DeadLetterMissing).
	DeadLetterMissing func(deadLetter string)
}

// Outcome is what became of one message under Work.
type Outcome struct {
	Message Message
	// Err is the handler's error, or wraps ErrLeaseLost when Work ended
	// the handler; nil means the handler succeeded.
	Err error
	// AckErr is the ack's error, if the ack (by receipt) failed:
	// ErrStaleReceipt when the message was received again meanwhile.
	AckErr error
	// Acked: the message was deleted.
	Acked    bool
	Duration time.Duration
	// Renewals counts the lease renewals while the handler ran.
	Renewals int
}

// Work receives messages of queue q and calls handle for each, up to
// Concurrency at a time, acking a message (by its receipt) when handle
// returns nil and leaving it to come back after its visibility timeout
// otherwise. It waits for messages as Receive with Wait does.
//
// Leases: while a handler runs, Work renews its message's visibility
// timeout (ChangeVisibility, by receipt) every Heartbeat, so the message is not
// delivered again however long the handler takes. If the lease cannot be
// renewed (the server unreachable past five sixths of the lease, or the
// message no longer held) the handler's context is cancelled with
// ErrLeaseLost before the lease ends; a handler must then return promptly,
// as it may otherwise run at the same time as another delivery of its
// message. Work never acks a handler whose context it cancelled.
//
// A handler that must not run longer than some time bounds itself, as Go
// code does: context.WithTimeout, or WithTimeoutCause to tell the cause
// apart; returning an error leaves the message to come back.
//
// When ctx is cancelled Work takes no more messages, waits for the running
// handlers (whose contexts are not cancelled by it, and whose leases it
// keeps renewing) and returns nil.
func (c *Client) Work(ctx context.Context, q string, opt WorkOptions, handle func(context.Context, Message) error) error {
	if err := CheckName(q); err != nil {
		return err
	}
	n := opt.Concurrency
	if n == 0 {
		n = 1
	}
	if n < 0 {
		return fmt.Errorf("concurrency %d: must be positive: %w", n, errInvalidValue)
	}
	if opt.Heartbeat < 0 {
		return fmt.Errorf("heartbeat must not be negative: %w", errInvalidValue)
	}
	ro := ReceiveOptions{N: 1, VT: opt.VT, Wait: time.Minute, Moved: opt.Moved, DeadLetterMissing: opt.DeadLetterMissing}
	if _, err := ro.check(); err != nil {
		return err
	}
	// Fail early on a missing queue.
	if _, err := c.Stats(ctx, q); err != nil {
		return err
	}
	keep := context.WithoutCancel(ctx)
	slots := make(chan struct{}, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		r, err := c.receive(ctx, q, ro)
		if ctx.Err() != nil && (err != nil || len(r.messages) == 0) {
			return nil
		}
		if err != nil {
			<-slots
			return err
		}
		if opt.Received != nil {
			opt.Received()
		}
		if len(r.messages) == 0 {
			<-slots
			continue
		}
		m := r.messages[0]
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			o := c.handleOne(keep, q, opt, m, r.sentAt, m.VisibleAt.Sub(r.now), handle)
			if opt.Report != nil {
				opt.Report(o)
			}
		}()
	}
}

// handleOne runs handle for m under a lease of length lease that began no
// earlier than claimed (local clock), renewing it until handle returns.
func (c *Client) handleOne(ctx context.Context, q string, opt WorkOptions, m Message, claimed time.Time, lease time.Duration, handle func(context.Context, Message) error) Outcome {
	start := time.Now()
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rctx, stop := context.WithCancel(ctx)
	renewals := make(chan int, 1)
	go func() {
		renewals <- c.renew(rctx, q, opt, m, claimed, lease, cancel)
	}()
	herr := handle(hctx, m)
	cause := context.Cause(hctx) // what ended the handler, if Work did
	stop()
	o := Outcome{Message: m, Renewals: <-renewals}
	switch {
	case cause != nil && herr != nil && herr != cause && !errors.Is(herr, context.Canceled):
		o.Err = fmt.Errorf("%w (handler: %v)", cause, herr)
	case cause != nil:
		o.Err = cause
	default:
		o.Err = herr
	}
	if o.Err == nil {
		r, err := c.Ack(ctx, q, m.Receipt)
		switch {
		case r == nil:
			o.AckErr = err
		case len(r.Stale) > 0:
			o.AckErr = fmt.Errorf("receipt %s: %w", m.Receipt, ErrStaleReceipt)
		case len(r.Missing) > 0:
			o.AckErr = fmt.Errorf("message %s: %w", m.ID, ErrMessageNotFound)
		default:
			o.Acked = true
		}
	}
	o.Duration = time.Since(start)
	return o
}

// renew keeps m's lease until ctx is done, and returns how many times it
// renewed it. The lease is taken to end lease after the local time the
// request that set it was sent (the server's end is no earlier). It renews
// a third of the way in (or every opt.Heartbeat if sooner), retries failed
// renewals every tenth of the lease, and when five sixths of the lease
// have passed unrenewed, or the message is no longer held, cancels the
// handler with ErrLeaseLost.
func (c *Client) renew(ctx context.Context, q string, opt WorkOptions, m Message, claimed time.Time, lease time.Duration, cancel context.CancelCauseFunc) int {
	if lease < 3*time.Millisecond {
		return 0 // no lease to speak of: vt 0 makes the message visible at once
	}
	every := lease / 3
	if opt.Heartbeat > 0 && opt.Heartbeat < every {
		every = opt.Heartbeat
	}
	margin := lease / 6
	ends := claimed.Add(lease)
	renewed := claimed
	count := 0
	timer := time.NewTimer(time.Until(renewed.Add(every)))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return count
		case <-timer.C:
		}
		giveUp := ends.Add(-margin)
		if !time.Now().Before(giveUp) {
			cancel(fmt.Errorf("%w: not renewed within %s of a %s lease", ErrLeaseLost, lease-margin, lease))
			return count
		}
		sent := time.Now()
		rctx, stop := context.WithDeadline(ctx, giveUp)
		err := promptly(rctx, func(ctx context.Context) error {
			_, err := c.ChangeVisibility(ctx, q, m.Receipt, lease)
			return err
		})
		stop()
		switch {
		case ctx.Err() != nil:
			return count
		case err == nil:
			count++
			renewed, ends = sent, sent.Add(lease)
			timer.Reset(time.Until(renewed.Add(every)))
		case errors.Is(err, ErrStaleReceipt), errors.Is(err, ErrMessageNotFound), errors.Is(err, ErrQueueNotFound):
			cancel(fmt.Errorf("%w: %w", ErrLeaseLost, err))
			return count
		default:
			// Unreachable or slow: try again soon, until giveUp.
			timer.Reset(min(lease/10, max(time.Until(giveUp), 0)))
		}
	}
}

// promptly runs f and returns its error, or ctx's as soon as ctx is done
// (f then goes on in the background, with a context that is not
// cancelled, until the client's own timeouts end it).
func promptly(ctx context.Context, f func(context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- f(context.WithoutCancel(ctx)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
