package delayq_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// TestInteropRedrive: a message dead-lettered and redriven by chatq is an
// ordinary fresh message to the rsmq npm client: same id and body, received
// with rc 1 and a new first receive, and rsmq's counts agree.
func TestInteropRedrive(t *testing.T) {
	b := redistest.Real(t)
	rs := needRSMQ(t, b)
	ctx := context.Background()
	c := newClient(t, b)
	mustCreate(t, c, "rdead", delayq.Attributes{})
	mustCreate(t, c, "rjobs", delayq.Attributes{MaxReceives: 1, DeadLetter: "rdead"})
	ids := deadLetter(t, c, "rjobs", 1)
	// rsmq received it from the dead-letter queue and gave it back: it has
	// a receive count there, which the redrive must not carry over.
	var m rsmqMessage
	if e := rs.one("receiveMessage", map[string]any{"qname": "rdead", "vt": 0}, &m); e != "" || m.ID != ids[0] || m.RC != 1 {
		t.Fatalf("rsmq receive from the dead-letter queue: %+v %s", m, e)
	}
	before := time.Now().Add(-time.Second).UnixMilli()
	res, err := c.Redrive(ctx, "rdead", delayq.RedriveOptions{})
	if err != nil || res.Moved != 1 || res.To != "rjobs" {
		t.Fatalf("redrive: %+v %v", res, err)
	}
	// (hiddenmsgs is not checked: rsmq compares against whole seconds, so a
	// message due this second counts as hidden; see docs/queue.md)
	var attrs rsmqAttributes
	if e := rs.one("getQueueAttributes", map[string]any{"qname": "rjobs"}, &attrs); e != "" || attrs.Msgs != 1 || attrs.TotalSent != 2 {
		t.Fatalf("rsmq attributes of the destination: %+v %s", attrs, e)
	}
	if e := rs.one("getQueueAttributes", map[string]any{"qname": "rdead"}, &attrs); e != "" || attrs.Msgs != 0 {
		t.Fatalf("rsmq attributes of the dead-letter queue: %+v %s", attrs, e)
	}
	m = rsmqMessage{}
	if e := rs.one("receiveMessage", map[string]any{"qname": "rjobs", "vt": 60}, &m); e != "" || m.ID != ids[0] || m.Message != "body 0" || m.RC != 1 || m.FR < before {
		t.Fatalf("rsmq receive of the redriven message: %+v %s", m, e)
	}
	var n int
	if e := rs.one("deleteMessage", map[string]any{"qname": "rjobs", "id": ids[0]}, &n); e != "" || n != 1 {
		t.Fatalf("rsmq delete: %d %s", n, e)
	}
}

// TestInteropProvenance: the record of a dead-letter move (the <id>:dl
// field) is invisible to the rsmq npm client: it receives, counts, gives
// back and deletes such a message as any other, the record stays through
// its receives, and redrive goes back by it. A message rsmq deletes leaves
// its record behind (rsmq deletes only the fields it knows), which chatq's
// operations pass over.
func TestInteropProvenance(t *testing.T) {
	b := redistest.Real(t)
	rs := needRSMQ(t, b)
	ctx := context.Background()
	c := newClient(t, b)
	mustCreate(t, c, "pdead", delayq.Attributes{})
	mustCreate(t, c, "pjobs", delayq.Attributes{MaxReceives: 1, DeadLetter: "pdead"})
	mustCreate(t, c, "pother", delayq.Attributes{MaxReceives: 1, DeadLetter: "pdead"}) // two sources: only the record knows the way
	ids := deadLetter(t, c, "pjobs", 2)
	var attrs rsmqAttributes
	if e := rs.one("getQueueAttributes", map[string]any{"qname": "pdead"}, &attrs); e != "" || attrs.Msgs != 2 || attrs.TotalSent != 2 {
		t.Fatalf("rsmq attributes of the dead-letter queue: %+v %s", attrs, e)
	}
	var m rsmqMessage
	if e := rs.one("receiveMessage", map[string]any{"qname": "pdead", "vt": 60}, &m); e != "" || m.ID != ids[0] || m.Message != "body 0" || m.RC != 1 {
		t.Fatalf("rsmq receive from the dead-letter queue: %+v %s", m, e)
	}
	g, err := c.Get(ctx, "pdead", ids[0])
	if err != nil || g.DeadLetteredFrom != "pjobs" || g.DeadLetteredRC != 1 || g.RC != 1 {
		t.Fatalf("after rsmq's receive: %+v %v", g, err)
	}
	var n int
	if e := rs.one("changeMessageVisibility", map[string]any{"qname": "pdead", "id": ids[0], "vt": 0}, &n); e != "" || n != 1 {
		t.Fatalf("rsmq changeMessageVisibility: %d %s", n, e)
	}
	if e := rs.one("deleteMessage", map[string]any{"qname": "pdead", "id": ids[1]}, &n); e != "" || n != 1 {
		t.Fatalf("rsmq delete: %d %s", n, e)
	}
	// ids[1]'s record is left; no chatq operation takes it for a message.
	if left := b.Client.HExists(ctx, b.Prefix+"rsmq:pdead:Q", ids[1]+":dl").Val(); !left {
		t.Fatalf("the record of the message rsmq deleted is gone: rsmq deletes more than it used to")
	}
	exported, _ := exportAll(t, c, "pdead")
	if len(exported) != 1 {
		t.Fatalf("export after rsmq's delete: %v", exported)
	}
	res, err := c.Redrive(ctx, "pdead", delayq.RedriveOptions{})
	if err != nil || res.Moved != 1 || res.MovedTo["pjobs"] != 1 || res.NoDestination != 0 {
		t.Fatalf("redrive by the record: %+v %v", res, err)
	}
	m = rsmqMessage{}
	if e := rs.one("receiveMessage", map[string]any{"qname": "pjobs", "vt": 60}, &m); e != "" || m.ID != ids[0] || m.RC != 1 {
		t.Fatalf("rsmq receive of the redriven message: %+v %s", m, e)
	}
	if e := rs.one("getQueueAttributes", map[string]any{"qname": "pdead"}, &attrs); e != "" || attrs.Msgs != 0 {
		t.Fatalf("rsmq attributes after the redrive: %+v %s", attrs, e)
	}
}
