package asynq

import (
	"context"
	_ "embed"
	"encoding/base64"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/encoding/protowire"
)

var (
	//go:embed counts.lua
	countsLua    string
	countsScript = luascript.New(countsLua)
	//go:embed page.lua
	pageLua    string
	pageScript = luascript.New(pageLua)
	//go:embed get.lua
	getLua    string
	getScript = luascript.New(getLua)
)

// maxGroupsSummed is the most task groups whose sizes Counts sums (one
// ZCARD each): more, and Other has "groups" but not "aggregating".
const maxGroupsSummed = 100

// defaultPage is the most tasks one page script reads.
const defaultPage = 100

// withMember runs script in one pipeline with SISMEMBER asynq:queues NAME,
// so that a read costs one round trip and reports a queue asynq does not
// name as not found, as asynq's Inspector does.
func (q *Queue) withMember(ctx context.Context, s *luascript.Script, keys []string, args ...any) (any, error) {
	run := func(eval bool) (bool, any, error) {
		var member *redis.BoolCmd
		var res *redis.Cmd
		_, err := q.k.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			member = p.SIsMember(ctx, q.k.allQueues(), q.name)
			if eval {
				res = s.Script().Eval(ctx, p, keys, args...)
			} else {
				res = p.EvalSha(ctx, s.Hash(), keys, args...)
			}
			return nil
		})
		if err := member.Err(); err != nil {
			return false, nil, err
		}
		v, rerr := res.Result()
		if rerr == redis.Nil {
			rerr = nil
		}
		if rerr != nil {
			return member.Val(), nil, rerr
		}
		if err != nil && err != redis.Nil {
			return false, nil, err
		}
		return member.Val(), v, nil
	}
	member, v, err := run(false)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		member, v, err = run(true)
	}
	if err != nil {
		return nil, err
	}
	if !member {
		return nil, fmt.Errorf("%w: %s", queues.ErrQueueNotFound, q.Address())
	}
	return v, nil
}

