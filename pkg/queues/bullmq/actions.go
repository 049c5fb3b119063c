package bullmq

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lib.lua
	libLua string
	//go:embed retry.lua
	retryLua string
	//go:embed redrive.lua
	redriveLua string
	//go:embed remove.lua
	removeLua string
	//go:embed pause.lua
	pauseLua string
	//go:embed recover.lua
	recoverLua string
)

// Each script is lib.lua's helpers followed by its own lines (script).
var (
	retryScript   = script(retryLua)
	redriveScript = script(redriveLua)
	removeScript  = script(removeLua)
	pauseScript   = script(pauseLua)
	recoverScript = script(recoverLua)
)

// script is the script of body with lib.lua's helpers in front. These
// scripts call no allowed, so luascript.Permitted is not among them.
func script(body string) *luascript.Script {
	return luascript.New(libLua, body)
}

// batch is the most jobs one script call moves.
const batch = 100

// writable returns the layout ("5" or "6") of a queue whose meta says
// version, or an error matching queues.ErrReadOnly.
func writable(version string) (string, error) {
	v, ok := strings.CutPrefix(version, "bullmq:")
	major, _, _ := strings.Cut(v, ".")
	if _, known := Tested[major]; ok && known {
		return major, nil
	}
	var known []string
	for _, t := range Tested {
		known = append(known, t)
	}
	sort.Strings(known)
	got := version
	if got == "" {
		got = "none"
	}
	return "", fmt.Errorf("%w: meta's version is %s; chatq writes BullMQ's 5.x and 6.x layouts (tested with %s)",
		queues.ErrReadOnly, got, strings.Join(known, " and "))
}

// layout reads meta's version: the layout the scripts write, and the
// version they check has not changed.
func (q *Queue) layout(ctx context.Context) (layout, version string, err error) {
	version, err = q.rdb.HGet(ctx, q.key("meta"), "version").Result()
	if errors.Is(err, redis.Nil) {
		n, err := q.rdb.Exists(ctx, q.key("meta"), q.key("wait"), q.key("failed"), q.key("active")).Result()
		if err != nil {
			return "", "", err
		}
		if n == 0 {
			return "", "", fmt.Errorf("%s: %w", q.Address(), queues.ErrQueueNotFound)
		}
	} else if err != nil {
		return "", "", err
	}
	layout, err = writable(version)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", q.Address(), err)
	}
	return layout, version, nil
}

// Retry moves failed jobs back to be taken, as Job.retry('failed') does;
// a job not in failed is skipped.
func (q *Queue) Retry(ctx context.Context, ids []string) (*queues.Result, error) {
	layout, version, err := q.layout(ctx)
	if err != nil {
		return nil, err
	}
	res := &queues.Result{Done: []string{}}
	for _, id := range ids {
		keys := []string{q.key(id), q.key("events"), q.key("failed"), q.key("wait"), q.key("meta"),
			q.key("paused"), q.key("active"), q.key("marker"), q.key("prioritized"), q.key("pc")}
		n, err := retryScript.Run(ctx, q.rdb, keys, id, layout, version).Int()
		if err != nil {
			return res, err
		}
		switch n {
		case 1:
			res.Done = append(res.Done, id)
		case -1:
			res.Skip(id, "not found")
		default:
			res.Skip(id, "not failed: only failed jobs are retried")
		}
	}
	return res, nil
}

