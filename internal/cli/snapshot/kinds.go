package snapshot

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/chatq-dev/chatq/pkg/queues"
)

// kindSet is the discovery of one queue kind other than RSMQ's (whose
// registry is c.queues): its names, as addresses (KIND:NAME).
type kindSet struct {
	kind queues.Kind
	set  scanSet
}

// discoverKinds takes the next steps of every other kind's discovery, at
// most Limits.RegistryCalls each (the queues' discovery budget, as for
// RSMQ's registry).
func (c *Collector) discoverKinds(ctx context.Context) (int, error) {
	calls := 0
	for _, ks := range c.kinds {
		n, err := c.discoverN(ctx, &ks.set, c.lim.RegistryCalls, func(ctx context.Context, cursor uint64, _ string, count int64) ([]string, uint64, error) {
			names, next, err := ks.kind.Discover(ctx, cursor, count)
			for i, n := range names {
				names[i] = ks.kind.Name() + ":" + n
			}
			return names, next, err
		})
		calls += n
		if err != nil {
			return calls, err
		}
	}
	return calls, nil
}

// kindOf returns the kind set of address, or nil for RSMQ's.
func (c *Collector) kindOf(address string) *kindSet {
	kind, _ := queues.Parse(address)
	for _, ks := range c.kinds {
		if ks.kind.Name() == kind {
			return ks
		}
	}
	return nil
}

// kindRow reads the counts of another kind's queue: one bounded call
// (a pipeline) of the kind's.
func (c *Collector) kindRow(ctx context.Context, ks *kindSet, address string) QueueRow {
	r := QueueRow{Name: address, Kind: ks.kind.Name()}
	_, name := queues.Parse(address)
	q, err := ks.kind.Open(name)
	var n *queues.Counts
	if err == nil {
		n, err = q.Counts(ctx)
	}
	switch {
	case errors.Is(err, queues.ErrQueueNotFound):
		r.Error = "deleted"
		return r
	case err != nil:
		r.Error = err.Error()
		return r
	}
	r.Messages = n.Total()
	r.Ready, r.Delayed, r.InFlight = deref(n.Ready), deref(n.Delayed), deref(n.Inflight)
	r.Retry, r.Dead, r.Done, r.Paused = n.Retry, n.Dead, n.Done, n.Paused
	if n.OldestReady != nil {
		ms := n.OldestReady.Milliseconds()
		r.OldestReadyMs = &ms
	}
	return r
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// moreUrgent orders rows for an operator: the longest wait first (oldest
// ready), then dead jobs or dead letters, then the backlog; unreadable
// rows last; then by name.
func moreUrgent(a, b QueueRow) int {
	if (a.Error != "") != (b.Error != "") {
		if a.Error != "" {
			return 1
		}
		return -1
	}
	return cmp.Or(
		cmp.Compare(b.OldestMs(), a.OldestMs()),
		cmp.Compare(b.deadCount(), a.deadCount()),
		cmp.Compare(b.Ready, a.Ready),
		cmp.Compare(a.Name, b.Name))
}

// deadCount is the row's dead jobs, or its dead-letter queue's depth.
func (r *QueueRow) deadCount() int64 {
	n := deref(r.Dead)
	if r.DeadLetterDepth != nil {
		n += *r.DeadLetterDepth
	}
	return n
}

// pick chooses which of names (every queue known, sorted) to read this
// refresh, when they are more than Limits.Queues: the Limits.Queues most
// urgent as last read (never-read ones count as least urgent), and as many
// others in name order from where the last sweep ended, so that a queue
// whose backlog grows is found and shown whatever its name within
// len(names)/Limits.Queues refreshes. Each refresh reads at most twice
// Limits.Queues queues.
func (c *Collector) pick(names []string) []string {
	lim := c.lim.Queues
	if len(names) <= lim {
		return names
	}
	var known []QueueRow
	for _, n := range names {
		if r, ok := c.lastRows[n]; ok {
			known = append(known, r)
		}
	}
	slices.SortFunc(known, moreUrgent)
	chosen := map[string]bool{}
	var out []string
	for _, r := range known[:min(lim, len(known))] {
		chosen[r.Name] = true
		out = append(out, r.Name)
	}
	start, _ := slices.BinarySearch(names, c.sweepAfter+"\x00")
	for i := 0; i < len(names) && len(out) < 2*lim; i++ {
		n := names[(start+i)%len(names)]
		if !chosen[n] {
			chosen[n] = true
			out = append(out, n)
			c.sweepAfter = n
		}
	}
	return out
}

func namesOf(rows []QueueRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Name
	}
	return out
}

// readQueues reads the rows of names (RSMQ's with their stats, the
// others' counts), remembers them for pick, and returns those to show:
// all of them in name order when they fit Limits.Queues, else the
// Limits.Queues most urgent, most urgent first.
func (c *Collector) readQueues(ctx context.Context, names []string, known int, now time.Time) ([]QueueRow, int, error) {
	var rsmqNames []string
	for _, n := range names {
		if c.kindOf(n) == nil {
			rsmqNames = append(rsmqNames, n)
		}
	}
	rows, calls, err := c.queueRows(ctx, rsmqNames, now)
	if err != nil {
		return nil, calls, err
	}
	for _, n := range names {
		if ks := c.kindOf(n); ks != nil {
			r := c.kindRow(ctx, ks, n)
			r.ServerNow = now // the kinds' counts carry no server time: the client's clock
			rows = append(rows, r)
			calls++
		}
	}
	if c.lastRows == nil {
		c.lastRows = map[string]QueueRow{}
	}
	for _, r := range rows {
		c.lastRows[r.Name] = r
	}
	if known <= c.lim.Queues {
		slices.SortFunc(rows, func(a, b QueueRow) int { return cmp.Compare(a.Name, b.Name) })
		return rows, calls, nil
	}
	slices.SortFunc(rows, moreUrgent)
	return rows[:min(len(rows), c.lim.Queues)], calls, nil
}

// forgetGone drops the remembered rows of queues no longer known.
func (c *Collector) forgetGone(known []string) {
	if len(c.lastRows) <= len(known) {
		return
	}
	keep := map[string]bool{}
	for _, n := range known {
		keep[n] = true
	}
	for n := range c.lastRows {
		if !keep[n] {
			delete(c.lastRows, n)
		}
	}
}

// kindPeek reads the first n jobs of another kind's queue, in the order
// of its states (ready first), for the queue view.
func (c *Collector) kindPeek(ctx context.Context, ks *kindSet, address string, n int) ([]PeekRow, error) {
	_, name := queues.Parse(address)
	q, err := ks.kind.Open(name)
	if err != nil {
		return nil, err
	}
	var rows []PeekRow
	err = q.Scan(ctx, queues.ScanOptions{Max: n, Page: n}, func(page []queues.Job) error {
		for _, j := range page {
			body := j.Data
			if j.Name != "" {
				body = j.Name + " " + body
			}
			rows = append(rows, PeekRow{ID: j.ID, State: j.State, VisibleAt: j.Due, RC: j.Attempts, Body: body})
		}
		return nil
	})
	if errors.Is(err, queues.ErrQueueNotFound) {
		err = nil
	}
	return rows, err
}
