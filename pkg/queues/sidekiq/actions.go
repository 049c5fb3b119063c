package sidekiq

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/pkg/queues"
)

var (
	//go:embed requeue.lua
	requeueLua string
	//go:embed remove.lua
	removeLua string

	requeueScript = luascript.New(requeueLua)
	removeScript  = luascript.New(removeLua)
)

const (
	// batch is the most dead entries one Redrive script call moves.
	batch = 100
	// removeSearchMax is how deep in a list the remove script looks for
	// the entry (LPOS MAXLEN) before its LREM, which then walks no
	// further: chatq finds jobs in a list's first listSearchMax, and new
	// jobs pushed meanwhile move them deeper.
	removeSearchMax = 2 * listSearchMax
)

// afterLocate, when set (by tests), runs between finding a job and the
// script that moves it, where another client may change it.
var afterLocate func(id string)

// readOnly is why a job in Sidekiq 8's format is not written.
var readOnly = fmt.Sprintf("%v: the job is in Sidekiq 8's format (timestamps in milliseconds); chatq retries 6.x's and 7.x's (tested with %s)",
	queues.ErrReadOnly, Tested)

// Retry moves jobs of this queue from the retry or dead set back to the
// queue as SortedEntry#retry does (retry_count less one), and scheduled
// ones as #add_to_queue does; each with one script that re-checks the
// exact entry is still in its set. A job in none of the sets (ready, in
// flight, gone) is skipped.
func (q *Queue) Retry(ctx context.Context, ids []string) (*queues.Result, error) {
	res := &queues.Result{Done: []string{}}
	readOnlyOnly := len(ids) > 0
	for _, id := range ids {
		pl, err := q.locate(ctx, id, true)
		if afterLocate != nil {
			afterLocate(id)
		}
		why := ""
		switch {
		case errors.Is(err, queues.ErrJobNotFound):
			why = "not in the schedule, retry or dead set (ready, in flight, or gone)"
		case err != nil:
			return res, err
		case pl.other != "":
			why = "a job of sidekiq:" + pl.other
		case pl.key == q.list:
			why = "already ready"
		case pl.key == "":
			why = "in flight: a worker is running it"
		case pl.p.millisLayout():
			res.Skip(id, readOnly)
			continue
		}
		if why != "" {
			res.Skip(id, why)
			readOnlyOnly = false
			continue
		}
		readOnlyOnly = false
		pushed, err := requeued(pl.raw, pl.key != q.schedule, time.Now())
		if err != nil {
			res.Skip(id, "its JSON: "+err.Error())
			continue
		}
		moved, err := requeueScript.Run(ctx, q.rdb, []string{pl.key, q.list, q.queuesKey}, q.name, pl.raw, pushed).Int64Slice()
		if err != nil {
			return res, err
		}
		if len(moved) == 1 && moved[0] == 1 {
			res.Done = append(res.Done, id)
		} else {
			res.Skip(id, "changed meanwhile: no longer in "+q.unprefixed(pl.key))
		}
	}
	if readOnlyOnly {
		return res, fmt.Errorf("%s: %w", q.Address(), queues.ErrReadOnly)
	}
	return res, nil
}

func (q *Queue) unprefixed(key string) string { return key[len(q.prefix):] }

// Remove removes jobs of this queue from whichever set or list holds
// them, each with one script that re-checks the exact entry (a job in a
// list is found only in its first 10,000 entries). A job in flight is always
// skipped: Sidekiq has no way to take a job from the thread running it.
func (q *Queue) Remove(ctx context.Context, ids []string, force bool) (*queues.Result, error) {
	res := &queues.Result{Done: []string{}}
	for _, id := range ids {
		pl, err := q.locate(ctx, id, false)
		if afterLocate != nil {
			afterLocate(id)
		}
		switch {
		case errors.Is(err, queues.ErrJobNotFound):
			res.Skip(id, "not found")
			continue
		case err != nil:
			return res, err
		case pl.other != "":
			res.Skip(id, "a job of sidekiq:"+pl.other)
			continue
		case pl.key == "":
			res.Skip(id, "in flight: Sidekiq cannot take a job from the thread running it, even with --force")
			continue
		}
		kind := "set"
		if pl.key == q.list {
			kind = "list"
		}
		n, err := removeScript.Run(ctx, q.rdb, []string{pl.key}, pl.raw, kind, removeSearchMax).Int64()
		if err != nil {
			return res, err
		}
		switch n {
		case 1:
			res.Done = append(res.Done, id)
		default:
			res.Skip(id, "changed meanwhile: no longer in "+q.unprefixed(pl.key))
		}
	}
	return res, nil
}

