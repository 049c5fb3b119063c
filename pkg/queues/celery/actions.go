package celery

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

var (
	//go:embed remove_listed.lua
	removeListedLua string
	//go:embed remove_unacked.lua
	removeUnackedLua string
	//go:embed restore.lua
	restoreLua string
	//go:embed purge.lua
	purgeLua string

	removeListedScript  = luascript.New(removeListedLua)
	removeUnackedScript = luascript.New(removeUnackedLua)
	restoreScript       = luascript.New(restoreLua)
	purgeScript         = luascript.New(purgeLua)
)

// Purge deletes the queue's ready messages as `celery purge` does
// (kombu's _purge: its lists, one per priority step), in one script, if
// they are at most most (-1: any); else it deletes nothing and returns a
// *queues.NotEmptyError. Messages workers hold (unacked: inflight, and
// delayed ones waiting for their ETA) are left, as kombu leaves them.
func (q *Queue) Purge(ctx context.Context, most int64) (int64, error) {
	keys := make([]string, 0, len(steps)+1)
	for _, s := range steps {
		keys = append(keys, q.list(s))
	}
	keys = append(keys, q.binding(q.name))
	r, err := purgeScript.Run(ctx, q.rdb, keys, most).Int64Slice()
	switch {
	case err != nil:
		return 0, err
	case len(r) != 2:
		return 0, fmt.Errorf("purge: unexpected reply %v", r)
	case r[0] == -1:
		return 0, fmt.Errorf("%s: %w", q.Address(), queues.ErrQueueNotFound)
	case r[0] == 0:
		return 0, &queues.NotEmptyError{Held: r[1]}
	}
	return r[1], nil
}

// Remove removes tasks by id: a ready one from its list (found within
// SearchMax of the list's tail, and removed only from there: LREM stops
// where LPOS found it), an unacked one (delayed or inflight) only with
// force, as kombu's ack removes it. Removing an unacked message drops
// kombu's record only: a worker that still holds it still runs it (use
// `celery control revoke` to stop that), and none restores it later.
func (q *Queue) Remove(ctx context.Context, ids []string, force bool) (*queues.Result, error) {
	res := &queues.Result{Done: []string{}}
	for _, id := range ids {
		f, err := q.find(ctx, id)
		if errors.Is(err, queues.ErrJobNotFound) {
			res.Skip(id, fmt.Sprintf("not found (searched each list's last %d and %d unacked)", q.kind.SearchMax, q.kind.MaxUnacked))
			continue
		} else if err != nil {
			return res, err
		}
		var n int
		if f.list != "" {
			n, err = removeListedScript.Run(ctx, q.rdb, []string{f.list}, f.msg.raw, q.kind.SearchMax).Int()
		} else if !force {
			res.Skip(id, f.job.State+": a worker holds it (unacked); --force removes kombu's record of it, the worker may still run it")
			continue
		} else {
			n, err = removeUnackedScript.Run(ctx, q.rdb, []string{q.unacked(), q.unackedIndex()}, f.tag, f.msg.raw).Int()
		}
		if err != nil {
			return res, err
		}
		if n == 1 {
			res.Done = append(res.Done, id)
		} else {
			res.Skip(id, "changed under chatq (taken, acked or restored): nothing removed")
		}
	}
	return res, nil
}

// Recover restores the queue's messages unacked for longer than the
// visibility timeout (opt.IdleFor when set, else Kind.VisibilityTimeout)
// to the queue's list, as kombu's restore_visible does: marked
// redelivered, pushed at the end workers take from, removed from unacked
// and unacked_index in the same script. It reads unacked_index newest
// first in pages of 100 (as restore_visible's ZREVRANGEBYSCORE does, so
// the oldest is pushed last and taken first); opt.IDs (task ids or delivery tags) narrow it,
// opt.Max bounds it. kombu's unacked_mutex is not taken: each script is
// atomic, as kombu's per-message transaction is.
func (q *Queue) Recover(ctx context.Context, opt queues.RecoverOptions) (*queues.Result, error) {
	vt := q.kind.VisibilityTimeout
	if opt.IdleFor > 0 {
		vt = opt.IdleFor
	}
	ceil := float64(time.Now().Add(-vt).UnixMicro()) / 1e6
	want := map[string]bool{}
	for _, id := range opt.IDs {
		want[id] = true
	}
	res := &queues.Result{Done: []string{}}
	r := q.router()
	var off int64
	for opt.Max == 0 || len(res.Done) < opt.Max {
		tags, err := q.rdb.ZRevRangeByScore(ctx, q.unackedIndex(), &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatFloat(ceil, 'f', -1, 64), Offset: off, Count: 100}).Result()
		if err != nil {
			return res, err
		}
		if len(tags) == 0 {
			break
		}
		vals, err := q.rdb.HMGet(ctx, q.unacked(), tags...).Result()
		if err != nil {
			return res, err
		}
		for i, v := range vals {
			raw, ok := v.(string)
			if !ok {
				off++ // an index entry without its message: kombu's restore drops it, chatq leaves it
				continue
			}
			m, err := decodeUnacked(raw)
			if err != nil {
				off++
				continue
			}
			id := m.env.taskID()
			if len(want) > 0 && !want[id] && !want[tags[i]] {
				off++
				continue
			}
			dest, err := r.lookup(ctx, m.exchange, m.routingKey)
			if err != nil {
				return res, err
			}
			if len(dest) != 1 || dest[0] != q.name {
				off++ // another queue's
				continue
			}
			if opt.Max > 0 && len(res.Done) >= opt.Max {
				break
			}
			payload, err := redelivered(m.msgRaw)
			if err != nil {
				off++
				res.Skip(id, "message does not decode: "+err.Error())
				continue
			}
			n, err := restoreScript.Run(ctx, q.rdb, []string{q.unacked(), q.unackedIndex(), q.list(0)},
				tags[i], raw, payload, strconv.FormatFloat(ceil, 'f', -1, 64)).Int()
			if err != nil {
				return res, err
			}
			switch n {
			case 1:
				res.Done = append(res.Done, id)
			case 0:
				res.Skip(id, "acked or restored under chatq")
			default:
				off++
				res.Skip(id, "delivered again under chatq: within the visibility timeout")
			}
		}
		if len(tags) < 100 {
			break
		}
	}
	return res, nil
}