// Counts reads the queue's counts in one script (one instant), with the
// queue's membership of asynq:queues in the same round trip.
func (q *Queue) Counts(ctx context.Context) (*queues.Counts, error) {
	keys := []string{q.key(statePending), q.key(stateActive), q.key(stateScheduled), q.key(stateRetry),
		q.key(stateArchived), q.key(stateCompleted), q.key("paused"), q.key("groups"), q.key("deadlines"), q.key("lease")}
	v, err := q.withMember(ctx, countsScript, keys, q.taskPrefix(), maxGroupsSummed, q.key("g:"), int(leaseGrace.Seconds()))
	if err != nil {
		return nil, err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 14 {
		return nil, fmt.Errorf("%w: counts: %v", errReply, v)
	}
	n := func(i int) int64 { x, _ := a[i].(int64); return x }
	c := &queues.Counts{
		Ready: queues.N(n(0)), Inflight: queues.N(n(1)), Delayed: queues.N(n(2)), Retry: queues.N(n(3)),
		Dead: queues.N(n(4)), Done: queues.N(n(5)),
	}
	paused := n(6) == 1
	c.Paused = &paused
	other := map[string]int64{}
	if g := n(7); g > 0 {
		other["groups"] = g
		if agg := n(8); agg >= 0 {
			other["aggregating"] = agg
		}
	}
	if x := n(13); x > 0 {
		other["lease_expired"] = x
	}
	if len(other) > 0 {
		c.Other = other
	}
	if n(9) == 1 {
		c.ReadOnly = fmt.Sprintf("a deadlines set (asynq 0.21 or before); chatq writes the layout of %s", Known)
	}
	now := serverTime(a[11], a[12])
	if s, ok := a[10].(string); ok {
		if ns, err := strconv.ParseInt(s, 10, 64); err == nil && ns > 0 {
			d := now.Sub(time.Unix(0, ns))
			if d < 0 {
				d = 0
			}
			c.OldestReady = &d
		}
	}
	return c, nil
}

// serverTime is the server's TIME reply (seconds, microseconds).
func serverTime(sec, usec any) time.Time {
	s, _ := strconv.ParseInt(fmt.Sprint(sec), 10, 64)
	u, _ := strconv.ParseInt(fmt.Sprint(usec), 10, 64)
	return time.Unix(s, u*1000)
}

// taskFields are a task hash's fields as the read scripts return them.
type taskFields struct {
	id, msg, state, pendingSince, result, group string
	score                                       string // "" when none
}

// fieldsAt reads a task's fields from the six values of a script's reply
// that follow its id.
func fieldsAt(id string, a []any) taskFields {
	s := func(i int) string { x, _ := a[i].(string); return x }
	return taskFields{id: id, msg: s(0), state: s(1), pendingSince: s(2), result: s(3), group: s(4), score: s(5)}
}

// job turns a task's fields into chatq's Job; now is for an in-flight
// task's idle time.
func (q *Queue) job(f taskFields, now time.Time) (*queues.Job, error) {
	m, err := decodeMessage([]byte(f.msg))
	if err != nil {
		// Shown, not hidden: an operator looks for such a task.
		return &queues.Job{ID: f.id, State: chatqState[f.state], KindState: f.state,
			Extra: map[string]any{"msg_error": err.Error()}}, nil
	}
	j := &queues.Job{
		ID: f.id, State: chatqState[f.state], KindState: f.state, Name: m.Type,
		Attempts: m.Retried, Error: m.ErrorMsg, Extra: map[string]any{"queue": m.Queue, "max_retry": m.Retry},
	}
	if utf8.Valid(m.Payload) {
		j.Data = string(m.Payload)
	} else {
		j.Data = base64.StdEncoding.EncodeToString(m.Payload)
		j.Extra["payload_encoding"] = "base64"
	}
	score := parseScore(f.score)
	switch f.state {
	case stateScheduled, stateRetry:
		j.Due = score
	case stateArchived:
		j.Finished = score
		if m.LastFailedAt > 0 {
			j.Finished = time.Unix(m.LastFailedAt, 0)
		}
	case stateCompleted:
		if m.CompletedAt > 0 {
			j.Finished = time.Unix(m.CompletedAt, 0)
		}
		if !score.IsZero() {
			j.Extra["expires_at"] = score.UTC().Format(time.RFC3339)
		}
	case stateActive:
		if !score.IsZero() {
			j.Extra["lease_expires_at"] = score.UTC().Format(time.RFC3339)
			// asynq extends a lease to now+30s every few seconds while
			// its worker lives: the time since the last extension is how
			// long the task has gone without its worker's sign.
			if idle := now.Sub(score.Add(-leaseDuration)); idle > 0 {
				j.Idle = idle
			}
		}
	}
	if ns, err := strconv.ParseInt(f.pendingSince, 10, 64); err == nil && ns > 0 {
		j.Extra["pending_since"] = time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
	}
	if m.LastFailedAt > 0 {
		j.Extra["last_failed_at"] = time.Unix(m.LastFailedAt, 0).UTC().Format(time.RFC3339)
	}
	for k, v := range map[string]int64{"timeout": m.Timeout, "retention": m.Retention} {
		if v != 0 {
			j.Extra[k] = v
		}
	}
	if m.Deadline != 0 {
		j.Extra["deadline"] = time.Unix(m.Deadline, 0).UTC().Format(time.RFC3339)
	}
	for k, v := range map[string]string{"unique_key": m.UniqueKey, "group": m.GroupKey, "result": f.result} {
		if v != "" {
			j.Extra[k] = v
		}
	}
	if len(m.Headers) > 0 {
		j.Extra["headers"] = m.Headers
	}
	return j, nil
}

// parseScore is a sorted set score in Unix seconds (zero for "").
func parseScore(s string) time.Time {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(f), 0)
}

