package bullmq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// listMax is the longest list that Get searches (LPOS MAXLEN) and that a
// script removes a job from (LREM walks the list): past it chatq says
// what it cannot know, or refuses, rather than walk a big key.
const listMax = 1000

// removeListMax is the longest list Remove and Recover take a job out of:
// LREM of one id from the head is about a millisecond per 100,000 entries.
const removeListMax = 100000

// Counts reads every state's size in one pipeline, as BullMQ's getCounts
// counts them (and its deprecated "0:" marker at a list's end is not a
// job), then the oldest waiting job's timestamps.
func (q *Queue) Counts(ctx context.Context) (*queues.Counts, error) {
	var (
		meta                                                     *redis.SliceCmd
		exists                                                   *redis.IntCmd
		wait, paused, active                                     *redis.IntCmd
		prioritized, delayed, failed, completed, waitingChildren *redis.IntCmd
		waitTail, pausedTail                                     *redis.StringCmd
	)
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		meta = p.HMGet(ctx, q.key("meta"), "version", "paused")
		exists = p.Exists(ctx, q.key("meta"))
		wait = p.LLen(ctx, q.key("wait"))
		paused = p.LLen(ctx, q.key("paused"))
		active = p.LLen(ctx, q.key("active"))
		prioritized = p.ZCard(ctx, q.key("prioritized"))
		delayed = p.ZCard(ctx, q.key("delayed"))
		failed = p.ZCard(ctx, q.key("failed"))
		completed = p.ZCard(ctx, q.key("completed"))
		waitingChildren = p.ZCard(ctx, q.key("waiting-children"))
		waitTail = p.LIndex(ctx, q.key("wait"), -1)
		pausedTail = p.LIndex(ctx, q.key("paused"), -1)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	nWait, nPaused := withoutMarker(wait.Val(), waitTail.Val()), withoutMarker(paused.Val(), pausedTail.Val())
	c := &queues.Counts{
		Ready:    queues.N(nWait + nPaused + prioritized.Val()),
		Delayed:  queues.N(delayed.Val()),
		Inflight: queues.N(active.Val()),
		Dead:     queues.N(failed.Val()),
		Done:     queues.N(completed.Val()),
		Other: map[string]int64{
			"prioritized":      prioritized.Val(),
			"paused":           nPaused,
			"waiting-children": waitingChildren.Val(),
		},
	}
	if exists.Val() == 0 && c.Total() == 0 && waitingChildren.Val() == 0 {
		return nil, fmt.Errorf("%s: %w", q.Address(), queues.ErrQueueNotFound)
	}
	v := meta.Val()
	c.Version, _ = v[0].(string)
	isPaused := v[1] != nil
	c.Paused = &isPaused
	if _, err := writable(c.Version); err != nil {
		c.ReadOnly = err.Error()
	}
	oldest := waitTail.Val()
	if nWait == 0 {
		oldest = pausedTail.Val()
	}
	if oldest != "" && !strings.HasPrefix(oldest, "0:") {
		c.OldestReady, err = q.readyFor(ctx, oldest)
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// withoutMarker is a list's length less BullMQ's deprecated marker, which
// getCounts does not count either.
func withoutMarker(n int64, tail string) int64 {
	if n > 0 && strings.HasPrefix(tail, "0:") {
		return n - 1
	}
	return n
}

// readyFor is how long job id has been ready: since it was added, or
// since its delay ran out.
func (q *Queue) readyFor(ctx context.Context, id string) (*time.Duration, error) {
	v, err := q.rdb.HMGet(ctx, q.key(id), "timestamp", "delay").Result()
	if err != nil {
		return nil, err
	}
	ts, ok := intField(v[0])
	if !ok {
		return nil, nil // removed meanwhile
	}
	delay, _ := intField(v[1])
	d := time.Since(time.UnixMilli(ts + delay))
	if d < 0 {
		d = 0
	}
	return &d, nil
}

// source is one list or sorted set that holds jobs of a state.
type source struct {
	key, state, kindState string
	list                  bool
}

// sources are the keys that hold jobs of chatq's state s, in the order a
// scan reads them.
func (q *Queue) sources(s string) ([]source, error) {
	switch s {
	case queues.Ready:
		return []source{
			{q.key("wait"), queues.Ready, "waiting", true},
			{q.key("paused"), queues.Ready, "paused", true},
			{q.key("prioritized"), queues.Ready, "prioritized", false},
		}, nil
	case queues.Delayed:
		return []source{{q.key("delayed"), queues.Delayed, "delayed", false}}, nil
	case queues.Inflight:
		return []source{{q.key("active"), queues.Inflight, "active", true}}, nil
	case queues.Dead:
		return []source{{q.key("failed"), queues.Dead, "failed", false}}, nil
	case queues.Done:
		return []source{{q.key("completed"), queues.Done, "completed", false}}, nil
	case "":
		var all []source
		for _, st := range queues.States {
			if st == queues.Retry {
				continue
			}
			s, _ := q.sources(st)
			all = append(all, s...)
		}
		return all, nil
	}
	return nil, fmt.Errorf("%w: bullmq has no state %q (it has ready, delayed, inflight, dead, done)", names.ErrInvalid, s)
}

// jobFields are the job hash's fields chatq reads, in HMGET order.
var jobFields = []string{"name", "data", "opts", "timestamp", "delay", "priority", "processedOn", "finishedOn",
	"failedReason", "stacktrace", "returnvalue", "atm", "attemptsMade", "stc", "parentKey", "pb"}

// Scan reads each state's list or set in pages (LRANGE or ZRANGE of at
// most Page ids, then one pipeline of HMGETs), lists from their head
// (BullMQ pushes new jobs there: newest first, as its getWaiting), sets
// by rising score (the next due, the oldest failed or completed first).
// A job that moves while the scan runs may be passed twice or not at all.
func (q *Queue) Scan(ctx context.Context, opt queues.ScanOptions, fn func([]queues.Job) error) error {
	srcs, err := q.sources(opt.State)
	if err != nil {
		return err
	}
	page := int64(opt.Page)
	if page <= 0 {
		page = 100
	} else if page > 1000 {
		page = 1000
	}
	grep := opt.Grep // byte for byte: Go strings compare bytes
	passed := 0
	now := time.Now()
	for _, src := range srcs {
		for off := int64(0); ; off += page {
			ids, scores, err := queues.Page(ctx, q.rdb, src.key, src.list, off, page)
			if err != nil {
				return err
			}
			jobs, err := q.read(ctx, src, ids, scores)
			if err != nil {
				return err
			}
			kept := jobs[:0]
			for _, j := range jobs {
				if keep(&j, opt, grep, now) {
					kept = append(kept, j)
				}
			}
			if opt.Max > 0 && passed+len(kept) > opt.Max {
				kept = kept[:opt.Max-passed]
			}
			if len(kept) > 0 {
				passed += len(kept)
				if err := fn(kept); err != nil {
					if errors.Is(err, queues.ErrStop) {
						return nil
					}
					return err
				}
			}
			if opt.Max > 0 && passed >= opt.Max {
				return nil
			}
			if int64(len(ids)) < page {
				break
			}
		}
	}
	return nil
}

// keep reports whether j passes opt's filters.
func keep(j *queues.Job, opt queues.ScanOptions, grep string, now time.Time) bool {
	if opt.MinAttempts > 0 && j.Attempts < opt.MinAttempts {
		return false
	}
	if opt.InflightFor > 0 && (j.State != queues.Inflight || j.Started.IsZero() || now.Sub(j.Started) < opt.InflightFor) {
		return false
	}
	if grep != "" && !strings.Contains(j.ID, grep) && !strings.Contains(j.Name, grep) && !strings.Contains(j.Data, grep) {
		return false
	}
	return true
}

// read reads the hashes of ids in one pipeline; a job removed since its
// id was read is left out, and so is BullMQ's deprecated "0:" marker.
func (q *Queue) read(ctx context.Context, src source, ids []string, scores []float64) ([]queues.Job, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, q.key(id), jobFields...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	jobs := make([]queues.Job, 0, len(ids))
	for i, id := range ids {
		j, ok := toJob(id, cmds[i].Val())
		if !ok || strings.HasPrefix(id, "0:") {
			continue
		}
		j.State, j.KindState = src.state, src.kindState
		if src.kindState == "delayed" && scores != nil {
			j.Due = dueOf(scores[i])
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// dueOf is a delayed job's time: BullMQ scores it timestamp*0x1000 plus a
// counter that orders the jobs of one millisecond.
func dueOf(score float64) time.Time {
	return time.UnixMilli(int64(math.Floor(score / 0x1000)))
}

// toJob makes a job of its hash's fields (jobFields' order); false when
// the hash is gone.
func toJob(id string, v []any) (queues.Job, bool) {
	str := func(i int) string { s, _ := v[i].(string); return s }
	if v[0] == nil && v[1] == nil && v[3] == nil {
		return queues.Job{}, false
	}
	j := queues.Job{ID: id, Name: str(0), Data: str(1), Error: str(8), Consumer: str(15), Extra: map[string]any{}}
	j.Created = msTime(v[3])
	j.Started = msTime(v[6])
	j.Finished = msTime(v[7])
	if n, ok := intField(v[11]); ok {
		j.Attempts = n
	} else if n, ok := intField(v[12]); ok {
		j.Attempts = n // the field's name before BullMQ 5
	}
	j.Stack = firstFrame(str(9))
	if o := str(2); o != "" {
		var opts any
		if json.Unmarshal([]byte(o), &opts) == nil {
			j.Extra["opts"] = opts
		}
	}
	if r, ok := v[10].(string); ok {
		var rv any
		if json.Unmarshal([]byte(r), &rv) == nil {
			j.Extra["returnvalue"] = rv
		} else {
			j.Extra["returnvalue"] = r
		}
	}
	if n, ok := intField(v[5]); ok && n > 0 {
		j.Extra["priority"] = n
	}
	if n, ok := intField(v[4]); ok && n > 0 {
		j.Extra["delay"] = n
	}
	if n, ok := intField(v[13]); ok {
		j.Extra["stalledCounter"] = n
	}
	if p := str(14); p != "" {
		j.Extra["parentKey"] = p
	}
	return j, true
}

// firstFrame is the first "at" line of the last stack BullMQ kept (the
// last failure's, which Error is the message of), or its first line.
func firstFrame(stacktrace string) string {
	var stacks []string
	if json.Unmarshal([]byte(stacktrace), &stacks) != nil || len(stacks) == 0 {
		return ""
	}
	lines := strings.Split(stacks[len(stacks)-1], "\n")
	for _, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "at ") {
			return t
		}
	}
	return strings.TrimSpace(lines[0])
}

func intField(v any) (int64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return 0, false
		}
		n = int64(f)
	}
	return n, true
}

func msTime(v any) time.Time {
	n, ok := intField(v)
	if !ok || n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// Get reads job id and finds its state in one pipeline: ZSCORE on each
// sorted set, LPOS (MAXLEN 1000) on the active, paused and wait lists, and the
// job's lock. A job in no set is in a list: active if found there or
// locked, else ready. Inexact only when the active list is longer than
// 1000: a stalled job (no lock) past its first 1000 entries shows as
// ready (waiting).
func (q *Queue) Get(ctx context.Context, id string) (*queues.Job, error) {
	var (
		hash                                                     *redis.SliceCmd
		completed, failed, delayed, prioritized, waitingChildren *redis.FloatCmd
		inActive, inPaused, inWait                               *redis.IntCmd
		locked, nActive, nPaused, nWait                          *redis.IntCmd
	)
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		hash = p.HMGet(ctx, q.key(id), jobFields...)
		completed = p.ZScore(ctx, q.key("completed"), id)
		failed = p.ZScore(ctx, q.key("failed"), id)
		delayed = p.ZScore(ctx, q.key("delayed"), id)
		prioritized = p.ZScore(ctx, q.key("prioritized"), id)
		waitingChildren = p.ZScore(ctx, q.key("waiting-children"), id)
		inActive = p.LPos(ctx, q.key("active"), id, redis.LPosArgs{MaxLen: listMax})
		inPaused = p.LPos(ctx, q.key("paused"), id, redis.LPosArgs{MaxLen: listMax})
		inWait = p.LPos(ctx, q.key("wait"), id, redis.LPosArgs{MaxLen: listMax})
		locked = p.Exists(ctx, q.key(id)+":lock")
		nActive = p.LLen(ctx, q.key("active"))
		nPaused = p.LLen(ctx, q.key("paused"))
		nWait = p.LLen(ctx, q.key("wait"))
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	j, ok := toJob(id, hash.Val())
	if !ok {
		return nil, fmt.Errorf("%s: job %q: %w", q.Address(), id, queues.ErrJobNotFound)
	}
	in := func(c *redis.FloatCmd) bool { return c.Err() == nil }
	switch {
	case in(completed):
		j.State, j.KindState = queues.Done, "completed"
	case in(failed):
		j.State, j.KindState = queues.Dead, "failed"
	case in(delayed):
		j.State, j.KindState = queues.Delayed, "delayed"
		j.Due = dueOf(delayed.Val())
	case in(prioritized):
		j.State, j.KindState = queues.Ready, "prioritized"
	case in(waitingChildren):
		j.State, j.KindState = "", "waiting-children"
	case inActive.Err() == nil || locked.Val() == 1:
		j.State, j.KindState = queues.Inflight, "active"
	case inPaused.Err() == nil:
		j.State, j.KindState = queues.Ready, "paused"
	case inWait.Err() != nil && nActive.Val() <= listMax && nPaused.Val() <= listMax && nWait.Val() <= listMax:
		// Every list was searched whole: the job is in none (BullMQ's
		// getState says "unknown").
		j.State, j.KindState = "", "unknown"
	default:
		j.State, j.KindState = queues.Ready, "waiting"
	}
	return &j, nil
}
