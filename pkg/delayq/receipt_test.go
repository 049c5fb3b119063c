package delayq_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// A receipt names one delivery: once the message is received again, ack,
// retry and extend with the old receipt change nothing and say so; with the
// new receipt, or a bare id (RSMQ's semantics), they work.
func TestReceipts(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		id := mustPush(t, c, "q", "hello", delayq.PushOptions{})
		recv := func() delayq.Message {
			t.Helper()
			r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: time.Hour})
			if err != nil || len(r) != 1 {
				t.Fatalf("receive: %+v %v", r, err)
			}
			return r[0]
		}
		m1 := recv()
		if want := fmt.Sprintf("%s.1.%d", id, m1.FR.UnixMilli()); m1.Receipt != want {
			t.Fatalf("receipt %q, want %q", m1.Receipt, want)
		}
		if g, err := c.Get(ctx, "q", m1.Receipt); err != nil || g.ID != id {
			t.Fatalf("get by receipt: %+v, %v", g, err)
		}
		// A renewal by receipt keeps it hidden.
		at, err := c.ChangeVisibility(ctx, "q", m1.Receipt, 2*time.Hour)
		if err != nil || at.Before(m1.VisibleAt) {
			t.Fatalf("extend: %v %v", at, err)
		}
		// The lease ends (retry now), someone else receives it: m1 is stale.
		if _, err := c.ChangeVisibility(ctx, "q", m1.Receipt, 0); err != nil {
			t.Fatal(err)
		}
		m2 := recv()
		if m2.RC != 2 || m2.Receipt == m1.Receipt {
			t.Fatalf("second delivery %+v", m2)
		}
		score := b.Client.ZScore(ctx, b.Prefix+"rsmq:q", id).Val()
		for name, op := range map[string]func() error{
			"ack":    func() error { _, err := c.Ack(ctx, "q", m1.Receipt); return err },
			"retry":  func() error { _, err := c.ChangeVisibility(ctx, "q", m1.Receipt, 0); return err },
			"extend": func() error { _, err := c.ChangeVisibility(ctx, "q", m1.Receipt, time.Second); return err },
		} {
			if err := op(); !errors.Is(err, delayq.ErrStaleReceipt) {
				t.Fatalf("%s with a stale receipt: %v", name, err)
			}
		}
		if s := b.Client.ZScore(ctx, b.Prefix+"rsmq:q", id).Val(); s != score {
			t.Fatalf("stale receipts moved the message: %v -> %v", score, s)
		}
		r, err := c.Ack(ctx, "q", m1.Receipt, m2.Receipt)
		if !errors.Is(err, delayq.ErrStaleReceipt) || r.Acked != 1 || len(r.Stale) != 1 || r.Stale[0] != m1.Receipt || len(r.Missing) != 0 {
			t.Fatalf("ack old and new: %+v %v", r, err)
		}
		r, err = c.Ack(ctx, "q", m2.Receipt)
		if !errors.Is(err, delayq.ErrMessageNotFound) || r.Acked != 0 || len(r.Missing) != 1 {
			t.Fatalf("ack after ack: %+v %v", r, err)
		}
		// A bare id still works as in RSMQ, whatever the delivery.
		id = mustPush(t, c, "q", "again", delayq.PushOptions{})
		recv()
		if _, err := c.ChangeVisibility(ctx, "q", id, 0); err != nil {
			t.Fatal(err)
		}
		recv()
		if r, err := c.Ack(ctx, "q", id); err != nil || r.Acked != 1 {
			t.Fatalf("ack by id: %+v %v", r, err)
		}
		// Malformed receipts are the caller's mistake, before any call.
		for _, bad := range []string{id + ".x.1", id + ".1", id + ".0.5", id + ".1.-5", "short.1.1", id + ".01.5"} {
			if _, err := c.Ack(ctx, "q", bad); !errors.Is(err, delayq.ErrInvalid) || !strings.Contains(err.Error(), "receipt") {
				t.Fatalf("ack %q: %v", bad, err)
			}
		}
	})
}
