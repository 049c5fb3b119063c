package sidekiq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

const (
	// listSearchMax is how much of a queue's list Get searches for a jid
	// (a list can be searched only by reading it).
	listSearchMax = 10000
	// maxProcesses is the most Sidekiq processes the in-flight read reads.
	maxProcesses = 1000
)

// set is one of Sidekiq's shared sorted sets, and the state it holds.
type set struct{ key, state, kindState string }

func (q *Queue) sets() []set {
	return []set{
		{q.schedule, queues.Delayed, "scheduled"},
		{q.retry, queues.Retry, "retry"},
		{q.dead, queues.Dead, "dead"},
	}
}

// Counts reads the queue's list and the three shared sets in one
// MULTI/EXEC (so at one instant), counting the queue's share of a set when
// the set has at most CountMax entries, then the in-flight jobs from the
// processes' work hashes.
func (q *Queue) Counts(ctx context.Context) (*queues.Counts, error) {
	var (
		llen   *redis.IntCmd
		member *redis.BoolCmd
		tail   *redis.StringCmd
		cards  [3]*redis.IntCmd
		heads  [3]*redis.StringSliceCmd
	)
	max := q.kind.CountMax
	if max <= 0 {
		max = 1000
	}
	sets := q.sets()
	pipelined := q.rdb.TxPipelined
	if _, cluster := q.rdb.(*redis.ClusterClient); cluster {
		// Sidekiq's keys are in different slots: a Cluster cannot MULTI
		// them, so there the counts are read in one pipeline, not at one
		// instant.
		pipelined = q.rdb.Pipelined
	}
	_, err := pipelined(ctx, func(p redis.Pipeliner) error {
		llen = p.LLen(ctx, q.list)
		tail = p.LIndex(ctx, q.list, -1)
		member = p.SIsMember(ctx, q.queuesKey, q.name)
		for i, s := range sets {
			cards[i] = p.ZCard(ctx, s.key)
			heads[i] = p.ZRange(ctx, s.key, 0, max-1)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	c := &queues.Counts{Ready: queues.N(llen.Val()), Other: map[string]int64{}}
	known := true
	any := llen.Val()
	if member.Val() {
		any++
	}
	for i, s := range sets {
		c.Other[strings.TrimPrefix(s.key, q.prefix)+"_all"] = cards[i].Val()
		if cards[i].Val() > int64(len(heads[i].Val())) {
			known = false // the queue's share of a set this big is unknown
			continue
		}
		var n int64
		for _, raw := range heads[i].Val() {
			if p, ok := parse(raw); ok && p.Queue == q.name {
				n++
			}
		}
		any += n
		switch s.state {
		case queues.Delayed:
			c.Delayed = queues.N(n)
		case queues.Retry:
			c.Retry = queues.N(n)
		case queues.Dead:
			c.Dead = queues.N(n)
		}
	}
	work, version, err := q.working(ctx)
	if err != nil {
		return nil, err
	}
	c.Inflight = queues.N(int64(len(work)))
	any += int64(len(work))
	if any == 0 && known {
		return nil, fmt.Errorf("%s: %w", q.Address(), queues.ErrQueueNotFound)
	}
	if version != "" {
		c.Version = "sidekiq " + version
		if major, _, _ := strings.Cut(version, "."); major != "6" && major != "7" {
			c.ReadOnly = fmt.Sprintf("%s: Sidekiq %s's jobs are not retried or redriven: chatq writes 6.x's and 7.x's layout (tested with %s)",
				queues.ErrReadOnly, version, Tested)
		}
	}
	if p, ok := parse(tail.Val()); ok {
		at, _ := stamp(p.EnqueuedAt)
		if at.IsZero() {
			at, _ = stamp(p.CreatedAt)
		}
		if !at.IsZero() {
			d := max0(time.Since(at))
			c.OldestReady = &d
		}
	}
	return c, nil
}

func max0(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}

// work is one job a Sidekiq thread is working on.
type work struct {
	raw     string
	p       payload
	process string // identity:tid
	runAt   time.Time
}

// working reads the jobs of this queue that Sidekiq's processes are
// working on, as Sidekiq's WorkSet does (6.x's <identity>:workers, 7.x's
// <identity>:work), and the version the first live process runs.
func (q *Queue) working(ctx context.Context) ([]work, string, error) {
	var procs []string
	for cursor := uint64(0); ; {
		keys, next, err := q.rdb.SScan(ctx, q.processes, cursor, "", 100).Result()
		if isWrongType(err) {
			return nil, "", nil
		} else if err != nil {
			return nil, "", err
		}
		procs = append(procs, keys...)
		if cursor = next; cursor == 0 || len(procs) >= maxProcesses {
			break
		}
	}
	if len(procs) == 0 {
		return nil, "", nil
	}
	sort.Strings(procs)
	procs = compactSorted(procs)
	if len(procs) > maxProcesses {
		procs = procs[:maxProcesses]
	}
	type read struct {
		exists        *redis.IntCmd
		info          *redis.StringCmd
		workers, work *redis.MapStringStringCmd
	}
	reads := make([]read, len(procs))
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, proc := range procs {
			key := q.prefix + proc
			reads[i] = read{p.Exists(ctx, key), p.HGet(ctx, key, "info"), p.HGetAll(ctx, key+":workers"), p.HGetAll(ctx, key+":work")}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) && !isWrongType(err) {
		return nil, "", err
	}
	var out []work
	version := ""
	for i, proc := range procs {
		r := reads[i]
		if r.exists.Val() == 0 { // a process gone without cleaning up, as ProcessSet skips it
			continue
		}
		if version == "" {
			var info struct {
				Version string `json:"version"`
			}
			if json.Unmarshal([]byte(r.info.Val()), &info) == nil {
				version = info.Version
			}
		}
		threads := r.workers.Val()
		for tid, v := range r.work.Val() {
			if threads == nil {
				threads = map[string]string{}
			}
			threads[tid] = v
		}
		for tid, v := range threads {
			var w struct {
				Queue   string          `json:"queue"`
				Payload json.RawMessage `json:"payload"`
				RunAt   json.RawMessage `json:"run_at"`
			}
			if json.Unmarshal([]byte(v), &w) != nil || w.Queue != q.name {
				continue
			}
			raw := string(w.Payload)
			var s string
			if json.Unmarshal(w.Payload, &s) == nil {
				raw = s // the payload as the job string it was fetched as (6.x and later)
			}
			p, ok := parse(raw)
			if !ok {
				continue
			}
			at, _ := stamp(w.RunAt)
			out = append(out, work{raw: raw, p: p, process: proc + ":" + tid, runAt: at})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].runAt.Before(out[j].runAt) })
	return out, version, nil
}

func compactSorted(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func (w work) job() queues.Job {
	j := toJob(w.raw, w.p, queues.Inflight, "busy")
	j.Started, j.Consumer = w.runAt, w.process
	return j
}

// Scan reads the queue's list from its head (newest first, as
// Sidekiq::Queue#each), the shared sets by rising score (the next due,
// the oldest dead first), each in LRANGE or ZRANGE pages of at most Page
// entries, passing the entries of this queue; then the in-flight jobs.
func (q *Queue) Scan(ctx context.Context, opt queues.ScanOptions, fn func([]queues.Job) error) error {
	states := []string{opt.State}
	if opt.State == "" {
		states = []string{queues.Ready, queues.Delayed, queues.Inflight, queues.Retry, queues.Dead}
	}
	page := int64(opt.Page)
	if page <= 0 {
		page = 100
	} else if page > 1000 {
		page = 1000
	}
	passed := 0
	now := time.Now()
	// emit passes the kept jobs of one page; done reports that the scan ends.
	emit := func(jobs []queues.Job) (bool, error) {
		kept := jobs[:0]
		for _, j := range jobs {
			if opt.Keeps(&j, now) {
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
					return true, nil
				}
				return true, err
			}
		}
		return opt.Max > 0 && passed >= opt.Max, nil
	}
	for _, state := range states {
		var err error
		var done bool
		switch state {
		case queues.Ready:
			done, err = q.scanList(ctx, page, emit)
		case queues.Delayed, queues.Retry, queues.Dead:
			for _, s := range q.sets() {
				if s.state == state {
					done, err = q.scanSet(ctx, s, page, emit)
				}
			}
		case queues.Inflight:
			var ws []work
			ws, _, err = q.working(ctx)
			jobs := make([]queues.Job, len(ws))
			for i, w := range ws {
				jobs[i] = w.job()
			}
			if err == nil {
				done, err = emit(jobs)
			}
		default:
			return fmt.Errorf("%w: sidekiq has no state %q (it has ready, delayed, inflight, retry, dead)", names.ErrInvalid, state)
		}
		if err != nil || done {
			return err
		}
	}
	return nil
}

func (q *Queue) scanList(ctx context.Context, page int64, emit func([]queues.Job) (bool, error)) (bool, error) {
	for off := int64(0); ; off += page {
		raws, err := q.rdb.LRange(ctx, q.list, off, off+page-1).Result()
		if err != nil {
			return true, err
		}
		jobs := make([]queues.Job, 0, len(raws))
		for _, raw := range raws {
			if p, ok := parse(raw); ok {
				jobs = append(jobs, toJob(raw, p, queues.Ready, "enqueued"))
			}
		}
		if done, err := emit(jobs); done || err != nil {
			return true, err
		}
		if int64(len(raws)) < page {
			return false, nil
		}
	}
}

func (q *Queue) scanSet(ctx context.Context, s set, page int64, emit func([]queues.Job) (bool, error)) (bool, error) {
	for off := int64(0); ; off += page {
		zs, err := q.rdb.ZRangeWithScores(ctx, s.key, off, off+page-1).Result()
		if err != nil {
			return true, err
		}
		var jobs []queues.Job
		for _, z := range zs {
			raw, _ := z.Member.(string)
			if p, ok := parse(raw); ok && p.Queue == q.name {
				jobs = append(jobs, setJob(raw, p, s, z.Score))
			}
		}
		if done, err := emit(jobs); done || err != nil {
			return true, err
		}
		if int64(len(zs)) < page {
			return false, nil
		}
	}
}

// setJob is an entry of a shared set: its score is when it runs
// (schedule, retry) or when it died (dead), in float seconds.
func setJob(raw string, p payload, s set, score float64) queues.Job {
	j := toJob(raw, p, s.state, s.kindState)
	at := secondsTime(score)
	if s.state == queues.Dead {
		j.Finished = at
	} else {
		j.Due = at
	}
	return j
}

// place is where a job was found: its exact entry and the key holding it
// ("" for an in-flight job).
type place struct {
	key   string
	raw   string
	p     payload
	job   queues.Job
	other string // the job is found, but in this other queue
}

// locate finds job id of this queue: in the first listSearchMax entries
// of the queue's list (LRANGE pages of 500: a list can be searched only by
// reading it, and this is cheaper than walking the sets), then with ZSCAN
// MATCH *id* (COUNT 200) of each shared set as Sidekiq's find_job, then
// in the work hashes. setsOnly searches the sets alone (for Retry, which
// moves jobs only from them).
func (q *Queue) locate(ctx context.Context, id string, setsOnly bool) (*place, error) {
	if !setsOnly {
		const page = 500
		for off := int64(0); off < listSearchMax; off += page {
			raws, err := q.rdb.LRange(ctx, q.list, off, off+page-1).Result()
			if err != nil && !isWrongType(err) {
				return nil, err
			}
			for _, raw := range raws {
				if !strings.Contains(raw, id) {
					continue
				}
				if p, ok := parse(raw); ok && p.JID == id {
					return &place{key: q.list, raw: raw, p: p, job: toJob(raw, p, queues.Ready, "enqueued")}, nil
				}
			}
			if len(raws) < page {
				break
			}
		}
	}
	var elsewhere *place
	match := "*" + keyspace.Quote(id) + "*"
	for _, s := range q.sets() {
		for cursor := uint64(0); ; {
			kv, next, err := q.rdb.ZScan(ctx, s.key, cursor, match, 200).Result()
			if err != nil && !isWrongType(err) {
				return nil, err
			}
			for i := 0; i+1 < len(kv); i += 2 {
				p, ok := parse(kv[i])
				if !ok || p.JID != id {
					continue
				}
				var score float64
				fmt.Sscan(kv[i+1], &score)
				pl := &place{key: s.key, raw: kv[i], p: p, job: setJob(kv[i], p, s, score)}
				if p.Queue == q.name {
					return pl, nil
				}
				pl.other = p.Queue
				elsewhere = pl
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	if elsewhere != nil {
		return elsewhere, nil
	}
	if setsOnly {
		return nil, fmt.Errorf("%s: job %q: %w in the schedule, retry and dead sets", q.Address(), id, queues.ErrJobNotFound)
	}
	ws, _, err := q.working(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		if w.p.JID == id {
			return &place{raw: w.raw, p: w.p, job: w.job()}, nil
		}
	}
	n, err := q.rdb.LLen(ctx, q.list).Result()
	if err != nil && !isWrongType(err) {
		return nil, err
	}
	if n > listSearchMax {
		return nil, fmt.Errorf("%s: job %q: %w in the schedule, retry and dead sets, the work hashes and the first %d of the %d jobs of %s",
			q.Address(), id, queues.ErrJobNotFound, listSearchMax, n, q.unprefixed(q.list))
	}
	return nil, fmt.Errorf("%s: job %q: %w", q.Address(), id, queues.ErrJobNotFound)
}

// Get reads job id (its jid) of this queue.
func (q *Queue) Get(ctx context.Context, id string) (*queues.Job, error) {
	pl, err := q.locate(ctx, id, false)
	if err != nil {
		return nil, err
	}
	if pl.other != "" {
		return nil, fmt.Errorf("%s: job %q is sidekiq:%s's: %w", q.Address(), id, pl.other, queues.ErrJobNotFound)
	}
	return &pl.job, nil
}
