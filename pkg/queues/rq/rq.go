// Package rq is chatq's RQ kind: it reads and operates the queues that RQ
// (Python, the 1.x layout; 2.x read-only) keeps on Redis, behind
// pkg/queues's Kind and Queue and its Retrier, Remover, Redriver,
// Recoverer and AccessLister. RQ has no pause, so no Pauser.
//
// Addresses are "rq:QUEUE". chatq's --prefix (Env.Prefix) goes in front
// of every key. Keys read: rq:queues (set of queue keys, for Discover),
// rq:queue:<q> (list: ready), the sorted sets rq:scheduled:<q> (delayed,
// scored by run time), rq:wip:<q> (inflight), rq:failed:<q> (dead),
// rq:finished:<q> (done), rq:deferred:<q> and rq:canceled:<q> (Other),
// each scored by expiry, and the job hashes rq:job:<id> (never the pickled
// "data"). Keys written, by the actions only and as RQ writes them: the
// queue list, the registries, the job hash's status, enqueued_at,
// started_at, ended_at and exc_info fields, rq:queues, and on removal the
// job's hash, rq:job:<id>:dependencies, rq:job:<id>:dependents and
// rq:results:<id>.
//
// Round trips: Discover one SSCAN; Counts one pipeline; Scan two per page
// (ids, then a pipeline of HMGETs); Get one pipeline; Retry and Remove one
// script per job, Redrive and Recover one page read and one script per job
// of each batch of at most 100. Every script re-checks the job's place
// before its first write and is atomic.
package rq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// Tested is the RQ version chatq's writes were tested with.
const Tested = "1.13.0"

// Kind is the RQ kind.
type Kind struct{ env queues.Env }

var (
	_ queues.Kind         = (*Kind)(nil)
	_ queues.AccessLister = (*Kind)(nil)
)

// New returns the RQ kind on env.
func New(env queues.Env) *Kind { return &Kind{env: env} }

// Name is "rq".
func (k *Kind) Name() string { return "rq" }

const queuePrefix = "rq:queue:"

// Discover is one SSCAN of rq:queues, whose members are the full keys
// rq:queue:<name> that RQ adds on every enqueue.
func (k *Kind) Discover(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
	members, next, err := k.env.RDB.SScan(ctx, k.env.Prefix+"rq:queues", cursor, "", count).Result()
	if err != nil {
		return nil, 0, err
	}
	var out []string
	for _, m := range members {
		// RQ writes the key it knows (no Env.Prefix); a member with the
		// prefix is taken too.
		m = strings.TrimPrefix(m, k.env.Prefix)
		if name, ok := strings.CutPrefix(m, queuePrefix); ok && name != "" {
			out = append(out, name)
		}
	}
	return out, next, nil
}

// Open returns the queue at name; no server call.
func (k *Kind) Open(name string) (queues.Queue, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: rq queue name is empty", names.ErrInvalid)
	}
	return &Queue{rdb: k.env.RDB, pre: k.env.Prefix, name: name}, nil
}

// Queue is one RQ queue.
type Queue struct {
	rdb  redis.UniversalClient
	pre  string
	name string
}

var (
	_ queues.Queue     = (*Queue)(nil)
	_ queues.Retrier   = (*Queue)(nil)
	_ queues.Remover   = (*Queue)(nil)
	_ queues.Redriver  = (*Queue)(nil)
	_ queues.Recoverer = (*Queue)(nil)
)

// Address is "rq:QUEUE".
func (q *Queue) Address() string { return "rq:" + q.name }

func (q *Queue) queueKey() string            { return q.pre + queuePrefix + q.name }
func (q *Queue) reg(kind string) string      { return q.pre + "rq:" + kind + ":" + q.name }
func (q *Queue) jobKey(id string) string     { return q.pre + "rq:job:" + id }
func (q *Queue) queuesKey() string           { return q.pre + "rq:queues" }
func (q *Queue) resultsKey(id string) string { return q.pre + "rq:results:" + id }

// registry is one of RQ's per-queue sorted sets; cleaned ones are those
// whose RQ count drops entries scored (expired) at or before now.
type registry struct {
	kind, state, kindState string
	cleaned                bool
}

var registries = []registry{
	{"scheduled", queues.Delayed, "scheduled", false},
	{"wip", queues.Inflight, "started", true},
	{"failed", queues.Dead, "failed", true},
	{"finished", queues.Done, "finished", true},
	{"deferred", "", "deferred", false},
	{"canceled", "", "canceled", false},
}

// Counts is one pipeline: LLEN of the queue, and per registry ZCARD, or
// ZCOUNT (now, +inf] for those whose RQ count first runs cleanup (started,
// failed, finished), so each equals what RQ's own count returns without
// chatq writing RQ's cleanup.
func (q *Queue) Counts(ctx context.Context) (*queues.Counts, error) {
	now := strconv.FormatInt(time.Now().Unix(), 10)
	var ready *redis.IntCmd
	regs := make([]*redis.IntCmd, len(registries))
	var member *redis.BoolCmd
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		ready = p.LLen(ctx, q.queueKey())
		for i, r := range registries {
			if r.cleaned {
				regs[i] = p.ZCount(ctx, q.reg(r.kind), "("+now, "+inf")
			} else {
				regs[i] = p.ZCard(ctx, q.reg(r.kind))
			}
		}
		member = p.SIsMember(ctx, q.queuesKey(), queuePrefix+q.name)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := &queues.Counts{Ready: queues.N(ready.Val()), Other: map[string]int64{}}
	for i, r := range registries {
		n := regs[i].Val()
		switch r.state {
		case queues.Delayed:
			c.Delayed = queues.N(n)
		case queues.Inflight:
			c.Inflight = queues.N(n)
		case queues.Dead:
			c.Dead = queues.N(n)
		case queues.Done:
			c.Done = queues.N(n)
		default:
			c.Other[r.kindState] = n
		}
	}
	var other int64
	for _, n := range c.Other {
		other += n
	}
	if !member.Val() && c.Total()+other == 0 {
		return nil, fmt.Errorf("%w: %s", queues.ErrQueueNotFound, q.Address())
	}
	return c, nil
}