// Remove removes jobs from whichever state holds them, as Job.remove
// does without removing children; an active job only with force (and
// then its lock too).
func (q *Queue) Remove(ctx context.Context, ids []string, force bool) (*queues.Result, error) {
	layout, version, err := q.layout(ctx)
	if err != nil {
		return nil, err
	}
	f := "0"
	if force {
		f = "1"
	}
	res := &queues.Result{Done: []string{}}
	for _, id := range ids {
		keys := []string{q.key(id), q.key(id) + ":lock", q.key("repeat"), q.key("meta"), q.key("events"),
			q.key("completed"), q.key("waiting-children"), q.key("delayed"), q.key("failed"), q.key("prioritized"),
			q.key("wait"), q.key("paused"), q.key("active")}
		v, err := removeScript.Run(ctx, q.rdb, keys, id, q.base, f, removeListMax, layout, version).Slice()
		if err != nil {
			return res, err
		}
		code, _ := v[0].(int64)
		what, _ := v[1].(string)
		switch code {
		case 1:
			res.Done = append(res.Done, id)
		case -1:
			res.Skip(id, "not found")
		case -2:
			res.Skip(id, "active: its worker may finish it; --force removes it")
		case -4:
			res.Skip(id, fmt.Sprintf("the %s list is longer than %d: removing from it would walk it", what, removeListMax))
		case -8:
			res.Skip(id, "the next job of a job scheduler: remove the scheduler with BullMQ")
		default:
			return res, fmt.Errorf("bullmq remove script: unexpected reply %v", v)
		}
	}
	return res, nil
}

// Redrive moves up to max failed jobs (0: all) to wait, in calls of at
// most 100, as Queue.retryJobs({state: 'failed'}) does. Only jobs that
// failed before it started are moved, so a job failing again at once is
// not moved twice.
func (q *Queue) Redrive(ctx context.Context, max int) (*queues.Result, error) {
	layout, version, err := q.layout(ctx)
	if err != nil {
		return nil, err
	}
	started := time.Now().UnixMilli()
	res := &queues.Result{Done: []string{}}
	keys := []string{q.base, q.key("events"), q.key("failed"), q.key("wait"), q.key("paused"), q.key("meta"),
		q.key("active"), q.key("marker")}
	for max == 0 || len(res.Done) < max {
		count := batch
		if max > 0 && max-len(res.Done) < count {
			count = max - len(res.Done)
		}
		moved, err := redriveScript.Run(ctx, q.rdb, keys, count, started, layout, version).StringSlice()
		if err != nil {
			return res, err
		}
		res.Done = append(res.Done, moved...)
		if len(moved) < count {
			break
		}
	}
	return res, nil
}

// Pause pauses the queue as Queue.pause() does.
func (q *Queue) Pause(ctx context.Context) error { return q.pause(ctx, "paused") }

// Resume resumes the queue as Queue.resume() does (on 6.x, in calls that
// each move at most 1000 jobs a 5.x pause left in the paused list).
func (q *Queue) Resume(ctx context.Context) error { return q.pause(ctx, "resumed") }

func (q *Queue) pause(ctx context.Context, what string) error {
	layout, version, err := q.layout(ctx)
	if err != nil {
		return err
	}
	// BullMQ passes the source list first; this script names its keys by
	// what they are, whichever way it goes.
	keys := []string{q.key("wait"), q.key("paused"), q.key("meta"), q.key("prioritized"), q.key("events"), q.key("delayed"), q.key("marker")}
	emit := "1"
	for {
		left, err := pauseScript.Run(ctx, q.rdb, keys, what, layout, version, 1000, emit).Int64()
		if err != nil || left == 0 {
			return err
		}
		emit = "0"
	}
}

