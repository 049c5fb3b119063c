package delayq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// workOne runs Work until the first outcome and returns it.
func workOne(t *testing.T, c *delayq.Client, opt delayq.WorkOptions, handle func(context.Context, delayq.Message) error) delayq.Outcome {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan delayq.Outcome, 1)
	opt.Report = func(o delayq.Outcome) {
		select {
		case got <- o:
		default:
		}
		cancel()
	}
	done := make(chan error, 1)
	go func() { done <- c.Work(ctx, "q", opt, handle) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("work did not finish")
	}
	select {
	case o := <-got:
		return o
	default:
		t.Fatal("no outcome")
		return delayq.Outcome{}
	}
}

// A handler that runs twice its vt keeps its message: the lease is
// renewed, so no other worker receives it meanwhile, and it is acked by
// receipt.
func TestWorkLease(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		mustPush(t, c, "q", "slow", delayq.PushOptions{})
		// A rival consumer polls all the while the handler runs: it must
		// never get the message.
		stop := make(chan struct{})
		var rival sync.WaitGroup
		stolen := 0
		// A 1.5s vt: a renewal must come back within 5/6 of it, which a
		// -race run on a loaded 2-core machine missed with 500ms.
		o := workOne(t, c, delayq.WorkOptions{VT: 1500 * time.Millisecond}, func(ctx context.Context, m delayq.Message) error {
			rival.Add(1)
			go func() {
				defer rival.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					r, err := c.Receive(context.Background(), "q", delayq.ReceiveOptions{Wait: 100 * time.Millisecond})
					if err == nil {
						stolen += len(r)
					}
				}
			}()
			for i := 0; i < 3; i++ {
				time.Sleep(time.Second) // the handler's work: twice the vt in all
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
			}
			return nil
		})
		close(stop)
		rival.Wait()
		if o.Err != nil || !o.Acked || o.Message.RC != 1 || o.Renewals < 2 {
			t.Fatalf("outcome %+v", o)
		}
		if stolen != 0 {
			t.Fatalf("a rival received the leased message %d times", stolen)
		}
		t.Logf("3s handler, 1.5s vt: %d renewals", o.Renewals)
	})
}

// A handler that bounds itself with a timeout fails with it: the message
// is not acked and comes back.
func TestWorkJobTimeout(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		mustPush(t, c, "q", "stuck", delayq.PushOptions{})
		o := workOne(t, c, delayq.WorkOptions{VT: 2 * time.Second},
			func(ctx context.Context, m delayq.Message) error {
				ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
				<-ctx.Done()
				return ctx.Err()
			})
		if !errors.Is(o.Err, context.DeadlineExceeded) || o.Acked {
			t.Fatalf("outcome %+v", o)
		}
		r, err := c.Receive(context.Background(), "q", delayq.ReceiveOptions{Wait: 10 * time.Second})
		if err != nil || len(r) != 1 || r[0].RC != 2 {
			t.Fatalf("after the timeout: %+v %v", r, err)
		}
	})
}

// When the server stops answering, the handler is cancelled with
// ErrLeaseLost before its lease ends, and nothing is acked.
func TestWorkLeaseLost(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		mustCreate(t, newClient(t, b), "q", delayq.Attributes{})
		c, p := proxied(t, b, time.Second)
		mustPush(t, c, "q", "cut off", delayq.PushOptions{})
		o := workOne(t, c, delayq.WorkOptions{VT: 600 * time.Millisecond}, func(ctx context.Context, m delayq.Message) error {
			p.Blackhole(true)
			<-ctx.Done()
			p.Blackhole(false)
			return context.Cause(ctx)
		})
		if !errors.Is(o.Err, delayq.ErrLeaseLost) || o.Acked {
			t.Fatalf("outcome %+v", o)
		}
		t.Logf("lease lost: %v after %v", o.Err, o.Duration)
		// And a message taken by someone else is a lost lease at once.
		c2 := newClient(t, b)
		// (A 1.5s vt: a loaded machine may not lose the lease for slowness.)
		o = workOne(t, c2, delayq.WorkOptions{VT: 1500 * time.Millisecond}, func(ctx context.Context, m delayq.Message) error {
			bg := context.Background()
			if _, err := c2.ChangeVisibility(bg, "q", m.ID, 0); err != nil {
				return err
			}
			if r, err := c2.Receive(bg, "q", delayq.ReceiveOptions{Wait: 10 * time.Second}); err != nil || len(r) != 1 {
				return errors.New("no second delivery")
			}
			<-ctx.Done()
			return nil
		})
		if !errors.Is(o.Err, delayq.ErrLeaseLost) || !errors.Is(o.Err, delayq.ErrStaleReceipt) || o.Acked {
			t.Fatalf("outcome %+v", o)
		}
	})
}
