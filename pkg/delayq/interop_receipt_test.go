package delayq_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// Receipts live in RSMQ's own fields: a receive by rsmq makes chatq's
// receipt stale, a receipt formed from what rsmq's receive returned (id,
// rc, fr) acks, and rsmq's bare-id calls keep working on chatq's messages.
func TestInteropReceipts(t *testing.T) {
	b := redistest.Real(t)
	rs := needRSMQ(t, b)
	ctx := context.Background()
	c := newClient(t, b)
	mustCreate(t, c, "receipts", delayq.Attributes{})
	id := mustPush(t, c, "receipts", "shared", delayq.PushOptions{})
	r, err := c.Receive(ctx, "receipts", delayq.ReceiveOptions{VT: time.Hour})
	if err != nil || len(r) != 1 {
		t.Fatalf("receive: %+v %v", r, err)
	}
	mine := r[0].Receipt
	// rsmq gives it back (by id) and receives it: chatq's receipt is stale.
	if e := rs.one("changeMessageVisibility", map[string]any{"qname": "receipts", "id": id, "vt": 0}, nil); e != "" {
		t.Fatal(e)
	}
	var m rsmqMessage
	if e := rs.one("receiveMessage", map[string]any{"qname": "receipts", "vt": 3600}, &m); e != "" || m.ID != id || m.RC != 2 {
		t.Fatalf("rsmq receive: %+v %s", m, e)
	}
	if _, err := c.Ack(ctx, "receipts", mine); !errors.Is(err, delayq.ErrStaleReceipt) {
		t.Fatalf("ack with the receipt rsmq's receive made stale: %v", err)
	}
	if _, err := c.ChangeVisibility(ctx, "receipts", mine, time.Hour); !errors.Is(err, delayq.ErrStaleReceipt) {
		t.Fatalf("extend with a stale receipt: %v", err)
	}
	// rsmq's delivery, named as a receipt, is current.
	theirs := fmt.Sprintf("%s.%d.%d", m.ID, m.RC, m.FR)
	if _, err := c.ChangeVisibility(ctx, "receipts", theirs, time.Hour); err != nil {
		t.Fatalf("extend rsmq's delivery: %v", err)
	}
	if r, err := c.Ack(ctx, "receipts", theirs); err != nil || r.Acked != 1 {
		t.Fatalf("ack rsmq's delivery by receipt: %+v %v", r, err)
	}
	var n int
	if e := rs.one("deleteMessage", map[string]any{"qname": "receipts", "id": id}, &n); e != "" || n != 0 {
		t.Fatalf("rsmq delete after chatq's ack: %d %s", n, e)
	}
}
