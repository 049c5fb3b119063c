package delayq

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// WorkOptions control Work.
type WorkOptions struct {
	// Concurrency is how many messages are handled at once (default 1).
	Concurrency int
	// VT overrides the queue's visibility timeout when HasVT is set. A
	// handler that runs longer than the vt may see its message handled
	// again by another worker.
	VT    time.Duration
	HasVT bool
	// Report, if set, is called after each message is handled (from the
	// handler's goroutine).
	Report func(Outcome)
}

// Outcome is what became of one message under Work.
type Outcome struct {
	Message  Message
	Err      error // the handler's error; nil means the message was acked
	AckErr   error // the ack's error, if the ack failed
	Duration time.Duration
}

// Work receives messages of queue q and calls handle for each, up to
// Concurrency at a time, acking a message when handle returns nil and
// leaving it to come back after its visibility timeout otherwise. It waits
// for messages as Receive with Wait does. When ctx is cancelled it takes no
// more messages, waits for the running handlers (which get a context that
// is not cancelled) and returns nil.
func (c *Client) Work(ctx context.Context, q string, opt WorkOptions, handle func(context.Context, Message) error) error {
	if err := CheckName(q); err != nil {
		return err
	}
	n := opt.Concurrency
	if n == 0 {
		n = 1
	}
	if n < 0 {
		return fmt.Errorf("concurrency %d: must be positive: %w", n, ErrInvalidValue)
	}
	ro := ReceiveOptions{N: 1, VT: opt.VT, HasVT: opt.HasVT, Wait: time.Minute}
	if err := ro.check(); err != nil {
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
		r, err := c.Receive(ctx, q, ro)
		if ctx.Err() != nil && (err != nil || len(r.Messages) == 0) {
			return nil
		}
		if err != nil {
			<-slots
			return err
		}
		if len(r.Messages) == 0 {
			<-slots
			continue
		}
		m := r.Messages[0]
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			start := time.Now()
			o := Outcome{Message: m}
			o.Err = handle(keep, m)
			if o.Err == nil {
				_, o.AckErr = c.Ack(keep, q, m.ID)
			}
			o.Duration = time.Since(start)
			if opt.Report != nil {
				opt.Report(o)
			}
		}()
	}
}
