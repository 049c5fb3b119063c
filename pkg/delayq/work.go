package delayq

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// handler's goroutine), one call at a time, so that it may count
	// without a lock of its own.
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
	// UntilEmpty makes Work return once no message is ready and none of
	// its handlers is running (a drain: it does not wait for delayed
	// messages, or for failed ones to come back).
	UntilEmpty bool
	// MaxJobs, when positive, makes Work return after it has received that
	// many messages and their handlers have returned.
	MaxJobs int
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
// Batches: Work receives as many messages as it has free slots in one
// call, and while its handlers are quick (under 50 ms on average) keeps
// twice Concurrency (at least 4, at most 100) more in hand, refilled when
// half are gone, so that a slot that frees starts its next message
// without waiting for a round trip. It acks in one call the handlers that
// finished while the previous ack was on its way (while handlers are
// quick, an ack waits up to 2 ms for others). A message received ahead is
// leased from the moment it is received: its lease is renewed while it
// waits for a slot as while its handler runs.
//
// Leases: while a handler runs, Work renews its message's visibility
// timeout (ChangeVisibility, by receipt) every Heartbeat, so the message is not
// delivered again however long the handler takes. If the lease cannot be
// renewed (the server unreachable past five sixths of the lease, or the
// message no longer held) the handler's context is cancelled with
// ErrLeaseLost before the lease ends; a handler must then return promptly,
// as it may otherwise run at the same time as another delivery of its
// message. Work never acks a handler whose context it cancelled. A message
// whose lease is lost while it waits for a slot is not handled: its Outcome
// says so (Err wraps ErrLeaseLost).
//
// A handler that must not run longer than some time bounds itself, as Go
// code does: context.WithTimeout, or WithTimeoutCause to tell the cause
// apart; returning an error leaves the message to come back.
//
// When ctx is cancelled Work takes no more messages, makes those it
// received ahead visible again at once (by receipt), waits for the running
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
	if opt.MaxJobs < 0 {
		return fmt.Errorf("max jobs %d: must not be negative: %w", opt.MaxJobs, errInvalidValue)
	}
	ro := ReceiveOptions{N: 1, VT: opt.VT, Wait: time.Minute, Moved: opt.Moved, DeadLetterMissing: opt.DeadLetterMissing}
	if opt.UntilEmpty {
		ro.Wait = 0 // an empty receive ends the drain; it must not wait
	}
	if _, err := ro.check(); err != nil {
		return err
	}
	// Fail early on a missing queue.
	if _, err := c.Stats(ctx, q); err != nil {
		return err
	}
	keep := context.WithoutCancel(ctx)
	acks := c.startAcker(keep, q)
	var wg sync.WaitGroup
	var reporting sync.Mutex // one Report at a time
	defer acks.close()       // after the handlers (deferred calls run last first)
	defer wg.Wait()
	type receiveResult struct {
		r   *received
		err error
	}
	got := make(chan receiveResult, 1)
	freed := make(chan time.Duration, n) // a handler returned, after so long
	var (
		held      []*leased           // received, waiting for a slot
		running   int                 // handlers that have not returned
		taken     int                 // messages received
		receiving bool                // a receive is on its way (one at a time)
		idleSent  bool                // no handler ran while it was
		sawEmpty  bool                // --until-empty: look again once all is done
		failed    error               // a receive failed: end once all is done
		avg       = time.Duration(-1) // mean handler time, once known
		ackTarget = 1
	)
	done, stopping := ctx.Done(), false // done is nil once stopping
	for {
		for running < n && len(held) > 0 {
			l := held[0]
			held = held[1:]
			running++
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := c.handleOne(l, handle, acks, func(d time.Duration) { freed <- d })
				if opt.Report != nil {
					reporting.Lock()
					opt.Report(o)
					reporting.Unlock()
				}
			}()
		}
		if !receiving && failed == nil && !stopping {
			if sawEmpty && running == 0 && len(held) == 0 {
				// A handler may have failed, or pushed, meanwhile: look
				// again once they are all done, acks included.
				wg.Wait()
				sawEmpty = false
			}
			// A message for each free slot and, while handlers are quick,
			// more in hand: received in batches of at least half the
			// look-ahead, when the hand is down to half.
			free, ahead := n-running, 0
			if quick := avg >= 0 && avg < aheadBelow; quick {
				ahead = lookAhead(n)
			}
			if target := max(ahead/2, 1); target != ackTarget {
				ackTarget = target
				acks.batch(target)
			}
			want := 0
			if len(held) < free || len(held) <= ahead/2 {
				want = free + ahead - len(held)
			}
			if opt.MaxJobs > 0 {
				want = min(want, opt.MaxJobs-taken)
			}
			if want > 0 && !sawEmpty {
				receiving, idleSent = true, running == 0
				ro.N = want
				go func(ro ReceiveOptions) {
					r, err := c.receive(ctx, q, ro)
					got <- receiveResult{r, err}
				}(ro)
			}
		}
		if !receiving && running == 0 && len(held) == 0 {
			switch {
			case stopping:
				return nil
			case failed != nil:
				return failed // after the acks (wg.Wait)
			case opt.MaxJobs > 0 && taken >= opt.MaxJobs:
				return nil // after the handlers return (wg.Wait)
			}
		}
		select {
		case d := <-freed:
			running--
			if avg < 0 {
				avg = d
			} else {
				avg += (d - avg) / 8
			}
		case res := <-got:
			receiving = false
			switch {
			case stopping:
				if res.err == nil {
					c.release(keep, q, res.r.messages)
				}
				continue
			case res.err != nil:
				failed = res.err
				continue
			}
			if opt.Received != nil {
				opt.Received()
			}
			if len(res.r.messages) == 0 {
				if opt.UntilEmpty {
					if idleSent && running == 0 && len(held) == 0 {
						return nil // nothing ready, no handler running
					}
					sawEmpty = true
				}
				continue
			}
			for _, m := range res.r.messages {
				taken++
				held = append(held, c.lease(keep, q, opt, m, res.r.sentAt, m.VisibleAt.Sub(res.r.now)))
			}
		case <-done:
			// Stop taking messages; those received ahead go back.
			done, stopping = nil, true
			ms := make([]Message, 0, len(held))
			for _, l := range held {
				l.end()
				ms = append(ms, l.m)
			}
			held = nil
			c.release(keep, q, ms)
		}
	}
}

