package delayq

import (
	"context"
	_ "embed"
	"fmt"
	"time"
)

var (
	//go:embed get.lua
	getLua    string
	getScript = script(getLua)
)

// Get returns message id of queue q with its State (ready, delayed or in
// flight) at one instant of server time (Message.Now), without receiving
// it: one read-only script, O(log n). The id may also be given as a
// receipt. A message that is not in the queue is ErrMessageNotFound.
func (c *Client) Get(ctx context.Context, q, idOrReceipt string) (*Message, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	r, err := parseRef(idOrReceipt)
	if err != nil {
		return nil, err
	}
	id := r.id
	a, err := run(ctx, c.rdb, getScript, c.keys(q), id)
	if err != nil {
		return nil, err
	}
	switch str(a[0]) {
	case "notfound":
		return nil, notFound(q)
	case "nomessage":
		return nil, fmt.Errorf("message %s in queue %q: %w", id, q, ErrMessageNotFound)
	case "nobody":
		return nil, fmt.Errorf("message %s in queue %q: its body is gone (a half-deleted message; the next receive drops it): %w", id, q, ErrMessageNotFound)
	}
	m := &Message{ID: id, Now: msTime(str(a[1])), VisibleAt: msTime(str(a[2])), Body: str(a[3]), RC: num(a[4]), FR: msTime(str(a[5]))}
	m.setDeadLettered(str(a[7]))
	m.settle(m.Now)
	if num(a[6]) == 1 && m.State == delayed {
		m.State = inFlight // in the index: received (by chatq), not due
	}
	return m, nil
}

// stateOf is a message's state at now: ready when due, else in flight when
// it was received, else delayed.
func stateOf(now, visible time.Time, received bool) string {
	switch {
	case !visible.After(now):
		return ready
	case received:
		return inFlight
	}
	return delayed
}
