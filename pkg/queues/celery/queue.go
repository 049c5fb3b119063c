package celery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// Queue is one Celery queue: its lists, and its messages in the unacked
// hash that every queue of the prefix shares.
type Queue struct {
	kind         *Kind
	rdb          redis.UniversalClient
	prefix, name string
	base         string // Env.Prefix + global_keyprefix
}

var (
	_ queues.Queue     = (*Queue)(nil)
	_ queues.Remover   = (*Queue)(nil)
	_ queues.Recoverer = (*Queue)(nil)
	_ queues.Purger    = (*Queue)(nil)
)

// Address is "celery:[PREFIX|]QUEUE".
func (q *Queue) Address() string { return "celery:" + addressName(q.prefix, q.name) }

// list is the key of the queue's list of priority step s.
func (q *Queue) list(s int) string {
	if s == 0 {
		return q.base + q.name
	}
	return q.base + q.name + sep + strconv.Itoa(s)
}

func (q *Queue) unacked() string      { return q.base + "unacked" }
func (q *Queue) unackedIndex() string { return q.base + "unacked_index" }
func (q *Queue) binding(ex string) string {
	return q.base + bindingPrefix + ex
}

// router finds the queues an exchange and routing key deliver to, as
// kombu's lookup does for the direct exchanges Celery declares (the
// default exchange "" delivers to the queue named by the routing key),
// reading each exchange's binding once per operation.
type router struct {
	q      *Queue
	tables map[string][]binding
}

func (q *Queue) router() *router { return &router{q: q, tables: map[string][]binding{}} }

func (r *router) lookup(ctx context.Context, exchange, routingKey string) ([]string, error) {
	if exchange == "" {
		return []string{routingKey}, nil
	}
	t, ok := r.tables[exchange]
	if !ok {
		members, err := sscanAll(ctx, r.q.rdb, r.q.binding(exchange))
		if err != nil && !isWrongType(err) {
			return nil, err
		}
		for _, m := range members {
			if b, ok := parseBinding(m); ok {
				t = append(t, b)
			}
		}
		r.tables[exchange] = t
	}
	var out []string
	for _, b := range t {
		if b.routingKey == routingKey {
			out = append(out, b.queue)
		}
	}
	return out, nil
}

// ours says whether an unacked message goes back to this queue alone.
func (r *router) ours(ctx context.Context, m *message) (bool, error) {
	dest, err := r.lookup(ctx, m.exchange, m.routingKey)
	if err != nil {
		return false, err
	}
	return len(dest) == 1 && dest[0] == r.q.name, nil
}

// unackedState is an unacked message's state: delayed while its ETA is
// ahead (the worker holds it until then), else inflight.
func unackedState(m *message, now time.Time) (state, kindState string) {
	if eta := m.env.eta(); !eta.IsZero() && eta.After(now) {
		return queues.Delayed, "unacked (eta)"
	}
	return queues.Inflight, "unacked"
}

