// Package rsmq is RSMQ's layout as a queue kind (pkg/queues): the queues
// of one RSMQ namespace, read through pkg/delayq, which owns the layout and
// every write to it. Addresses are the plain queue names.
//
// State mapping: ready → ready, delayed → delayed, inflight → inflight.
// RSMQ has no retry, dead or done state (a dead-letter queue is a queue of
// its own) and no pausing: those are nil.
//
// Round trips: Discover is one SSCAN of the registry; Counts one call of
// the stats script (pipelined with the dead-letter check, read-only: it
// never rebuilds an incomplete index, as `queue ls -l` never writes); Scan
// one export script call a page; Get one script call.
package rsmq

import (
	"context"
	"errors"

	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
)

// Kind is one RSMQ namespace's queues.
type Kind struct {
	c *delayq.Client
}

// New returns the kind for c's namespace.
func New(c *delayq.Client) *Kind { return &Kind{c: c} }

// Name is "rsmq".
func (k *Kind) Name() string { return "rsmq" }

// Client is the delayq client the kind reads through.
func (k *Kind) Client() *delayq.Client { return k.c }

// Discover is one SSCAN of the namespace's registry.
func (k *Kind) Discover(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
	return k.c.Queues(ctx, cursor, "", count)
}

// Open returns queue name (a valid RSMQ queue name).
func (k *Kind) Open(name string) (queues.Queue, error) {
	if err := delayq.CheckName(name); err != nil {
		return nil, err
	}
	return &Queue{c: k.c, name: name}, nil
}

// Queue is one RSMQ queue.
type Queue struct {
	c    *delayq.Client
	name string
}

// Address is the queue's name.
func (q *Queue) Address() string { return q.name }

// Counts reads the queue's stats without writing (delayq's StatsEach).
func (q *Queue) Counts(ctx context.Context) (*queues.Counts, error) {
	rows, err := q.c.StatsEach(ctx, []string{q.name})
	if err != nil {
		return nil, err
	}
	s := rows[0]
	if s.Err != nil {
		return nil, mapErr(s.Err)
	}
	return CountsOf(&s), nil
}

// CountsOf maps delayq's stats onto chatq's states.
func CountsOf(s *delayq.Stats) *queues.Counts {
	c := &queues.Counts{Ready: queues.N(s.Ready), Delayed: queues.N(s.Delayed), Inflight: queues.N(s.InFlight)}
	if s.OldestReady != nil {
		age := s.OldestReadyAge
		c.OldestReady = &age
	}
	return c
}

// Scan exports the queue's messages in pages (delayq's Export: HSCAN of
// its hash, so in no particular order).
func (q *Queue) Scan(ctx context.Context, opt queues.ScanOptions, fn func([]queues.Job) error) error {
	switch opt.State {
	case "", queues.Ready, queues.Delayed, queues.Inflight:
	default:
		return stateErr(opt.State)
	}
	popt := delayq.PeekOptions{N: opt.Max, State: opt.State, Grep: opt.Grep, MinReceives: int(opt.MinAttempts), InFlightFor: opt.InflightFor}
	_, err := q.c.Export(ctx, q.name, popt, func(page []delayq.Message) error {
		jobs := make([]queues.Job, len(page))
		for i := range page {
			jobs[i] = job(&page[i])
		}
		return fn(jobs)
	})
	if errors.Is(err, queues.ErrStop) {
		return nil
	}
	return mapErr(err)
}

// Get reads message id.
func (q *Queue) Get(ctx context.Context, id string) (*queues.Job, error) {
	m, err := q.c.Get(ctx, q.name, id)
	if err != nil {
		return nil, mapErr(err)
	}
	j := job(m)
	return &j, nil
}

func job(m *delayq.Message) queues.Job {
	j := queues.Job{ID: m.ID, State: m.State, Data: m.Body, Attempts: m.RC, Created: m.Sent, Started: m.FR}
	if m.State != queues.Ready {
		j.Due = m.VisibleAt
	}
	if m.DeadLetteredFrom != "" {
		j.Extra = map[string]any{"dead_lettered_from": m.DeadLetteredFrom, "dead_lettered_rc": m.DeadLetteredRC}
	}
	return j
}

// mapErr makes delayq's not-found errors match the queues package's too.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, delayq.ErrQueueNotFound):
		return queues.Mark(err, queues.ErrQueueNotFound)
	case errors.Is(err, delayq.ErrMessageNotFound):
		return queues.Mark(err, queues.ErrJobNotFound)
	}
	return err
}

func stateErr(s string) error {
	return &stateError{s}
}

type stateError struct{ state string }

func (e *stateError) Error() string {
	return "rsmq queues have no state " + e.state + " (they have ready, delayed and inflight)"
}
func (e *stateError) Is(target error) bool { return target == delayq.ErrInvalid }
