package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// defaultPage is the entries read per call when ScanOptions.Page is 0,
// and the most any call reads.
const defaultPage = 100

// The markers a dead-letter entry holds in front of its own fields, in
// this order (deadletter.lua writes them, redrive.lua reads them): where
// it came from, who held it last, how often it was delivered, when it was
// moved (Unix ms). Names with a leading '_' and a word no application
// field is likely to have; their place, not only their names, tells them
// from the entry's own fields, so an entry that has a field of the same
// name keeps it.
var markers = []string{"_origin_stream", "_origin_group", "_origin_id", "_origin_consumer", "_deliveries", "_dead_at"}

// KindState names: a pending entry; an entry the group read and
// acknowledged (still in the stream for other groups, or until trimmed);
// an entry of the dead-letter stream.
const (
	kindPending = "pending"
	kindAcked   = "acked"
	kindDead    = "dead-letter"
)

// Scan passes the group's entries by state: ready (XRANGE after the
// group's last-delivered-id, read once when the scan starts), inflight
// (pending.lua: a page of XPENDING with each entry's fields) and dead
// (XRANGE of the default dead-letter stream), each page one call of at
// most Page (100) entries. Grep is matched here, against each entry's id
// and fields. MinAttempts leaves out ready entries (never delivered);
// InflightFor keeps only pending entries idle that long.
func (q *Queue) Scan(ctx context.Context, opt queues.ScanOptions, fn func([]queues.Job) error) error {
	states := []string{queues.Ready, queues.Inflight, queues.Dead}
	switch opt.State {
	case "":
	case queues.Ready, queues.Inflight, queues.Dead:
		states = []string{opt.State}
	default:
		return fmt.Errorf("%w: a stream group has no %q state (it has ready, inflight and dead)", names.ErrInvalid, opt.State)
	}
	if opt.Page <= 0 || opt.Page > defaultPage {
		opt.Page = defaultPage
	}
	passed := 0
	// emit passes the jobs kept by Max to fn, and reports whether the
	// scan goes on.
	emit := func(jobs []queues.Job) (bool, error) {
		if opt.Max > 0 && passed+len(jobs) > opt.Max {
			jobs = jobs[:opt.Max-passed]
		}
		passed += len(jobs)
		if len(jobs) > 0 {
			if err := fn(jobs); err != nil {
				return false, err
			}
		}
		return opt.Max == 0 || passed < opt.Max, nil
	}
	for _, s := range states {
		var err error
		switch {
		case s == queues.Ready && opt.MinAttempts <= 0 && opt.InflightFor <= 0:
			err = q.scanReady(ctx, opt, emit)
		case s == queues.Inflight:
			err = q.scanInflight(ctx, opt, emit)
		case s == queues.Dead && opt.InflightFor <= 0:
			err = q.scanDead(ctx, opt, emit)
		}
		if errors.Is(err, errDone) {
			return nil
		}
		if errors.Is(err, queues.ErrStop) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// errDone ends a scan that passed Max jobs.
var errDone = errors.New("done")

type emitFunc func([]queues.Job) (bool, error)

// send passes a page to emit, turning "no more" into errDone.
func send(emit emitFunc, jobs []queues.Job) error {
	more, err := emit(jobs)
	if err != nil {
		return err
	}
	if !more {
		return errDone
	}
	return nil
}

func (q *Queue) lastDelivered(ctx context.Context) (string, error) {
	groups, err := q.rdb.XInfoGroups(ctx, q.key).Result()
	if err != nil {
		return "", q.notFound(err)
	}
	for _, g := range groups {
		if g.Name == q.group {
			return g.LastDeliveredID, nil
		}
	}
	return "", q.errNoQueue()
}

func (q *Queue) scanReady(ctx context.Context, opt queues.ScanOptions, emit emitFunc) error {
	after, err := q.lastDelivered(ctx)
	if err != nil {
		return err
	}
	for {
		raw, err := q.rdb.Do(ctx, "XRANGE", q.key, "("+after, "+", "COUNT", opt.Page).Result()
		if err != nil {
			return err
		}
		page := entries(raw)
		if len(page) == 0 {
			return nil
		}
		after = page[len(page)-1].ID
		var jobs []queues.Job
		for _, e := range page {
			if matches(opt.Grep, e.ID, e.Fields) {
				jobs = append(jobs, readyJob(e))
			}
		}
		if err := send(emit, jobs); err != nil {
			return err
		}
	}
}

func readyJob(e entry) queues.Job {
	j := queues.Job{ID: e.ID, State: queues.Ready, Data: dataJSON(e.Fields), Created: idTime(e.ID)}
	if binary(e.Fields) {
		j.Extra = map[string]any{"binary": true}
	}
	return j
}

func (q *Queue) scanInflight(ctx context.Context, opt queues.ScanOptions, emit emitFunc) error {
	start := "-"
	for {
		res, err := pendingScript.Run(ctx, q.rdb, []string{q.key}, q.group, start, opt.Page, opt.InflightFor.Milliseconds()).Result()
		if err != nil {
			return err
		}
		st, v, err := status(res)
		if err != nil {
			return err
		}
		if st != "ok" {
			return q.errNoQueue()
		}
		last, page, now := str(v[0]), list(v[1]), serverTime(v[2], v[3])
		if last == "" {
			return nil
		}
		start = "(" + last
		var jobs []queues.Job
		for _, x := range page {
			p := list(x)
			e := entry{ID: str(p[0]), Fields: strs(p[5])}
			j := pendingJob(e, str(p[1]), num(p[2]), num(p[3]), num(p[4]) == 1, now)
			if j.Attempts >= opt.MinAttempts && matches(opt.Grep, e.ID, e.Fields) {
				jobs = append(jobs, j)
			}
		}
		if err := send(emit, jobs); err != nil {
			return err
		}
	}
}

// pendingJob is an entry of the PEL, read at the server's time now: its
// idle time is since its last delivery (or claim), which is Started. One
// deleted from the stream while pending has no data, which Extra says.
func pendingJob(e entry, consumer string, idleMS, count int64, found bool, now time.Time) queues.Job {
	idle := time.Duration(idleMS) * time.Millisecond
	j := queues.Job{
		ID: e.ID, State: queues.Inflight, KindState: kindPending,
		Data: dataJSON(e.Fields), Attempts: count, Created: idTime(e.ID),
		Started: now.Add(-idle), Consumer: consumer, Idle: idle,
	}
	if !found {
		j.Data = ""
		j.Extra = map[string]any{"deleted": "the entry was deleted from the stream while pending: its fields are gone, its id stays in the PEL until acknowledged"}
	} else if binary(e.Fields) {
		j.Extra = map[string]any{"binary": true}
	}
	return j
}

func (q *Queue) scanDead(ctx context.Context, opt queues.ScanOptions, emit emitFunc) error {
	start := "-"
	for {
		raw, err := q.rdb.Do(ctx, "XRANGE", q.dead, start, "+", "COUNT", opt.Page).Result()
		if err != nil {
			if isGone(err) {
				return nil
			}
			return err
		}
		page := entries(raw)
		if len(page) == 0 {
			return nil
		}
		start = "(" + page[len(page)-1].ID
		var jobs []queues.Job
		for _, e := range page {
			j := q.deadJob(e)
			if j.Attempts >= opt.MinAttempts && matches(opt.Grep, e.ID, e.Fields) {
				jobs = append(jobs, j)
			}
		}
		if err := send(emit, jobs); err != nil {
			return err
		}
	}
}

// deadJob is an entry of the dead-letter stream: its id there, its own
// fields as Data, and where it came from (the markers) in Extra.
func (q *Queue) deadJob(e entry) queues.Job {
	j := queues.Job{ID: e.ID, State: queues.Dead, KindState: kindDead, Created: idTime(e.ID)}
	own, origin, ok := splitMarkers(e.Fields)
	if !ok {
		// Not written by chatq: shown whole.
		j.Data = dataJSON(e.Fields)
		j.Extra = map[string]any{"dead_stream": q.dead, "foreign": "no chatq origin markers: redrive leaves it"}
		return j
	}
	j.Data = dataJSON(own)
	j.Created = idTime(origin["_origin_id"])
	j.Consumer = origin["_origin_consumer"]
	j.Attempts, _ = strconv.ParseInt(origin["_deliveries"], 10, 64)
	if ms, err := strconv.ParseInt(origin["_dead_at"], 10, 64); err == nil {
		j.Finished = time.UnixMilli(ms)
	}
	j.Extra = map[string]any{
		"dead_stream":   q.dead,
		"origin_stream": origin["_origin_stream"],
		"origin_group":  origin["_origin_group"],
		"origin_id":     origin["_origin_id"],
	}
	if binary(own) {
		j.Extra["binary"] = true
	}
	return j
}

// splitMarkers splits a dead-letter entry's fields into its own and the
// markers in front of them (ok false when they are not there).
func splitMarkers(fields []string) (own []string, origin map[string]string, ok bool) {
	if len(fields) <= 2*len(markers) {
		return nil, nil, false
	}
	origin = map[string]string{}
	for i, m := range markers {
		if fields[2*i] != m {
			return nil, nil, false
		}
		origin[m] = fields[2*i+1]
	}
	return fields[2*len(markers):], origin, true
}

// Get reads one entry by id: get.lua on the stream (its fields, whether
// the group holds it pending, the group's last-delivered-id) and XRANGE
// of the default dead-letter stream, in one pipeline. Pending is
// inflight; after the last-delivered-id ready; at or before it, and not
// pending, the group read and acknowledged it (or XGROUP SETID skipped
// it): State done, KindState "acked" (the entry stays in the stream for
// other groups or until trimmed). An id found only in the dead-letter stream is dead.
func (q *Queue) Get(ctx context.Context, id string) (*queues.Job, error) {
	if err := checkIDs([]string{id}); err != nil {
		return nil, err
	}
	var res *redis.Cmd
	var dead *redis.Cmd
	_, _ = q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		res = getScript.Run(ctx, p, []string{q.key}, q.group, id)
		dead = p.Do(ctx, "XRANGE", q.dead, id, id)
		return nil
	})
	if isNoScript(res.Err()) {
		res = getScript.Run(ctx, q.rdb, []string{q.key}, q.group, id)
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
	ldi, found, fields, pending := str(v[0]), num(v[1]) == 1, strs(v[2]), num(v[3]) == 1
	switch {
	case pending:
		j := pendingJob(entry{ID: id, Fields: fields}, str(v[4]), num(v[5]), num(v[6]), found, serverTime(v[7], v[8]))
		return &j, nil
	case found && compareIDs(id, ldi) > 0:
		j := readyJob(entry{ID: id, Fields: fields})
		return &j, nil
	case found:
		j := readyJob(entry{ID: id, Fields: fields})
		j.State, j.KindState = queues.Done, kindAcked
		return &j, nil
	}
	if dead.Err() == nil {
		if d := entries(dead.Val()); len(d) == 1 {
			j := q.deadJob(d[0])
			return &j, nil
		}
	}
	return nil, fmt.Errorf("%w: %s in %s", queues.ErrJobNotFound, id, q.Address())
}

// compareIDs compares two complete entry ids as the server orders them.
func compareIDs(a, b string) int {
	ams, aseq := cutID(a)
	bms, bseq := cutID(b)
	if c := cmp.Compare(ams, bms); c != 0 {
		return c
	}
	return cmp.Compare(aseq, bseq)
}

// cutID splits an id MS-SEQ into its numbers (0 where they are not).
func cutID(id string) (ms, seq uint64) {
	a, b, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(a, 10, 64)
	seq, _ = strconv.ParseUint(b, 10, 64)
	return ms, seq
}