// Counts reads the lists' lengths (as kombu's _size sums them) in one
// pipeline, then the unacked hash in HSCAN pages of 100 to count the
// queue's own delayed and in-flight messages, when it holds at most
// MaxUnacked (else those two are nil, and Other["unacked_all"] says how
// many every queue of the prefix has).
func (q *Queue) Counts(ctx context.Context) (*queues.Counts, error) {
	lens := make([]*redis.IntCmd, len(steps))
	var hlen, bound *redis.IntCmd
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, s := range steps {
			lens[i] = p.LLen(ctx, q.list(s))
		}
		hlen = p.HLen(ctx, q.unacked())
		bound = p.Exists(ctx, q.binding(q.name))
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := &queues.Counts{Other: map[string]int64{}}
	var ready int64
	for i, s := range steps {
		ready += lens[i].Val()
		if s != 0 && lens[i].Val() > 0 {
			c.Other["priority_"+strconv.Itoa(s)] = lens[i].Val()
		}
	}
	c.Ready = queues.N(ready)
	all := hlen.Val()
	c.Other["unacked_all"] = all
	if all > int64(q.kind.MaxUnacked) {
		c.Other["unacked_not_counted"] = 1
		if ready == 0 && bound.Val() == 0 {
			return nil, fmt.Errorf("%s: %w", q.Address(), queues.ErrQueueNotFound)
		}
		return c, nil
	}
	var delayed, inflight int64
	r := q.router()
	now := time.Now()
	var cursor uint64
	seen := map[string]bool{} // HSCAN may return a field twice while the hash is rehashed
	for {
		kv, next, err := q.rdb.HScan(ctx, q.unacked(), cursor, "", 100).Result()
		if err != nil {
			return nil, err
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if seen[kv[i]] {
				continue
			}
			seen[kv[i]] = true
			m, err := decodeUnacked(kv[i+1])
			if err != nil {
				continue
			}
			if ok, err := r.ours(ctx, m); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			if s, _ := unackedState(m, now); s == queues.Delayed {
				delayed++
			} else {
				inflight++
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if ready == 0 && bound.Val() == 0 && delayed+inflight == 0 {
		return nil, fmt.Errorf("%s: %w", q.Address(), queues.ErrQueueNotFound)
	}
	c.Delayed, c.Inflight = queues.N(delayed), queues.N(inflight)
	return c, nil
}

// page is ScanOptions.Page or the default.
func page(opt queues.ScanOptions) int64 {
	if opt.Page > 0 {
		return int64(opt.Page)
	}
	return 100
}

// Scan passes the queue's messages: ready from each list in the order
// workers take them (step 0 first, each from its tail), then delayed and
// inflight from unacked_index in the order they were delivered.
func (q *Queue) Scan(ctx context.Context, opt queues.ScanOptions, fn func([]queues.Job) error) error {
	switch opt.State {
	case "", queues.Ready, queues.Delayed, queues.Inflight:
	default:
		return fmt.Errorf("%w: celery has no %q state (it has ready, delayed, inflight)", names.ErrInvalid, opt.State)
	}
	passed := 0
	now := time.Now()
	emit := func(jobs []queues.Job) error {
		var keep []queues.Job
		for _, j := range jobs {
			argsrepr, _ := j.Extra["argsrepr"].(string)
			kwargsrepr, _ := j.Extra["kwargsrepr"].(string)
			if !opt.Keeps(&j, now, argsrepr, kwargsrepr) {
				continue
			}
			if opt.Max > 0 && passed >= opt.Max {
				break
			}
			keep = append(keep, j)
			passed++
		}
		if len(keep) > 0 {
			if err := fn(keep); err != nil {
				return err
			}
		}
		if opt.Max > 0 && passed >= opt.Max {
			return queues.ErrStop
		}
		return nil
	}
	err := q.scan(ctx, opt, emit)
	if errors.Is(err, queues.ErrStop) {
		return nil
	}
	return err
}

func (q *Queue) scan(ctx context.Context, opt queues.ScanOptions, emit func([]queues.Job) error) error {
	n := page(opt)
	if opt.State == "" || opt.State == queues.Ready {
		for _, s := range steps {
			key := q.list(s)
			for off := int64(0); ; off += n {
				raws, err := q.rdb.LRange(ctx, key, -(off + n), -(off + 1)).Result()
				if err != nil {
					return err
				}
				jobs := make([]queues.Job, 0, len(raws))
				for i := len(raws) - 1; i >= 0; i-- {
					jobs = append(jobs, q.listedJob(raws[i], s))
				}
				if err := emit(jobs); err != nil {
					return err
				}
				if int64(len(raws)) < n {
					break
				}
			}
		}
	}
	if opt.State == queues.Ready {
		return nil
	}
	r := q.router()
	for off := int64(0); ; off += n {
		zs, err := q.rdb.ZRangeWithScores(ctx, q.unackedIndex(), off, off+n-1).Result()
		if err != nil {
			return err
		}
		if len(zs) == 0 {
			return nil
		}
		tags := make([]string, len(zs))
		for i, z := range zs {
			tags[i], _ = z.Member.(string)
		}
		vals, err := q.rdb.HMGet(ctx, q.unacked(), tags...).Result()
		if err != nil {
			return err
		}
		now := time.Now()
		var jobs []queues.Job
		for i, v := range vals {
			raw, ok := v.(string)
			if !ok {
				continue // acked between the two reads
			}
			m, err := decodeUnacked(raw)
			if err != nil {
				continue
			}
			if ok, err := r.ours(ctx, m); err != nil {
				return err
			} else if !ok {
				continue
			}
			j := unackedJob(m, zs[i].Score, now)
			if opt.State == "" || opt.State == j.State {
				jobs = append(jobs, j)
			}
		}
		if err := emit(jobs); err != nil {
			return err
		}
		if int64(len(zs)) < n {
			return nil
		}
	}
}

// listedJob is a list element as a ready job (a message that does not
// decode is shown as it is, with its error).
func (q *Queue) listedJob(raw string, step int) queues.Job {
	m, err := decodeListed(raw)
	if err != nil {
		return queues.Job{State: queues.Ready, Data: raw, Error: "not a kombu message: " + err.Error(),
			Extra: map[string]any{"list": q.list(step)}}
	}
	j := m.job(queues.Ready, "")
	if step != 0 {
		j.KindState = "priority " + strconv.Itoa(step)
	}
	j.Extra["list"] = q.list(step)
	return j
}

// unackedJob is an unacked message as a job; score is when kombu put it
// in unacked (seconds).
func unackedJob(m *message, score float64, now time.Time) queues.Job {
	state, ks := unackedState(m, now)
	j := m.job(state, ks)
	if score > 0 {
		sec := int64(score)
		j.Started = time.Unix(sec, int64((score-float64(sec))*1e9))
		j.Idle = now.Sub(j.Started)
	}
	return j
}

// found is where a task was found.
type found struct {
	msg  *message
	list string // the list holding it, or "" when unacked
	tag  string // its delivery tag in unacked
	job  queues.Job
}

// find looks for a task by id (or an unacked message by delivery tag):
// unacked by tag, then each list from its tail up to SearchMax, then the
// unacked hash up to MaxUnacked.
func (q *Queue) find(ctx context.Context, id string) (*found, error) {
	r := q.router()
	now := time.Now()
	unackedAt := func(tag, raw string) (*found, error) {
		m, err := decodeUnacked(raw)
		if err != nil {
			return nil, nil
		}
		if ok, err := r.ours(ctx, m); err != nil || !ok {
			return nil, err
		}
		score, err := q.rdb.ZScore(ctx, q.unackedIndex(), tag).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, err
		}
		return &found{msg: m, tag: tag, job: unackedJob(m, score, now)}, nil
	}
	if raw, err := q.rdb.HGet(ctx, q.unacked(), id).Result(); err == nil {
		if f, err := unackedAt(id, raw); f != nil || err != nil {
			return f, err
		}
	} else if !errors.Is(err, redis.Nil) {
		return nil, err
	}
	max := int64(q.kind.SearchMax)
	for _, s := range steps {
		key := q.list(s)
		for off := int64(0); off < max; off += 100 {
			raws, err := q.rdb.LRange(ctx, key, -min(off+100, max), -(off + 1)).Result()
			if err != nil {
				return nil, err
			}
			for i := len(raws) - 1; i >= 0; i-- {
				m, err := decodeListed(raws[i])
				if err == nil && m.env.taskID() == id {
					j := q.listedJob(raws[i], s)
					return &found{msg: m, list: key, job: j}, nil
				}
			}
			if len(raws) < 100 {
				break
			}
		}
	}
	var cursor uint64
	for seen := 0; seen <= q.kind.MaxUnacked; {
		kv, next, err := q.rdb.HScan(ctx, q.unacked(), cursor, "", 100).Result()
		if err != nil {
			return nil, err
		}
		for i := 0; i+1 < len(kv); i += 2 {
			seen++
			m, err := decodeUnacked(kv[i+1])
			if err != nil || m.env.taskID() != id {
				continue
			}
			if f, err := unackedAt(kv[i], kv[i+1]); f != nil || err != nil {
				return f, err
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	return nil, fmt.Errorf("%s: task %q (searched each list's last %d and %d unacked): %w",
		q.Address(), id, q.kind.SearchMax, q.kind.MaxUnacked, queues.ErrJobNotFound)
}

// Get reads one task by its id (or an unacked message by delivery tag),
// with the Redis result backend's state in Extra when it has one.
func (q *Queue) Get(ctx context.Context, id string) (*queues.Job, error) {
	f, err := q.find(ctx, id)
	if err != nil {
		return nil, err
	}
	j := f.job
	meta, err := q.rdb.Get(ctx, q.kind.env.Prefix+"celery-task-meta-"+j.ID).Result()
	if err == nil {
		var res struct {
			Status  string `json:"status"`
			DoneAt  string `json:"date_done"`
			Retries any    `json:"retries"`
		}
		if json.Unmarshal([]byte(meta), &res) == nil && res.Status != "" {
			j.Extra["result_status"] = res.Status
			if res.DoneAt != "" {
				j.Extra["result_date_done"] = res.DoneAt
			}
		}
	} else if !errors.Is(err, redis.Nil) && !isWrongType(err) {
		return nil, err
	}
	return &j, nil
}
