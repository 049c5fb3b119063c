package delayq_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// deadLetterFrom pushes body to src (whose policy is one receive, then a
// dead-letter queue), receives it twice (the second receive moves it) and
// returns its id and the server times around the move.
func deadLetterFrom(t *testing.T, b redistest.Backend, c *delayq.Client, src, body string) (string, time.Time, time.Time) {
	t.Helper()
	ctx := context.Background()
	id := mustPush(t, c, src, body, delayq.PushOptions{})
	if r, err := c.Receive(ctx, src, delayq.ReceiveOptions{VT: -1}); err != nil || len(r) != 1 || r[0].ID != id {
		t.Fatalf("receive: %v %v", r, err)
	}
	before, err := b.Client.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if r, moved, _, err := receiveEvents(ctx, c, src, delayq.ReceiveOptions{}); err != nil || len(r) != 0 || moved != 1 {
		t.Fatalf("dead-letter receive: %+v %d %v", r, moved, err)
	}
	after, err := b.Client.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	return id, before.Truncate(time.Millisecond), after
}

// deadLetterFields returns the <id>:dl fields of queue q's hash.
func deadLetterFields(t *testing.T, b redistest.Backend, q string) []string {
	t.Helper()
	var out []string
	for f := range b.Client.HGetAll(context.Background(), b.Prefix+"rsmq:"+q+":Q").Val() {
		if strings.HasSuffix(f, ":dl") {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// A dead-letter move records where the message came from, its receive
// count and when; get, peek and export show it, import keeps it, and
// ack, pop and redrive take it away with the message.
func TestDeadLetterProvenance(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dlq", delayq.Attributes{})
		mustCreate(t, c, "src", delayq.Attributes{MaxReceives: 1, DeadLetter: "dlq"})
		id, before, after := deadLetterFrom(t, b, c, "src", "order 4711")
		check := func(how string, m delayq.Message) {
			t.Helper()
			if m.ID != id || m.DeadLetteredFrom != "src" || m.DeadLetteredRC != 1 || m.DeadLetteredAt.Before(before) || m.DeadLetteredAt.After(after) || m.RC != 0 {
				t.Fatalf("%s: %+v, want from src, rc 1, at %s to %s", how, m, before, after)
			}
		}
		g, err := c.Get(ctx, "dlq", id)
		if err != nil {
			t.Fatal(err)
		}
		check("get", *g)
		ps, err := c.Peek(ctx, "dlq", delayq.PeekOptions{N: 10, Grep: "4711"})
		if err != nil || len(ps) != 1 {
			t.Fatalf("peek: %v %v", ps, err)
		}
		check("peek", ps[0])
		exported, _ := exportAll(t, c, "dlq")
		check("export", exported[id])
		// Received in the dead-letter queue, the record stays; an import
		// into another queue keeps it.
		if r, err := c.Receive(ctx, "dlq", delayq.ReceiveOptions{VT: time.Hour}); err != nil || len(r) != 1 {
			t.Fatal(r, err)
		}
		mustCreate(t, c, "copy", delayq.Attributes{})
		exported, _ = exportAll(t, c, "dlq")
		if r := importAll(t, c, "copy", toImport(exported)); r.Imported != 1 {
			t.Fatalf("import: %+v", r)
		}
		g, err = c.Get(ctx, "copy", id)
		if err != nil || g.RC != 1 || g.State != "inflight" {
			t.Fatalf("imported: %+v %v", g, err)
		}
		g.RC = 0
		check("imported", *g)
		// Export skips the record (it is not a message).
		if n := len(exported); n != 1 {
			t.Fatalf("exported %d messages", n)
		}
		// Ack and pop take the record away.
		if _, err := c.Ack(ctx, "copy", id); err != nil {
			t.Fatal(err)
		}
		if f := deadLetterFields(t, b, "copy"); len(f) != 0 {
			t.Fatalf("after ack: %v", f)
		}
		if _, err := c.Retry(ctx, "dlq", 0, id); err != nil {
			t.Fatal(err)
		}
		if r, err := c.Receive(ctx, "dlq", delayq.ReceiveOptions{Pop: true}); err != nil || len(r) != 1 {
			t.Fatal(r, err)
		}
		if f := deadLetterFields(t, b, "dlq"); len(f) != 0 {
			t.Fatalf("after pop: %v", f)
		}
		// A message dead-lettered twice (the dead-letter queue has a policy
		// of its own) records the last queue it came from.
		mustCreate(t, c, "dlq2", delayq.Attributes{})
		if err := c.SetAttributes(ctx, "dlq", delayq.Attributes{MaxReceives: 1, DeadLetter: "dlq2"}); err != nil {
			t.Fatal(err)
		}
		id2, _, _ := deadLetterFrom(t, b, c, "src", "twice")
		if r, err := c.Receive(ctx, "dlq", delayq.ReceiveOptions{VT: -1}); err != nil || len(r) != 1 {
			t.Fatal(r, err)
		}
		if r, moved, _, err := receiveEvents(ctx, c, "dlq", delayq.ReceiveOptions{}); err != nil || len(r) != 0 || moved != 1 {
			t.Fatal(r, moved, err)
		}
		if g, err := c.Get(ctx, "dlq2", id2); err != nil || g.DeadLetteredFrom != "dlq" || g.DeadLetteredRC != 1 {
			t.Fatalf("dead-lettered twice: %+v %v", g, err)
		}
		if f := deadLetterFields(t, b, "dlq"); len(f) != 0 {
			t.Fatalf("the record stayed behind in dlq: %v", f)
		}
		// Import refuses a record without its queue, or with a bad one.
		for _, bad := range []delayq.Message{
			{ID: id, Body: "x", VisibleAt: time.Now(), DeadLetteredRC: 3},
			{ID: id, Body: "x", VisibleAt: time.Now(), DeadLetteredFrom: "no such:queue"},
			{ID: id, Body: "x", VisibleAt: time.Now(), DeadLetteredFrom: "src", DeadLetteredRC: -1},
		} {
			if _, err := c.Import(ctx, "copy", seq([]delayq.Message{bad})); !errors.Is(err, delayq.ErrInvalid) {
				t.Errorf("import %+v: %v, want ErrInvalid", bad, err)
			}
		}
		// A record another writer garbled is no record.
		if err := b.Client.HSet(ctx, b.Prefix+"rsmq:dlq2:Q", id2+":dl", "garbage").Err(); err != nil {
			t.Fatal(err)
		}
		if g, err := c.Get(ctx, "dlq2", id2); err != nil || g.DeadLetteredFrom != "" {
			t.Fatalf("garbled record: %+v %v", g, err)
		}
	})
}

// Redrive sends each message back where it came from, by its record; a
// message without one (dead-lettered before the record, or pushed into the
// dead-letter queue) goes to the one queue whose dead-letter queue it is,
// as before, and with none or several it stays, reported.
func TestRedriveByOrigin(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dlq", delayq.Attributes{})
		for _, q := range []string{"a", "b", "c"} {
			mustCreate(t, c, q, delayq.Attributes{MaxReceives: 1, DeadLetter: "dlq"})
		}
		fromA, _, _ := deadLetterFrom(t, b, c, "a", "from a")
		fromB, _, _ := deadLetterFrom(t, b, c, "b", "from b")
		fromC, _, _ := deadLetterFrom(t, b, c, "c", "from c")
		legacy := mustPush(t, c, "dlq", "no record", delayq.PushOptions{})
		// c goes away (its message has no destination now), and b's
		// message is held by a consumer of the dead-letter queue.
		if _, err := c.Delete(ctx, "c", -1); err != nil {
			t.Fatal(err)
		}
		held, err := c.Receive(ctx, "dlq", delayq.ReceiveOptions{N: 10, VT: time.Hour})
		if err != nil || len(held) != 4 {
			t.Fatal(held, err)
		}
		if _, err := c.Retry(ctx, "dlq", 0, fromA, fromC, legacy); err != nil {
			t.Fatal(err)
		}
		// Two sources (a and b): no fallback.
		res, err := c.Redrive(ctx, "dlq", delayq.RedriveOptions{})
		if err != nil || res.Moved != 1 || !maps.Equal(res.MovedTo, map[string]int{"a": 1}) || res.InFlight != 1 ||
			res.NoDestination != 2 || res.To != "" || !slices.Equal(res.Sources, []string{"a", "b"}) {
			t.Fatalf("redrive: %+v %v", res, err)
		}
		if g, err := c.Get(ctx, "a", fromA); err != nil || g.DeadLetteredFrom != "" || g.RC != 0 || g.State != "ready" {
			t.Fatalf("back in a: %+v %v", g, err)
		}
		checkIndex(t, b, "a")
		checkIndex(t, b, "dlq")
		// b's comes back to b once the consumer lets it go.
		if _, err := c.Retry(ctx, "dlq", 0, fromB); err != nil {
			t.Fatal(err)
		}
		res, err = c.Redrive(ctx, "dlq", delayq.RedriveOptions{})
		if err != nil || !maps.Equal(res.MovedTo, map[string]int{"b": 1}) || res.NoDestination != 2 {
			t.Fatalf("redrive b: %+v %v", res, err)
		}
		// Nothing left with a destination: refused as before, nothing changed.
		res, err = c.Redrive(ctx, "dlq", delayq.RedriveOptions{})
		if !errors.Is(err, delayq.ErrInvalid) || res.Moved != 0 || res.NoDestination != 2 {
			t.Fatalf("redrive with no destination: %+v %v", res, err)
		}
		// With one source left (b), the message without a record and the
		// one whose origin is gone go there.
		if err := c.SetAttributes(ctx, "a", delayq.Attributes{MaxReceives: -1}); err != nil {
			t.Fatal(err)
		}
		res, err = c.Redrive(ctx, "dlq", delayq.RedriveOptions{})
		if err != nil || res.To != "b" || !maps.Equal(res.MovedTo, map[string]int{"b": 2}) || res.NoDestination != 0 {
			t.Fatalf("redrive to the one source: %+v %v", res, err)
		}
		if f := deadLetterFields(t, b, "dlq"); len(f) != 0 {
			t.Fatalf("records left in dlq: %v", f)
		}
		if f := deadLetterFields(t, b, "b"); len(f) != 0 {
			t.Fatalf("records came along into b: %v", f)
		}
		checkIndex(t, b, "b")
		// --to wins over the record.
		mustCreate(t, c, "d", delayq.Attributes{MaxReceives: 1, DeadLetter: "dlq"})
		fromD, _, _ := deadLetterFrom(t, b, c, "d", "from d")
		res, err = c.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "b"})
		if err != nil || !maps.Equal(res.MovedTo, map[string]int{"b": 1}) {
			t.Fatalf("redrive --to: %+v %v", res, err)
		}
		if _, err := c.Get(ctx, "b", fromD); err != nil {
			t.Fatal(err)
		}
	})
}
