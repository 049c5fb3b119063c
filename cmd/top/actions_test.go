package top

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// run runs the command the model returned, as the program would, and
// feeds its message back (snapshots as they are: the actions need the real
// ids); it runs the refresh an action's outcome asks for too.
func run(t *testing.T, m *model, cmd tea.Cmd) {
	t.Helper()
	for cmd != nil {
		msg := cmd()
		if sm, ok := msg.(snapMsg); ok && sm.err != nil {
			t.Fatalf("refresh: %v", sm.err)
		}
		_, next := m.Update(msg)
		if _, ok := msg.(doneMsg); !ok {
			return
		}
		cmd = next
	}
}

// selectMessage moves the open queue's selection to the row whose body is
// body.
func selectMessage(t *testing.T, m *model, body string) string {
	t.Helper()
	for i, p := range m.snap.Peek {
		if p.Body == body {
			m.msgSel = p.ID
			if !strings.Contains(m.render(), "> "+p.ID[:11]) {
				t.Fatalf("row %d (%s) is not shown selected:\n%s", i, body, m.render())
			}
			return p.ID
		}
	}
	t.Fatalf("no row %q in:\n%s", body, m.render())
	return ""
}

func TestActions(t *testing.T) { redistest.Run(t, testActions) }

// From a queue's view: retry, delete and redrive, each asked first, each
// acting on the delivery the view read when the key was pressed.
func testActions(t *testing.T, b redistest.Backend) {
	ctx := t.Context()
	q := fill(t, ctx, b.Client, b.Prefix)
	col := newCollector(b.Client, "rsmq", b.Prefix, false, testLimits(), time.Second, time.Now)
	m := newModel(ctx, col, time.Second, plainStyles(), nil)
	m.acts = q
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	run(t, m, m.refresh())
	key(m, "j") // jobs
	run(t, m, key(m, "enter"))

	// r on the message a consumer holds, then n: nothing changes.
	held := selectMessage(t, m, "resize image 0")
	run(t, m, key(m, "r"))
	if v := m.render(); !strings.Contains(v, "retry "+short(held)+" (inflight, rc 1, held by a consumer) \"resize image 0\"") || !strings.Contains(v, "? y/N") {
		t.Fatalf("r did not ask:\n%s", v)
	}
	key(m, "n")
	if v := m.render(); !strings.Contains(v, "cancelled: nothing changed") {
		t.Fatalf("n:\n%s", v)
	}
	if g, err := q.Get(ctx, "jobs", held); err != nil || g.State != "inflight" {
		t.Fatalf("after n: %+v %v", g, err)
	}

	// r, then the message is received again before the y: stale, left.
	run(t, m, key(m, "r"))
	if _, err := q.Retry(ctx, "jobs", 0, held); err != nil {
		t.Fatal(err)
	}
	var again []delayq.Message
	for deadline := time.Now().Add(5 * time.Second); len(again) == 0 || again[0].ID != held; {
		if time.Now().After(deadline) {
			t.Fatal("could not receive the message again")
		}
		var err error
		if again, err = q.Receive(ctx, "jobs", delayq.ReceiveOptions{N: 20, VT: time.Hour}); err != nil {
			t.Fatal(err)
		}
		for _, r := range again { // give the others back
			if r.ID != held {
				if _, err := q.Retry(ctx, "jobs", 0, r.Receipt); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, r := range again {
			if r.ID == held {
				again = []delayq.Message{r}
			}
		}
	}
	run(t, m, key(m, "y"))
	if v := m.render(); !strings.Contains(v, "retry "+short(held)+": nothing changed, it was received again since (stale receipt)") {
		t.Fatalf("stale:\n%s", v)
	}
	if g, err := q.Get(ctx, "jobs", held); err != nil || g.State != "inflight" || g.RC != 2 {
		t.Fatalf("after a stale retry: %+v %v", g, err)
	}

	// r, y: due now, its receive count kept.
	selectMessage(t, m, "resize image 0")
	run(t, m, key(m, "r"))
	run(t, m, key(m, "y"))
	if v := m.render(); !strings.Contains(v, "retried "+short(held)+": due now") {
		t.Fatalf("retry:\n%s", v)
	}
	if g, err := q.Get(ctx, "jobs", held); err != nil || g.State != "ready" || g.RC != 2 {
		t.Fatalf("after retry: %+v %v", g, err)
	}

	// d, y on a ready message: deleted.
	gone := selectMessage(t, m, "resize image 2")
	run(t, m, key(m, "d"))
	if v := m.render(); !strings.Contains(v, "delete "+short(gone)+" (ready, rc 1) \"resize image 2\"? y/N") {
		t.Fatalf("d did not ask:\n%s", v)
	}
	run(t, m, key(m, "y"))
	if v := m.render(); !strings.Contains(v, "deleted "+short(gone)) || strings.Contains(v, "resize image 2") {
		t.Fatalf("delete:\n%s", v)
	}
	if _, err := q.Get(ctx, "jobs", gone); err == nil {
		t.Fatal("the deleted message is still there")
	}

	// R in the dead-letter queue's view: its messages go back to jobs.
	dead, err := q.Push(ctx, "jobs-dead", "poison", delayq.PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key(m, "esc")
	run(t, m, m.refresh())
	key(m, "j") // jobs-dead follows jobs by name
	run(t, m, key(m, "enter"))
	key(m, "R")
	if v := m.render(); !strings.Contains(v, "redrive jobs-dead: move its messages back") {
		t.Fatalf("R did not ask:\n%s", v)
	}
	run(t, m, key(m, "y"))
	if v := m.render(); !strings.Contains(v, "redrive jobs-dead: moved 1 · 1 to jobs") {
		t.Fatalf("redrive:\n%s", v)
	}
	if g, err := q.Get(ctx, "jobs", dead.ID); err != nil || g.Body != "poison" {
		t.Fatalf("redriven: %+v %v", g, err)
	}
}
