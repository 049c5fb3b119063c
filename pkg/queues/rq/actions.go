package rq

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/luascript"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

var (
	//go:embed requeue.lua
	requeueLua    string
	requeueScript = luascript.New(requeueLua)
	//go:embed remove.lua
	removeLua    string
	removeScript = luascript.New(removeLua)
	//go:embed abandon.lua
	abandonLua    string
	abandonScript = luascript.New(abandonLua)
)

// MaxListWalk is the longest queue list Remove lets LREM walk to take a
// ready job out (LREM is O(n)); past it the job is skipped.
var MaxListWalk int64 = 10000

// defaultFailureTTL is RQ's DEFAULT_FAILURE_TTL (one year), for a job
// whose hash names none.
const defaultFailureTTL = 31536000

// batch is the most jobs Redrive and Recover read per page.
const batch = 100

// utcformat is now as RQ's utcformat writes it.
func utcformat(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// Retry requeues failed jobs as RQ's FailedJobRegistry.requeue does, one
// script per job re-checking it is still in the failed registry. Only a
// failed job retries: a scheduled one runs when due (RQ has no "run now"
// for it) and is skipped.
func (q *Queue) Retry(ctx context.Context, ids []string) (*queues.Result, error) {
	res := &queues.Result{Done: []string{}}
	for _, id := range ids {
		if err := q.requeue(ctx, id, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (q *Queue) requeue(ctx context.Context, id string, res *queues.Result) error {
	n, err := requeueScript.Run(ctx, q.rdb,
		[]string{q.reg("failed"), q.jobKey(id), q.queueKey(), q.queuesKey()},
		id, utcformat(time.Now()), zlibText(""), queuePrefix+q.name).Int()
	if err != nil {
		return err
	}
	switch n {
	case 1:
		res.Done = append(res.Done, id)
	case 0:
		res.Skip(id, "not in the failed registry")
	default:
		res.Skip(id, "no job hash")
	}
	return nil
}

// Remove deletes jobs as RQ's Job.delete does, one script per job; a
// started job only with force, a ready job only while the queue list is
// at most MaxListWalk long.
func (q *Queue) Remove(ctx context.Context, ids []string, force bool) (*queues.Result, error) {
	res := &queues.Result{Done: []string{}}
	f := "0"
	if force {
		f = "1"
	}
	for _, id := range ids {
		keys := []string{q.queueKey(), q.jobKey(id), q.jobKey(id) + ":dependencies",
			q.jobKey(id) + ":dependents", q.resultsKey(id), q.reg("wip")}
		for _, r := range registries {
			if r.kind != "wip" {
				keys = append(keys, q.reg(r.kind))
			}
		}
		n, err := removeScript.Run(ctx, q.rdb, keys, id, f, MaxListWalk).Int()
		if err != nil {
			return res, err
		}
		switch n {
		case 1:
			res.Done = append(res.Done, id)
		case 0:
			res.Skip(id, "not found")
		case -2:
			res.Skip(id, "started: a worker may still finish it (use force)")
		case -5:
			return res, fmt.Errorf("rq: job %s: %w (a started job in RQ 2.x's layout; writes tested with RQ %s)", id, queues.ErrReadOnly, Tested)
		case -4:
			res.Skip(id, fmt.Sprintf("queue list longer than %d: LREM would walk it", MaxListWalk))
		}
	}
	return res, nil
}

// Redrive requeues up to max failed jobs (0: all), reading the failed
// registry 100 at a time (oldest expiry first) and requeueing each with
// Retry's script.
func (q *Queue) Redrive(ctx context.Context, max int) (*queues.Result, error) {
	res := &queues.Result{Done: []string{}}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	var skipped int64
	for max == 0 || len(res.Done) < max {
		n := int64(batch)
		if max > 0 && int64(max-len(res.Done)) < n {
			n = int64(max - len(res.Done))
		}
		// Skipped ones stay in the set (their hash is gone), so page past them.
		ids, err := q.rdb.ZRangeByScore(ctx, q.reg("failed"), &redis.ZRangeBy{
			Min: "(" + now, Max: "+inf", Offset: skipped, Count: n}).Result()
		if err != nil {
			return res, err
		}
		for _, id := range ids {
			before := len(res.Done)
			if err := q.requeue(ctx, id, res); err != nil {
				return res, err
			}
			if len(res.Done) == before {
				skipped++
			}
		}
		if int64(len(ids)) < n {
			break
		}
	}
	return res, nil
}

// Recover moves started jobs whose registry score (their expiry: the
// worker's heartbeat stopped extending it) is past to the failed
// registry, as RQ 1.13's StartedJobRegistry.cleanup does, with its
// "Moved to FailedJobRegistry at ..." exc_info. A job with retries left is
// skipped: RQ's cleanup retries it through Retry's intervals.
func (q *Queue) Recover(ctx context.Context, opt queues.RecoverOptions) (*queues.Result, error) {
	res := &queues.Result{Done: []string{}}
	one := func(id string) error {
		now := time.Now()
		n, err := abandonScript.Run(ctx, q.rdb,
			[]string{q.reg("wip"), q.reg("failed"), q.jobKey(id), q.jobKey(id) + ":dependencies", q.jobKey(id) + ":dependents"},
			id, now.Unix(), zlibText("Moved to FailedJobRegistry at "+now.Format("2006-01-02 15:04:05.000000")),
			defaultFailureTTL).Int()
		if err != nil {
			return err
		}
		switch n {
		case 1:
			res.Done = append(res.Done, id)
		case 0:
			res.Skip(id, "not an expired entry of the started registry")
		case -1:
			res.Skip(id, "no job hash (entry dropped, as RQ's cleanup does)")
		case -3:
			res.Skip(id, "retries left: RQ's cleanup retries it")
		}
		return nil
	}
	if len(opt.IDs) > 0 {
		for _, id := range opt.IDs {
			if err := one(id); err != nil {
				return res, err
			}
		}
		return res, nil
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	var offset int64
	for opt.Max == 0 || len(res.Done) < opt.Max {
		n := int64(batch)
		if opt.Max > 0 && int64(opt.Max-len(res.Done)) < n {
			n = int64(opt.Max - len(res.Done))
		}
		ids, err := q.rdb.ZRangeByScore(ctx, q.reg("wip"), &redis.ZRangeBy{
			Min: "-inf", Max: now, Offset: offset, Count: n}).Result()
		if err != nil {
			return res, err
		}
		for _, id := range ids {
			if strings.Contains(id, ":") {
				return res, fmt.Errorf("rq: started registry member %q: %w (RQ 2.x's job:execution layout; writes tested with RQ %s)", id, queues.ErrReadOnly, Tested)
			}
			before := len(res.Done)
			if err := one(id); err != nil {
				return res, err
			}
			if len(res.Done) == before && res.Skipped[id] != "no job hash (entry dropped, as RQ's cleanup does)" {
				offset++
			}
		}
		if int64(len(ids)) < n {
			break
		}
	}
	return res, nil
}

// Access says what each operation asks of the server.
func (k *Kind) Access() []queues.Access {
	p := k.env.Prefix + "rq:"
	return []queues.Access{
		{Op: "discover", Commands: []string{"sscan"}, Keys: []string{p + "queues"}},
		{Op: "read", Commands: []string{"llen", "zcard", "zcount", "sismember", "lrange", "zrange", "hmget", "zscore"},
			Keys: []string{p + "*"}},
		{Op: "retry", Write: true, Commands: []string{"evalsha", "eval", "zscore", "exists", "zrem", "hset", "sadd", "hget", "expire", "rpush", "zrangebyscore"},
			Keys: []string{p + "*"}},
		{Op: "remove", Write: true, Commands: []string{"evalsha", "eval", "exists", "zscore", "hget", "llen", "lrem", "zrem", "del"},
			Keys: []string{p + "*"}},
		{Op: "recover", Write: true, Commands: []string{"evalsha", "eval", "zrangebyscore", "zscore", "zrem", "exists", "hget", "hset", "expire", "zadd"},
			Keys: []string{p + "*"}},
	}
}
