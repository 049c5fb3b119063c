package asynq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// Known is the asynq releases whose layout chatq writes: 0.22 (the lease
// set) to 0.26 have the same keys and hash fields (0.23 added task groups),
// and testdata/interop/asynq runs asynq's own code of each of the five.
const Known = "asynq 0.22-0.26 (tested: 0.22.1, 0.23.0, 0.24.1, 0.25.1, 0.26.0)"

// Kind is asynq's layout: the queues named in the set asynq:queues.
type Kind struct {
	rdb    redis.UniversalClient
	prefix string
}

var (
	_ queues.Kind         = (*Kind)(nil)
	_ queues.AccessLister = (*Kind)(nil)
)

// New returns the asynq kind on env's server; env.Prefix goes in front of
// every key (asynq itself uses none).
func New(env queues.Env) *Kind { return &Kind{rdb: env.RDB, prefix: env.Prefix} }

// Name is "asynq".
func (k *Kind) Name() string { return "asynq" }

// allQueues is the set asynq adds every queue's name to when it first
// enqueues to it (and removes it from in Inspector.DeleteQueue).
func (k *Kind) allQueues() string { return k.prefix + "asynq:queues" }

// Discover reads one SSCAN page of asynq:queues.
func (k *Kind) Discover(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
	names, next, err := k.rdb.SScan(ctx, k.allQueues(), cursor, "", count).Result()
	if err != nil {
		return nil, 0, err
	}
	out := names[:0]
	for _, n := range names {
		if checkName(n) == nil {
			out = append(out, n)
		}
	}
	return out, next, nil
}

// checkName applies asynq's own rule (base.ValidateQueueName: not empty
// nor only white space), and chatq's that a name is valid UTF-8 text.
func checkName(name string) error {
	bad := func(reason string) error { return &names.Error{Kind: "asynq queue name", Name: name, Reason: reason} }
	switch {
	case strings.TrimSpace(name) == "":
		return bad("must not be empty or white space")
	case !utf8.ValidString(name):
		return bad("must be valid UTF-8")
	}
	return nil
}

// Open returns the queue name (asynq's queue name); it makes no call.
func (k *Kind) Open(name string) (queues.Queue, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return k.open(name), nil
}

// open returns the queue name without checking it.
func (k *Kind) open(name string) *Queue {
	return &Queue{k: k, name: name, base: k.prefix + "asynq:{" + name + "}:"}
}

// Queue is one asynq queue. Every key it touches but asynq:queues starts
// with asynq:{NAME}: and so is in one cluster slot.
type Queue struct {
	k    *Kind
	name string
	base string // <prefix>asynq:{<name>}:
}

var (
	_ queues.Queue     = (*Queue)(nil)
	_ queues.Retrier   = (*Queue)(nil)
	_ queues.Remover   = (*Queue)(nil)
	_ queues.Redriver  = (*Queue)(nil)
	_ queues.Pauser    = (*Queue)(nil)
	_ queues.Recoverer = (*Queue)(nil)
)

// Address is "asynq:NAME".
func (q *Queue) Address() string { return "asynq:" + q.name }

// Name is asynq's name of the queue.
func (q *Queue) Name() string { return q.name }

func (q *Queue) key(suffix string) string { return q.base + suffix }

// taskPrefix is what a task's id follows in its hash's key.
func (q *Queue) taskPrefix() string { return q.base + "t:" }

// asynq's states, as a task hash's state field holds them, and the key of
// the list or sorted set each lives in (aggregating: the group's set).
const (
	statePending     = "pending"
	stateActive      = "active"
	stateScheduled   = "scheduled"
	stateRetry       = "retry"
	stateArchived    = "archived"
	stateCompleted   = "completed"
	stateAggregating = "aggregating"
)

// chatqState maps asynq's state onto chatq's ("" for aggregating, which
// maps onto none).
var chatqState = map[string]string{
	statePending:   queues.Ready,
	stateScheduled: queues.Delayed,
	stateActive:    queues.Inflight,
	stateRetry:     queues.Retry,
	stateArchived:  queues.Dead,
	stateCompleted: queues.Done,
}

// asynqState maps chatq's states onto asynq's.
var asynqState = map[string]string{
	queues.Ready:    statePending,
	queues.Delayed:  stateScheduled,
	queues.Inflight: stateActive,
	queues.Retry:    stateRetry,
	queues.Dead:     stateArchived,
	queues.Done:     stateCompleted,
}

// leaseDuration is asynq's rdb.LeaseDuration: a worker takes a task for
// 30 s and extends it every few seconds while it works.
const leaseDuration = 30 * time.Second

// leaseGrace is what asynq's recoverer adds to a lease before it takes the
// task back (recoverer.go: "expired 30 seconds ago or earlier to
// accommodate certain amount of clock skew").
const leaseGrace = 30 * time.Second

// errLeaseExpired is the error asynq's recoverer records on a task it
// takes back (asynq.ErrLeaseExpired).
const errLeaseExpired = "asynq: task lease expired"

// checkWritable is a write's first call: the queue must be one
// asynq:queues names (as asynq's Inspector requires), in a layout chatq
// knows (not with the deadlines set of asynq 0.21 and before, which 0.22
// replaced by the lease set).
func (q *Queue) checkWritable(ctx context.Context) error {
	var member *redis.BoolCmd
	var old *redis.IntCmd
	_, err := q.k.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		member = p.SIsMember(ctx, q.k.allQueues(), q.name)
		old = p.Exists(ctx, q.key("deadlines"))
		return nil
	})
	if err != nil {
		return err
	}
	if !member.Val() {
		return fmt.Errorf("%w: %s", queues.ErrQueueNotFound, q.Address())
	}
	if old.Val() > 0 {
		return readOnly(q.Address(), "it has a deadlines set (asynq 0.21 or before)")
	}
	return nil
}

// readOnly is the error of a write refused on a layout chatq does not know.
func readOnly(what, why string) error {
	return fmt.Errorf("%s: %w: %s; chatq writes the layout of %s", what, queues.ErrReadOnly, why, Known)
}

// errReply wraps a reply a script gave that this package does not know.
var errReply = errors.New("asynq: unexpected script reply")
