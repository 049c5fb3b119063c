package delayq_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
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

// Retry takes many ids and receipts, in calls of 100: the selection a peek
// found is released by its receipts, and a message received again since
// the peek (a stale receipt) or acked (missing) stays as it is.
func TestRetryMany(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		for i := range 250 {
			mustPush(t, c, "q", fmt.Sprint("m", i), delayq.PushOptions{})
		}
		for got := 0; got < 250; {
			r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{N: 100, VT: time.Hour})
			if err != nil || len(r) == 0 {
				t.Fatal(r, err)
			}
			got += len(r)
		}
		sel, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 1000, InFlightFor: time.Nanosecond * 1000})
		if err != nil || len(sel) != 250 {
			t.Fatalf("selection: %d %v", len(sel), err)
		}
		var receipts []string
		for _, m := range sel {
			if m.Receipt == "" || m.State != "inflight" {
				t.Fatalf("peeked %+v: no receipt", m)
			}
			receipts = append(receipts, m.Receipt)
		}
		// Since the peek: one was given back and received again (its
		// receipt is stale), one acked (missing).
		if _, err := c.ChangeVisibility(ctx, "q", sel[0].ID, 0); err != nil {
			t.Fatal(err)
		}
		if r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: time.Hour}); err != nil || len(r) != 1 || r[0].ID != sel[0].ID {
			t.Fatal(r, err)
		}
		if _, err := c.Ack(ctx, "q", sel[1].ID); err != nil {
			t.Fatal(err)
		}
		before := b.Client.ZScore(ctx, b.Prefix+"rsmq:q", sel[0].ID).Val()
		r, err := c.Retry(ctx, "q", 0, append(receipts, receipts[5])...)
		if !errors.Is(err, delayq.ErrMessageNotFound) || r.Retried != 248 || len(r.Stale) != 1 || r.Stale[0] != receipts[0] ||
			len(r.Missing) != 1 || r.Missing[0] != receipts[1] || r.Acked != 0 {
			t.Fatalf("retry: %+v %v", r, err)
		}
		if s := b.Client.ZScore(ctx, b.Prefix+"rsmq:q", sel[0].ID).Val(); s != before {
			t.Fatalf("a stale receipt moved its message: %v -> %v", before, s)
		}
		st, err := c.Stats(ctx, "q")
		if err != nil || st.Ready != 248 || st.InFlight != 1 {
			t.Fatalf("after retry: %+v %v", st, err)
		}
		checkIndex(t, b, "q")
		// The receive counts stay; a delay keeps them hidden, by bare ids too.
		if g, err := c.Get(ctx, "q", sel[2].ID); err != nil || g.RC != 1 || g.State != "ready" {
			t.Fatalf("retried: %+v %v", g, err)
		}
		r, err = c.Retry(ctx, "q", time.Hour, sel[2].ID, sel[3].ID)
		if err != nil || r.Retried != 2 || r.VisibleAt.Before(time.Now().Add(50*time.Minute)) {
			t.Fatalf("retry with a delay: %+v %v", r, err)
		}
		if g, err := c.Get(ctx, "q", sel[3].ID); err != nil || g.State != "inflight" || g.VisibleAt.Sub(g.Now) < 59*time.Minute {
			t.Fatalf("retried for an hour: %+v %v", g, err)
		}
		checkIndex(t, b, "q")
		// The caller's mistakes change nothing.
		for name, err := range map[string]error{
			"negative delay": errOf(c.Retry(ctx, "q", -time.Second, sel[2].ID)),
			"bad receipt":    errOf(c.Retry(ctx, "q", 0, sel[2].ID, "x.1.1")),
			"bad queue":      errOf(c.Retry(ctx, "no queue", 0, sel[2].ID)),
		} {
			if !errors.Is(err, delayq.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if r, err := c.Retry(ctx, "missing", 0, sel[2].ID); !errors.Is(err, delayq.ErrQueueNotFound) || r != nil {
			t.Errorf("missing queue: %+v %v", r, err)
		}
		if g, err := c.Get(ctx, "q", sel[2].ID); err != nil || g.State != "inflight" {
			t.Fatalf("after refused retries: %+v %v", g, err)
		}
	})
}

// A message imported with a receive count but no first receive gets one
// at its next receive, so that the receipt that receive hands out acks it.
func TestReceiptAfterImportWithoutFR(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		id := "0000000000imp0000000000000000001"
		if r, err := c.Import(ctx, "q", seq([]delayq.Message{{ID: id, Body: "x", VisibleAt: time.UnixMilli(1), RC: 1}})); err != nil || r.Imported != 1 {
			t.Fatal(r, err)
		}
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: time.Hour})
		if err != nil || len(r) != 1 || r[0].RC != 2 || r[0].FR.IsZero() {
			t.Fatalf("receive: %+v %v", r, err)
		}
		if res, err := c.Ack(ctx, "q", r[0].Receipt); err != nil || res.Acked != 1 {
			t.Fatalf("ack by the receipt: %+v %v", res, err)
		}
	})
}