// Redrive moves up to max of this queue's dead jobs (0: all) back to it,
// as DeadSet#retry_all does for each (SortedEntry#retry): one ZSCAN of
// the dead set (COUNT 100, MATCH the queue's name) and one script per
// page. Only jobs that died before it started are moved, so that a job
// dying again at once is not moved twice.
func (q *Queue) Redrive(ctx context.Context, max int) (*queues.Result, error) {
	now := time.Now()
	started := float64(now.Unix()) + float64(now.Nanosecond())/1e9
	res := &queues.Result{Done: []string{}}
	match := "*" + keyspace.Quote(jsonString(q.name)) + "*"
	readOnlyOnly := false
	for cursor := uint64(0); max == 0 || len(res.Done) < max; {
		kv, next, err := q.rdb.ZScan(ctx, q.dead, cursor, match, batch).Result()
		if err != nil {
			return res, err
		}
		args := []any{q.name}
		var jids []string
		for i := 0; i+1 < len(kv); i += 2 {
			if max > 0 && len(res.Done)+len(jids) >= max {
				break
			}
			p, ok := parse(kv[i])
			var score float64
			fmt.Sscan(kv[i+1], &score)
			if !ok || p.Queue != q.name || score > started {
				continue
			}
			if p.millisLayout() {
				res.Skip(p.JID, readOnly)
				readOnlyOnly = len(res.Done) == 0
				continue
			}
			pushed, err := requeued(kv[i], true, time.Now())
			if err != nil {
				res.Skip(p.JID, "its JSON: "+err.Error())
				continue
			}
			args = append(args, kv[i], pushed)
			jids = append(jids, p.JID)
		}
		if len(jids) > 0 {
			moved, err := requeueScript.Run(ctx, q.rdb, []string{q.dead, q.list, q.queuesKey}, args...).Int64Slice()
			if err != nil {
				return res, err
			}
			for i, m := range moved {
				if m == 1 {
					res.Done = append(res.Done, jids[i])
					readOnlyOnly = false
				}
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if readOnlyOnly {
		return res, fmt.Errorf("%s: %w", q.Address(), queues.ErrReadOnly)
	}
	return res, nil
}

// Access says what each operation asks of the server.
func (k *Kind) Access() []queues.Access {
	p := k.env.Prefix
	sets := []string{p + "schedule", p + "retry", p + "dead"}
	work := []string{p + "processes", p + "*"}
	read := append(append([]string{p + "queues", p + "queue:*"}, sets...), work...)
	scripts := []string{"evalsha", "eval", "script"}
	with := func(cmds ...string) []string { return append(append([]string{}, scripts...), cmds...) }
	locate := []string{"zscan", "lrange", "llen", "sscan", "exists", "hget", "hgetall"}
	return []queues.Access{
		{Op: "discover", Commands: []string{"sscan"}, Keys: []string{p + "queues"}},
		{Op: "counts", Commands: []string{"multi", "exec", "llen", "lindex", "sismember", "zcard", "zrange", "sscan", "exists", "hget", "hgetall"}, Keys: read},
		{Op: "scan", Commands: []string{"lrange", "zrange", "sscan", "exists", "hget", "hgetall"}, Keys: read},
		{Op: "get", Commands: locate, Keys: read},
		{Op: "retry", Write: true, Commands: with(append(locate, "zrem", "lpush", "sadd")...), Keys: read},
		{Op: "remove", Write: true, Commands: with(append(locate, "zrem", "lpos", "lrem")...), Keys: read},
		{Op: "redrive", Write: true, Commands: with("zscan", "zrem", "lpush", "sadd"), Keys: []string{p + "dead", p + "queue:*", p + "queues"}},
	}
}

// jsonString is s as Ruby's JSON writes it: quoted, with no HTML escapes.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
