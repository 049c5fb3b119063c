package stream

import (
	"context"
	"errors"

	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// Counts reads the group's counts: ready (the group's lag), inflight (its
// PEL's size) and the oldest ready entry's age in one script on the
// stream (counts.lua, one instant), and dead (XLEN of the default
// dead-letter stream) in the same pipeline. Delayed, retry and done are
// nil: a group has no such states.
func (q *Queue) Counts(ctx context.Context) (*queues.Counts, error) {
	var res *redis.Cmd
	var dead *redis.IntCmd
	_, _ = q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		res = countsScript.Run(ctx, p, []string{q.key}, q.group)
		dead = p.XLen(ctx, q.dead)
		return nil
	})
	if res.Err() != nil && isNoScript(res.Err()) {
		// A pipeline cannot load a script the server lacks: run it alone.
		res = countsScript.Run(ctx, q.rdb, []string{q.key}, q.group)
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	st, v, err := status(res.Val())
	if err != nil {
		return nil, err
	}
	if st != "ok" {
		return nil, q.errNoQueue()
	}
	c := &queues.Counts{Inflight: queues.N(num(v[0]))}
	if n := num(v[2]); n >= 0 {
		c.Ready = queues.N(n)
	}
	if oldest := str(v[3]); oldest != "" {
		age := serverTime(v[4], v[5]).Sub(idTime(oldest))
		age = max(age, 0) // an id set ahead of the server's clock
		c.OldestReady = &age
	}
	switch n, err := dead.Result(); {
	case err == nil:
		c.Dead = queues.N(n)
	case errors.Is(err, redis.Nil):
		c.Dead = queues.N(0)
	default:
		// A dead-letter key of another type is not this queue's: the
		// count is unknown rather than the whole reading failed.
		if !isGone(err) {
			return nil, err
		}
	}
	if num(v[6]) == 0 {
		c.ReadOnly = "Redis before 7.0 (XINFO GROUPS has no lag): chatq writes stream groups on 7.0 and later, the versions it was tested with"
	}
	return c, nil
}

// isNoScript reports a NOSCRIPT reply.
func isNoScript(err error) bool {
	return err != nil && len(err.Error()) >= 8 && err.Error()[:8] == "NOSCRIPT"
}
