package delayq_test

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// The records of pushes and pops with tokens (<ns>:<q>:T:<minute>) are
// where rsmq does not look: it lists the same queues, counts the same
// messages, pops what chatq left and deletes the queue.
func TestInteropTokens(t *testing.T) {
	b := redistest.Real(t)
	rs := needRSMQ(t, b)
	ctx := context.Background()
	c := newClient(t, b)
	newFakeClock(c) // one minute: one record key
	mustCreate(t, c, "tokens", delayq.Attributes{})
	for _, body := range []string{"first", "second"} {
		if _, err := c.Push(ctx, "tokens", body, delayq.PushOptions{Token: rand.Text()}); err != nil {
			t.Fatal(err)
		}
	}
	opt := delayq.ReceiveOptions{Pop: true, Token: rand.Text()}
	for range 2 {
		if m, err := c.Receive(ctx, "tokens", opt); err != nil || len(m) != 1 || m[0].Body != "first" {
			t.Fatalf("pop with a token: %+v %v", m, err)
		}
	}
	if k, err := b.Client.Keys(ctx, b.Prefix+"rsmq:tokens:T:*").Result(); err != nil || len(k) != 1 {
		t.Fatalf("record keys %v (%v), want 1", k, err)
	} else if n, err := b.Client.HLen(ctx, k[0]).Result(); err != nil || n != 3 {
		t.Fatalf("%d records (%v), want 3", n, err)
	}
	var qs []string
	if rs.one("listQueues", nil, &qs); !contains(qs, "tokens") {
		t.Fatalf("rsmq lists %v", qs)
	}
	var attrs rsmqAttributes
	if err := rs.one("getQueueAttributes", map[string]any{"qname": "tokens"}, &attrs); err != "" || attrs.Msgs != 1 || attrs.TotalSent != 2 || attrs.TotalRecv != 1 {
		t.Fatalf("rsmq attributes %+v %s; want 1 message, 2 sent, 1 received", attrs, err)
	}
	var m rsmqMessage
	if err := rs.one("popMessage", map[string]any{"qname": "tokens"}, &m); err != "" || m.Message != "second" {
		t.Fatalf("rsmq popped %+v %s", m, err)
	}
	if err := rs.one("deleteQueue", map[string]any{"qname": "tokens"}, nil); err != "" {
		t.Fatal(err)
	}
}