// aheadBelow is the mean handler time under which Work receives ahead of
// its free slots and gathers acks: there a round trip is a notable part of
// each job, and a message received ahead waits a few jobs for its slot.
const aheadBelow = 50 * time.Millisecond

// lookAhead is how many messages Work keeps in hand beyond its free slots
// while handlers are quick, with Concurrency n: enough that a receive
// every few jobs, of half of them, keeps every slot busy.
func lookAhead(n int) int { return min(max(2*n, 4), maxBatch) }

// ackWait is the longest a quick handler's ack waits for others to go in
// the same call (and never more than a sixth of its lease, which its
// renewals left at least two thirds of).
const ackWait = 2 * time.Millisecond

// leased is a message Work received, with the lease it keeps renewing
// from then until its handler returns.
type leased struct {
	m        Message
	lease    time.Duration
	ctx      context.Context // the handler's: cancelled when the lease is lost
	cancel   context.CancelCauseFunc
	stop     context.CancelFunc // ends the renewals
	renewals chan int
}

// lease starts renewing m's lease of length lease, which began no earlier
// than claimed (local clock).
func (c *Client) lease(ctx context.Context, q string, opt WorkOptions, m Message, claimed time.Time, lease time.Duration) *leased {
	hctx, cancel := context.WithCancelCause(ctx)
	rctx, stop := context.WithCancel(ctx)
	l := &leased{m: m, lease: lease, ctx: hctx, cancel: cancel, stop: stop, renewals: make(chan int, 1)}
	go func() {
		l.renewals <- c.renew(rctx, q, opt, m, claimed, lease, cancel)
	}()
	return l
}

// end stops l's renewals, then cancels its handler's context, and returns
// how many renewals there were.
func (l *leased) end() int {
	l.stop()
	defer l.cancel(nil)
	return <-l.renewals
}

// release makes messages received but never handled visible again at
// once, by receipt, so that they are not hidden for the vt unseen; if it
// fails they come back when their vt ends.
func (c *Client) release(ctx context.Context, q string, ms []Message) {
	if len(ms) == 0 {
		return
	}
	refs := make([]string, len(ms))
	for i, m := range ms {
		refs[i] = m.Receipt
	}
	_, _ = c.Retry(ctx, q, 0, refs...)
}