// Recover moves active jobs whose lock is gone back to wait, as BullMQ's
// stalled-job check moves each (a job past the Kind's MaxStalledCount
// stalls is marked to fail when next taken), reading the active list in
// pages of 100 and moving each page in one script.
func (q *Queue) Recover(ctx context.Context, opt queues.RecoverOptions) (*queues.Result, error) {
	layout, version, err := q.layout(ctx)
	if err != nil {
		return nil, err
	}
	res := &queues.Result{Done: []string{}}
	keys := []string{q.key("wait"), q.key("active"), q.key("stalled"), q.key("meta"), q.key("paused"),
		q.key("marker"), q.key("events"), q.key("repeat")}
	run := func(ids []string) (int, error) {
		if opt.Max > 0 && len(ids) > opt.Max-len(res.Done) {
			ids = ids[:opt.Max-len(res.Done)]
		}
		args := []any{q.kind.MaxStalledCount, removeListMax, q.base, version, layout}
		for _, id := range ids {
			args = append(args, id)
		}
		moved, err := recoverScript.Run(ctx, q.rdb, keys, args...).StringSlice()
		res.Done = append(res.Done, moved...)
		return len(moved), err
	}
	full := func() bool { return opt.Max > 0 && len(res.Done) >= opt.Max }
	if len(opt.IDs) > 0 {
		for i := 0; i < len(opt.IDs) && !full(); i += batch {
			ids := opt.IDs[i:min(i+batch, len(opt.IDs))]
			if _, err := run(ids); err != nil {
				return res, err
			}
		}
		done := map[string]bool{}
		for _, id := range res.Done {
			done[id] = true
		}
		for _, id := range opt.IDs {
			switch {
			case done[id]:
			case full():
				res.Skip(id, "past --max")
			default:
				res.Skip(id, "not a stalled active job (not active, or its lock is held)")
			}
		}
		return res, nil
	}
	for off := int64(0); !full(); {
		ids, err := q.rdb.LRange(ctx, q.key("active"), off, off+batch-1).Result()
		if err != nil || len(ids) == 0 {
			return res, err
		}
		n, err := run(ids)
		if err != nil {
			return res, err
		}
		if len(ids) < batch {
			break
		}
		off += int64(len(ids) - n) // the moved ones left the list
	}
	return res, nil
}

// Access says what each operation asks of the server.
func (k *Kind) Access() []queues.Access {
	p := k.env.Prefix
	q := p + "*:"
	scripts := []string{"evalsha", "eval", "script|load"}
	with := func(cmds ...string) []string { return append(append([]string{}, scripts...), cmds...) }
	stateKeys := []string{q + "meta", q + "wait", q + "paused", q + "active", q + "prioritized", q + "delayed",
		q + "failed", q + "completed", q + "waiting-children"}
	return []queues.Access{
		{Op: "discover", Commands: []string{"scan", "hmget"}, Keys: []string{q + "meta"}},
		{Op: "counts", Commands: []string{"hmget", "exists", "llen", "zcard", "lindex"}, Keys: append(stateKeys, q+"*")},
		{Op: "scan", Commands: []string{"lrange", "zrange", "hmget"}, Keys: append(stateKeys, q+"*")},
		{Op: "get", Commands: []string{"hmget", "zscore", "lpos", "exists", "llen"}, Keys: append(stateKeys, q+"*")},
		{Op: "retry", Write: true, Commands: with("hget", "exists", "zrem", "hdel", "hmget", "hexists", "llen", "incr",
			"zadd", "lpush", "rpush", "sadd", "hset", "xadd"), Keys: []string{q + "*"}},
		{Op: "remove", Write: true, Commands: with("hget", "exists", "zscore", "lpos", "llen", "srem", "scard", "zrem", "hexists",
			"rpush", "hmget", "zadd", "xadd", "lrem", "get", "del", "hset"), Keys: []string{q + "*"}},
		{Op: "redrive", Write: true, Commands: with("hget", "hexists", "hmget", "llen", "zrangebyscore", "hdel", "exists",
			"zrem", "sadd", "hset", "xadd", "lpush", "zadd"), Keys: []string{q + "*"}},
		{Op: "pause", Write: true, Commands: with("hget", "exists", "rename", "hset", "hdel", "del", "zcard", "zadd",
			"zrange", "lrange", "rpush", "ltrim", "llen", "xadd"), Keys: []string{q + "*"}},
		{Op: "recover", Write: true, Commands: with("hget", "hset", "llen", "lrange", "xtrim", "exists", "lrem", "srem",
			"hincrby", "zscore", "hexists", "hmget", "rpush", "zadd", "xadd"), Keys: []string{q + "*"}},
	}
}
