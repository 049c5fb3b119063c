package rq

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// jobFields are the job hash's fields chatq reads: never "data" (pickled)
// nor "result" (pickled), which chatq does not decode.
var jobFields = []string{"description", "status", "origin", "created_at", "enqueued_at",
	"started_at", "ended_at", "exc_info", "retries_left", "worker_name", "timeout",
	"failure_ttl", "result_ttl", "dependency_ids", "retry_intervals"}

// source is where a state's ids are: the queue list or a registry.
type source struct {
	key       string
	list      bool
	cleaned   bool
	state     string
	kindState string
}

func (q *Queue) sources(state string) ([]source, error) {
	all := []source{{key: q.queueKey(), list: true, state: queues.Ready, kindState: "queued"}}
	for _, r := range registries {
		if r.state != "" {
			all = append(all, source{key: q.reg(r.kind), cleaned: r.cleaned, state: r.state, kindState: r.kindState})
		}
	}
	if state == "" {
		return all, nil
	}
	for _, s := range all {
		if s.state == state {
			return []source{s}, nil
		}
	}
	return nil, fmt.Errorf("%w: rq has no state %q (it has ready, delayed, inflight, dead, done)", names.ErrInvalid, state)
}

// Scan reads each state's list or registry a page at a time (LRANGE or
// ZRANGE by index, then a pipeline of HMGETs). Entries of a cleaned
// registry whose expiry is past are left out, as RQ's own listing (after
// its cleanup) leaves them.
func (q *Queue) Scan(ctx context.Context, opt queues.ScanOptions, fn func([]queues.Job) error) error {
	srcs, err := q.sources(opt.State)
	if err != nil {
		return err
	}
	page := int64(opt.Page)
	if page <= 0 {
		page = 100
	}
	passed := 0
	for _, src := range srcs {
		start := int64(0)
		if src.cleaned {
			// Expired entries score lowest: start past them (ZCOUNT is
			// O(log n)) rather than page through them.
			n, err := q.rdb.ZCount(ctx, src.key, "-inf", strconv.FormatInt(time.Now().Unix(), 10)).Result()
			if err != nil {
				return err
			}
			start = n
		}
		for off := start; ; off += page {
			ids, scores, err := queues.Page(ctx, q.rdb, src.key, src.list, off, page)
			if err != nil {
				return err
			}
			jobs, err := q.read(ctx, src, ids, scores)
			if err != nil {
				return err
			}
			now := time.Now()
			kept := jobs[:0]
			for i := range jobs {
				if keep(&jobs[i], opt, now) {
					kept = append(kept, jobs[i])
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

func keep(j *queues.Job, opt queues.ScanOptions, now time.Time) bool {
	if opt.MinAttempts > 0 && j.Attempts < opt.MinAttempts {
		return false
	}
	if opt.InflightFor > 0 && (j.State != queues.Inflight || j.Started.IsZero() || now.Sub(j.Started) < opt.InflightFor) {
		return false
	}
	g := opt.Grep
	return g == "" || strings.Contains(j.ID, g) || strings.Contains(j.Name, g) || strings.Contains(j.Data, g)
}

// read reads ids' hashes in one pipeline; a job gone since is left out,
// and so is an expired entry of a cleaned registry.
func (q *Queue) read(ctx context.Context, src source, ids []string, scores []float64) ([]queues.Job, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	results := make([]*redis.XMessageSliceCmd, len(ids))
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, q.jobKey(jobID(id)), jobFields...)
			if src.state == queues.Dead {
				results[i] = p.XRevRangeN(ctx, q.resultsKey(jobID(id)), "+", "-", 1)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	now := float64(time.Now().Unix())
	jobs := make([]queues.Job, 0, len(ids))
	for i, id := range ids {
		if src.cleaned && scores != nil && scores[i] <= now {
			continue
		}
		j, ok := toJob(jobID(id), cmds[i].Val())
		if !ok {
			continue
		}
		j.State, j.KindState = src.state, src.kindState
		if results[i] != nil {
			setExc(&j, lastResult(results[i].Val()))
		}
		if scores != nil && !math.IsInf(scores[i], 0) {
			at := time.Unix(int64(scores[i]), 0)
			if src.state == queues.Delayed {
				j.Due = at
			} else {
				j.Extra["expires"] = at.UTC().Format(time.RFC3339)
			}
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// jobID is a registry member's job id: RQ 2.x's started registry holds
// "<job id>:<execution id>".
func jobID(member string) string {
	if i := strings.IndexByte(member, ':'); i > 0 {
		return member[:i]
	}
	return member
}

// Get reads one job: its hash, then where RQ's status says it is.
func (q *Queue) Get(ctx context.Context, id string) (*queues.Job, error) {
	v, err := q.rdb.HMGet(ctx, q.jobKey(id), jobFields...).Result()
	if err != nil {
		return nil, err
	}
	j, ok := toJob(id, v)
	if !ok {
		return nil, fmt.Errorf("%w: %s in %s", queues.ErrJobNotFound, id, q.Address())
	}
	status, _ := v[1].(string)
	j.KindState = status
	if status == "failed" && j.Error == "" {
		r, err := q.rdb.XRevRangeN(ctx, q.resultsKey(id), "+", "-", 1).Result()
		if err != nil {
			return nil, err
		}
		setExc(&j, lastResult(r))
	}
	switch status {
	case "queued":
		j.State = queues.Ready
	case "scheduled":
		j.State = queues.Delayed
		if s, err := q.rdb.ZScore(ctx, q.reg("scheduled"), id).Result(); err == nil {
			j.Due = time.Unix(int64(s), 0)
		}
	case "started":
		j.State = queues.Inflight
	case "failed":
		j.State = queues.Dead
	case "finished":
		j.State = queues.Done
	}
	return &j, nil
}

// toJob makes a job of its hash's fields (jobFields' order); false when
// the hash is gone.
func toJob(id string, v []any) (queues.Job, bool) {
	str := func(i int) string { s, _ := v[i].(string); return s }
	if v[1] == nil && v[0] == nil && v[3] == nil {
		return queues.Job{}, false
	}
	desc := str(0)
	j := queues.Job{ID: id, Data: desc, Name: funcName(desc), Consumer: str(9), Extra: map[string]any{}}
	j.Created = rqTime(str(3))
	j.Started = rqTime(str(5))
	j.Finished = rqTime(str(6))
	if t := rqTime(str(4)); !t.IsZero() {
		j.Extra["enqueued_at"] = t.Format(time.RFC3339Nano)
	}
	setExc(&j, excText(str(7)))
	for i, name := range map[int]string{2: "origin", 1: "status", 8: "retries_left", 10: "timeout",
		11: "failure_ttl", 12: "result_ttl", 13: "dependency_ids", 14: "retry_intervals"} {
		if s := str(i); s != "" {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				j.Extra[name] = n
			} else {
				j.Extra[name] = s
			}
		}
	}
	return j, true
}

// funcName is the function's name from RQ's description
// "module.func(args)".
func funcName(desc string) string {
	if i := strings.IndexByte(desc, '('); i > 0 {
		return desc[:i]
	}
	return desc
}

// rqTime parses RQ's utcformat ("%Y-%m-%dT%H:%M:%S.%fZ"), zero when
// empty or not of that form.
func rqTime(s string) time.Time {
	t, err := time.Parse("2006-01-02T15:04:05.999999Z", s)
	if err != nil {
		t, _ = time.Parse("2006-01-02T15:04:05Z", s)
	}
	return t
}

// excText is exc_info as text: RQ stores it zlib-compressed; a plain one
// (older RQ) is shown as it is.
func excText(s string) string {
	if s == "" {
		return ""
	}
	r, err := zlib.NewReader(bytes.NewReader([]byte(s)))
	if err != nil {
		return s
	}
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return s
	}
	return string(b)
}

// zlibText is s compressed as RQ stores exc_info.
func zlibText(s string) string {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.String()
}

// setExc shows an exception's text: its last line (the exception) as the
// error, the line before it (where it was raised) as the stack.
func setExc(j *queues.Job, exc string) {
	exc = strings.TrimRight(exc, "\n")
	if exc == "" {
		return
	}
	lines := strings.Split(exc, "\n")
	j.Error = strings.TrimSpace(lines[len(lines)-1])
	if len(lines) > 1 {
		j.Stack = strings.TrimSpace(lines[len(lines)-2])
	}
}

// lastResult is the exception text of a job's newest result (RQ 1.12+
// keeps results in the stream rq:results:<id>, exc_string base64 of zlib),
// "" when it has none.
func lastResult(msgs []redis.XMessage) string {
	if len(msgs) == 0 {
		return ""
	}
	s, _ := msgs[0].Values["exc_string"].(string)
	if s == "" {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return s
	}
	return excText(string(b))
}