// handleOne runs handle for l's message, unless its lease was lost while
// it waited for a slot; then it queues a success's ack, calls freed with
// how long that took, and waits for the ack.
func (c *Client) handleOne(l *leased, handle func(context.Context, Message) error, acks *acker, freed func(time.Duration)) Outcome {
	start := time.Now()
	var herr error
	if l.ctx.Err() == nil {
		herr = handle(l.ctx, l.m)
	}
	cause := context.Cause(l.ctx) // what ended the handler, if Work did
	l.stop()
	o := Outcome{Message: l.m, Renewals: <-l.renewals}
	switch {
	case cause != nil && herr != nil && herr != cause && !errors.Is(herr, context.Canceled):
		o.Err = fmt.Errorf("%w (handler: %v)", cause, herr)
	case cause != nil:
		o.Err = cause
	default:
		o.Err = herr
	}
	var acked <-chan error
	if o.Err == nil {
		acked = acks.add(l.m, min(ackWait, l.lease/6))
	}
	// The handler's context ends once its ack is queued: a handler (a
	// test) that waits for that knows the ack goes with the next call.
	l.cancel(nil)
	freed(time.Since(start))
	if acked != nil {
		o.AckErr = <-acked
		o.Acked = o.AckErr == nil
	}
	o.Duration = time.Since(start)
	return o
}

// acker acks by receipt the messages whose handlers succeeded, in one
// call for all those queued while the previous call was on its way (at
// most maxBatch: one script call, so that a call's error is each of its
// messages' answer, as it was with an ack each).
type acker struct {
	mu      sync.Mutex
	pending []ackRequest
	target  int // a call waits for this many, up to the first's due time
	closed  bool
	wake    chan struct{} // capacity 1: something was queued, or closed
	done    chan struct{}
}

type ackRequest struct {
	m     Message
	due   time.Time // when it must go, however few wait with it
	reply chan error
}

func (c *Client) startAcker(ctx context.Context, q string) *acker {
	a := &acker{target: 1, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for {
			a.mu.Lock()
			var wait time.Duration
			if len(a.pending) > 0 && len(a.pending) < a.target && !a.closed {
				wait = time.Until(a.pending[0].due)
			}
			var batch []ackRequest
			if wait <= 0 {
				k := min(len(a.pending), maxBatch)
				batch = a.pending[:k:k]
				a.pending = a.pending[k:]
			}
			closed := a.closed
			a.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					return
				}
				if wait > 0 {
					timer.Reset(wait)
					select {
					case <-a.wake:
					case <-timer.C:
					}
					timer.Stop()
				} else {
					<-a.wake
				}
				continue
			}
			refs := make([]string, len(batch))
			for i, r := range batch {
				refs[i] = r.m.Receipt
			}
			res, err := c.Ack(ctx, q, refs...)
			for _, r := range batch {
				r.reply <- ackOutcome(res, err, r.m)
			}
		}
	}()
	return a
}

// ackOutcome is what an Ack that answered res and err means for m.
func ackOutcome(res *AckResult, err error, m Message) error {
	switch {
	case res == nil:
		return err
	case slices.Contains(res.Stale, m.Receipt):
		return fmt.Errorf("receipt %s: %w", m.Receipt, ErrStaleReceipt)
	case slices.Contains(res.Missing, m.Receipt):
		return fmt.Errorf("message %s: %w", m.ID, ErrMessageNotFound)
	}
	return nil
}

// add queues m's ack, to go within wait; its answer comes on the channel
// returned.
func (a *acker) add(m Message, wait time.Duration) <-chan error {
	reply := make(chan error, 1)
	a.mu.Lock()
	a.pending = append(a.pending, ackRequest{m, time.Now().Add(wait), reply})
	a.mu.Unlock()
	a.signal()
	return reply
}

// batch sets how many acks a call waits for (within their due times).
func (a *acker) batch(n int) {
	a.mu.Lock()
	a.target = n
	a.mu.Unlock()
}

func (a *acker) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// close ends the acker once what was queued has been answered.
func (a *acker) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.signal()
	<-a.done
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
