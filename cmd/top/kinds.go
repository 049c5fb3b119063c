package top

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/chatq-dev/chatq/pkg/queues"
)

// The queue view's actions on queues of other kinds than RSMQ's go
// through pkg/queues, as chatq queue retry, rm and redrive do: retry runs
// a job again now, delete removes it (never one in flight: its worker may
// finish it), redrive moves every dead job back.

// isKind reports whether q is another kind's address (KIND:NAME).
func isKind(q string) bool {
	kind, _ := queues.Parse(q)
	return kind != "rsmq"
}

// prepareKind reads the job again, then asks.
func (m *model) prepareKind(kind, q, id string) tea.Cmd {
	ctx, reg := m.ctx, m.kinds
	return func() tea.Msg {
		qu, err := reg.Open(q)
		var j *queues.Job
		if err == nil {
			j, err = qu.Get(ctx, id)
		}
		if err != nil {
			return doneMsg{fmt.Sprintf("%s %s: %s", kind, short(id), failure(err)), true}
		}
		held := ""
		if j.State == queues.Inflight {
			held = ", held by a worker"
		}
		return askMsg{&action{kind: kind, queue: q, ref: id, question: fmt.Sprintf(
			"%s %s (%s, %d attempts%s) %q? y/N", kind, short(id), j.State, j.Attempts, held, cut(oneLine(j.Name+" "+j.Data), 24))}}
	}
}

// actKind makes the change a asked for.
func (m *model) actKind(a *action) tea.Cmd {
	ctx, reg := m.ctx, m.kinds
	return func() tea.Msg {
		r, err := kindAction(ctx, reg, a)
		switch {
		case err != nil:
			return doneMsg{fmt.Sprintf("%s %s: %s", a.kind, a.queue, failure(err)), true}
		case a.kind == "redrive":
			return doneMsg{fmt.Sprintf("redrive %s: moved %d", a.queue, len(r.Done)), false}
		case len(r.Done) == 1:
			verb := map[string]string{"retry": "retried", "delete": "deleted"}[a.kind]
			return doneMsg{fmt.Sprintf("%s %s", verb, short(a.ref)), false}
		}
		return doneMsg{fmt.Sprintf("%s %s: nothing changed: %s", a.kind, short(a.ref), r.Skipped[a.ref]), true}
	}
}

func kindAction(ctx context.Context, reg *queues.Registry, a *action) (*queues.Result, error) {
	q, err := reg.Open(a.queue)
	if err != nil {
		return nil, err
	}
	kind, _ := queues.Parse(a.queue)
	switch a.kind {
	case "retry":
		if r, ok := q.(queues.Retrier); ok {
			return r.Retry(ctx, []string{a.ref})
		}
	case "delete":
		if r, ok := q.(queues.Remover); ok {
			return r.Remove(ctx, []string{a.ref}, false)
		}
	case "redrive":
		if r, ok := q.(queues.Redriver); ok {
			return r.Redrive(ctx, 0)
		}
	}
	return nil, fmt.Errorf("%s queues have no %s", kind, a.kind)
}