// Get reads one task by id (one round trip, with the queue's membership).
func (q *Queue) Get(ctx context.Context, id string) (*queues.Job, error) {
	v, err := q.withMember(ctx, getScript, []string{q.taskPrefix() + id}, id, q.base)
	if err != nil {
		return nil, err
	}
	a, ok := v.([]any)
	if v == nil || (ok && len(a) == 0) {
		return nil, fmt.Errorf("%w: %s in %s", queues.ErrJobNotFound, id, q.Address())
	}
	if !ok || len(a) != 6 {
		return nil, fmt.Errorf("%w: get: %v", errReply, v)
	}
	return q.job(fieldsAt(id, a), time.Now())
}

// Scan passes the tasks of opt.State (every state, in chatq's order, for
// ""), a page (one script) at a time: pending and active from the tail of
// their list (the next asynq takes first, as its Inspector lists them),
// the others lowest score first. Pages are by position, so a task that
// moves while a scan runs may be passed twice or not at all.
func (q *Queue) Scan(ctx context.Context, opt queues.ScanOptions, fn func([]queues.Job) error) error {
	states := queues.States
	if opt.State != "" {
		if _, ok := asynqState[opt.State]; !ok {
			return &names.Error{Kind: "state", Name: opt.State, Reason: "asynq has ready, delayed, inflight, retry, dead and done"}
		}
		states = []string{opt.State}
	}
	page := opt.Page
	if page <= 0 || page > 1000 {
		page = defaultPage
	}
	passed := 0
	for _, s := range states {
		err := q.scanState(ctx, asynqState[s], page, opt, &passed, fn)
		if err == queues.ErrStop {
			return nil
		}
		if err != nil {
			return err
		}
		if opt.Max > 0 && passed >= opt.Max {
			return nil
		}
	}
	return nil
}

// scanState scans one of asynq's states.
func (q *Queue) scanState(ctx context.Context, state string, page int, opt queues.ScanOptions, passed *int, fn func([]queues.Job) error) error {
	kind, lease := "zset", "0"
	if state == statePending || state == stateActive {
		kind = "list"
	}
	if state == stateActive {
		lease = "1"
	}
	for start := 0; ; start += page {
		v, err := q.withMember(ctx, pageScript, []string{q.key(state), q.key("lease")}, kind, start, start+page-1, q.taskPrefix(), lease)
		if err != nil {
			return err
		}
		a, ok := v.([]any)
		if !ok || len(a) < 1 || (len(a)-1)%7 != 0 {
			return fmt.Errorf("%w: page: %v", errReply, v)
		}
		now := time.Now()
		var jobs []queues.Job
		for i := 1; i < len(a); i += 7 {
			id, _ := a[i].(string)
			f := fieldsAt(id, a[i+1:i+7])
			if f.msg == "" {
				continue // the task went between the range and its hash
			}
			if f.state != state {
				// Listed in the state's key, but its hash has moved on.
				continue
			}
			j, err := q.job(f, now)
			if err != nil {
				return err
			}
			if !opt.Keeps(j, now, payload(f.msg)) { // the payload as stored: a binary one is searched as it is, not as its base64
				continue
			}
			jobs = append(jobs, *j)
			if opt.Max > 0 && *passed+len(jobs) >= opt.Max {
				break
			}
		}
		if len(jobs) > 0 {
			*passed += len(jobs)
			if err := fn(jobs); err != nil {
				return err
			}
		}
		if (len(a)-1)/7 < page || (opt.Max > 0 && *passed >= opt.Max) {
			return nil
		}
	}
}

// payload is the payload field of an encoded message ("" when none).
func payload(msg string) string {
	fields, err := splitFields([]byte(msg))
	if err != nil {
		return ""
	}
	for _, f := range fields {
		if f.num == fieldPayload {
			_, _, n := protowire.ConsumeTag(f.raw)
			v, _ := protowire.ConsumeBytes(f.raw[n:])
			return string(v)
		}
	}
	return ""
}
