package asynq

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/pkg/queues"
)

var (
	//go:embed lib.lua
	libLua string
	//go:embed run.lua
	runLua    string
	runScript = writer(runLua)
	//go:embed delete.lua
	deleteLua    string
	deleteScript = writer(deleteLua)
	//go:embed redrive.lua
	redriveLua    string
	redriveScript = writer(redriveLua)
	//go:embed leased.lua
	leasedLua    string
	leasedScript = luascript.New(leasedLua)
	//go:embed recover.lua
	recoverLua    string
	recoverScript = writer(recoverLua)
)

// writer is a script that writes: the permission check (allowed), this
// package's helpers (lib.lua), then its own text.
func writer(body string) *luascript.Script {
	return luascript.New(luascript.Permitted, libLua, body)
}

// batch is the most tasks one write script handles.
const batch = 100

// listReach is how far from either end of a list (pending, active) a task
// is looked for when it must leave it: LREM of a task deeper in a long
// list would walk it.
const listReach = 1000

// searchBudget is how many list entries one script may compare looking
// for tasks (LPOS, then LREM): tasks past it wait for the next call.
const searchBudget = 20000

// Asynq's own limits on the archive (rdb.maxArchiveSize,
// archivedExpirationInDays), which its Archive trims to.
const (
	maxArchiveSize = 10000
	archiveDays    = 90
)

// statsTTL is how long asynq keeps a day's processed and failed counters.
const statsTTL = 90 * 24 * time.Hour

// why says why a script left a task, by its code.
func why(code string) string {
	switch code {
	case "missing":
		return "not found"
	case "nostate":
		return "its hash has no state field: " + queues.ErrReadOnly.Error() + " (" + Known + ")"
	case "notinset":
		return "its state's list or set does not hold it: left as it is"
	case "deep":
		return fmt.Sprintf("more than %d tasks from both ends of its list: removing it would walk the list", listReach)
	case "active":
		return "in flight: its worker may still finish it (a forced rm removes it once its lease has expired)"
	case "running":
		return "in flight: asynq runs it already"
	case "leased":
		return "in flight with a live lease: its worker is still running it (asynq's CancelProcessing stops it)"
	case "changed":
		return "changed while chatq looked at it: left as it is"
	case statePending:
		return "pending: ready already"
	case stateCompleted:
		return "completed: done, not run again"
	case stateAggregating:
		return "aggregating in a group: left to asynq's aggregator"
	}
	if len(code) > 6 && code[:6] == "state:" {
		code = code[6:]
	}
	return "in state " + strconv.Quote(code) + ", which asynq 0.26 does not have: " + queues.ErrReadOnly.Error()
}

// replyStrings returns a script's reply as strings.
func replyStrings(v any) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: %v", errReply, v)
	}
	out := make([]string, len(a))
	for i, x := range a {
		switch x := x.(type) {
		case string:
			out[i] = x
		case int64:
			out[i] = strconv.FormatInt(x, 10)
		}
	}
	return out, nil
}

// eachBatch calls fn with ids in batches of at most batch, after checking
// that the queue is one chatq may write.
func (q *Queue) eachBatch(ctx context.Context, ids []string, fn func([]string) ([]string, error)) (*queues.Result, error) {
	if err := q.checkWritable(ctx); err != nil {
		return nil, err
	}
	res := &queues.Result{Done: []string{}}
	ids = slices.Clone(ids)
	seen := map[string]bool{}
	ids = slices.DeleteFunc(ids, func(id string) bool { d := seen[id]; seen[id] = true; return d })
	for len(ids) > 0 {
		n := min(batch, len(ids))
		part := ids[:n]
		ids = ids[n:]
		codes, err := fn(part)
		if err != nil {
			return res, err
		}
		if len(codes) != len(part) {
			return res, fmt.Errorf("%w: %d codes for %d ids", errReply, len(codes), len(part))
		}
		var later []string
		for i, c := range codes {
			if c == "later" {
				// The script's first task always gets an answer, so this
				// ends.
				later = append(later, part[i])
			} else if c == "ok" {
				res.Done = append(res.Done, part[i])
			} else {
				res.Skip(part[i], why(c))
			}
		}
		ids = append(later, ids...)
	}
	return res, nil
}

// Retry runs tasks now that are scheduled, retrying or archived, as
// asynq's Inspector.RunTask does; one script per 100 ids.
func (q *Queue) Retry(ctx context.Context, ids []string) (*queues.Result, error) {
	return q.eachBatch(ctx, ids, func(part []string) ([]string, error) {
		args := []any{q.base, q.taskPrefix()}
		for _, id := range part {
			args = append(args, id)
		}
		v, err := runScript.Run(ctx, q.k.rdb, []string{q.key(statePending), q.key(stateScheduled), q.key(stateRetry), q.key(stateArchived)}, args...).Result()
		if err != nil {
			return nil, err
		}
		codes, err := replyStrings(v)
		for i, c := range codes {
			if c == stateActive {
				codes[i] = "running"
			}
		}
		return codes, err
	})
}

// Remove deletes tasks as asynq's Inspector.DeleteTask does; one script
// per 100 ids. Asynq refuses an active task; with force, chatq deletes one
// whose lease expired more than 30 s ago (its worker is gone, so none
// will finish it), never one whose worker still extends its lease: that
// worker would fail to record the task's end.
func (q *Queue) Remove(ctx context.Context, ids []string, force bool) (*queues.Result, error) {
	f := "0"
	if force {
		f = "1"
	}
	return q.eachBatch(ctx, ids, func(part []string) ([]string, error) {
		now, err := q.k.rdb.Time(ctx).Result()
		if err != nil {
			return nil, err
		}
		args := []any{q.base, q.taskPrefix(), f, now.Add(-leaseGrace).Unix(), listReach, q.k.prefix, searchBudget}
		for _, id := range part {
			args = append(args, id)
		}
		keys := []string{q.key(statePending), q.key(stateActive), q.key("lease"), q.key("groups"),
			q.key(stateScheduled), q.key(stateRetry), q.key(stateArchived), q.key(stateCompleted)}
		v, err := deleteScript.Run(ctx, q.k.rdb, keys, args...).Result()
		if err != nil {
			return nil, err
		}
		return replyStrings(v)
	})
}

// Redrive runs up to max archived tasks now (0: all), oldest first, as
// asynq's RunAllArchivedTasks does, in scripts of at most 100 tasks; a
// task left (its hash says another state) stays archived.
func (q *Queue) Redrive(ctx context.Context, max int) (*queues.Result, error) {
	if err := q.checkWritable(ctx); err != nil {
		return nil, err
	}
	res := &queues.Result{Done: []string{}}
	from := 0
	for max == 0 || len(res.Done) < max {
		n := batch
		if max > 0 {
			n = min(n, max-len(res.Done))
		}
		v, err := redriveScript.Run(ctx, q.k.rdb, []string{q.key(stateArchived), q.key(statePending)}, q.taskPrefix(), from, n).Result()
		if err != nil {
			return res, err
		}
		a, err := replyStrings(v)
		if err != nil || len(a) < 1 || len(a)%2 != 1 {
			return res, fmt.Errorf("%w: redrive: %v", errReply, v)
		}
		for i := 1; i < len(a); i += 2 {
			if a[i+1] == "ok" {
				res.Done = append(res.Done, a[i])
			} else {
				res.Skip(a[i], why(a[i+1]))
				from++
			}
		}
		if looked, _ := strconv.Atoi(a[0]); looked < n {
			break
		}
	}
	return res, nil
}

// Pause pauses the queue as asynq's Inspector.PauseQueue does (SET NX of
// asynq:{q}:paused to the time, in Unix seconds); pausing a paused queue
// changes nothing.
func (q *Queue) Pause(ctx context.Context) error {
	if err := q.checkWritable(ctx); err != nil {
		return err
	}
	now, err := q.k.rdb.Time(ctx).Result()
	if err != nil {
		return err
	}
	return q.k.rdb.SetNX(ctx, q.key("paused"), now.Unix(), 0).Err()
}

// Resume resumes the queue as asynq's Inspector.UnpauseQueue does (DEL
// asynq:{q}:paused).
func (q *Queue) Resume(ctx context.Context) error {
	if err := q.checkWritable(ctx); err != nil {
		return err
	}
	return q.k.rdb.Del(ctx, q.key("paused")).Err()
}

// Recover takes back active tasks whose lease expired more than 30 s ago,
// as asynq's recoverer does: each goes to retry with the error "asynq:
// task lease expired" and one more retry counted, or to the archive when
// its retries are used up. Unlike asynq's recoverer, which asks the
// server's RetryDelayFunc, chatq makes the task due now. One read and one
// write script per 100 tasks.
func (q *Queue) Recover(ctx context.Context, opt queues.RecoverOptions) (*queues.Result, error) {
	if err := q.checkWritable(ctx); err != nil {
		return nil, err
	}
	res := &queues.Result{Done: []string{}}
	ids := opt.IDs
	skipped := 0 // expired entries left by earlier batches, passed over
	for opt.Max == 0 || len(res.Done) < opt.Max {
		n := batch
		if opt.Max > 0 {
			n = min(n, opt.Max-len(res.Done))
		}
		var part []string
		if opt.IDs != nil {
			if len(ids) == 0 {
				break
			}
			k := min(n, len(ids))
			part, ids = ids[:k], ids[k:]
		}
		now, err := q.k.rdb.Time(ctx).Result()
		if err != nil {
			return res, err
		}
		cutoff := now.Add(-leaseGrace).Unix()
		args := []any{cutoff, skipped, n, q.taskPrefix()}
		for _, id := range part {
			args = append(args, id)
		}
		v, err := leasedScript.Run(ctx, q.k.rdb, []string{q.key("lease")}, args...).Result()
		if err != nil {
			return res, err
		}
		a, err := replyStrings(v)
		if err != nil || len(a) < 1 || (len(a)-1)%4 != 0 {
			return res, fmt.Errorf("%w: leased: %v", errReply, v)
		}
		if opt.IDs != nil {
			found := map[string]bool{}
			for i := 1; i < len(a); i += 4 {
				found[a[i]] = true
			}
			for _, id := range part {
				if !found[id] {
					res.Skip(id, "no lease expired more than 30 s ago (not in flight, or its worker still extends it)")
				}
			}
		}
		wargs := []any{q.taskPrefix(), cutoff, now.Unix(), now.Add(statsTTL).Unix(),
			now.AddDate(0, 0, -archiveDays).Unix(), maxArchiveSize, listReach, batch, strconv.FormatInt(math.MaxInt64, 10), searchBudget}
		var order []string
		for i := 1; i < len(a); i += 4 {
			id, msg, state := a[i], a[i+2], a[i+3]
			if state != stateActive {
				res.Skip(id, "its lease expired but its hash says "+strconv.Quote(state)+": left as it is")
				skipped++
				continue
			}
			m, err := decodeMessage([]byte(msg))
			if err != nil {
				res.Skip(id, err.Error())
				skipped++
				continue
			}
			if len(m.Unknown) > 0 {
				res.Skip(id, fmt.Sprintf("its message has field %d, which asynq 0.26 does not write: %s (%s)", m.Unknown[0], queues.ErrReadOnly, Known))
				skipped++
				continue
			}
			to, retried := "retry", m.Retried+1
			if m.Retried >= m.Retry {
				to, retried = "archive", -1
			}
			rewritten, err := failed([]byte(msg), retried, errLeaseExpired, now.Unix())
			if err != nil {
				res.Skip(id, err.Error())
				skipped++
				continue
			}
			wargs = append(wargs, id, msg, rewritten, to)
			order = append(order, id)
		}
		progress := len(res.Done) + len(res.Skipped) + skipped
		deferred := false
		if len(order) > 0 {
			day := now.UTC().Format("2006-01-02")
			keys := []string{q.key(stateActive), q.key("lease"), q.key(stateRetry), q.key(stateArchived),
				q.key("processed:" + day), q.key("failed:" + day), q.key("processed"), q.key("failed")}
			v, err := recoverScript.Run(ctx, q.k.rdb, keys, wargs...).Result()
			if err != nil {
				return res, err
			}
			codes, err := replyStrings(v)
			if err != nil || len(codes) != len(order) {
				return res, fmt.Errorf("%w: recover: %v", errReply, v)
			}
			var later []string
			for i, c := range codes {
				if c == "later" {
					// Still expired where it was: the next batch reads it
					// again (or, by id, takes it again).
					later = append(later, order[i])
				} else if c == "retry" || c == "archive" {
					res.Done = append(res.Done, order[i])
					delete(res.Skipped, order[i])
				} else {
					res.Skip(order[i], why(c))
					if c != "changed" && c != "leased" {
						skipped++
					}
				}
			}
			if opt.IDs != nil {
				ids = append(later, ids...)
			}
			deferred = len(later) > 0
		}
		if looked, _ := strconv.Atoi(a[0]); opt.IDs == nil && looked < n && !deferred {
			break
		}
		if opt.IDs == nil && len(order) > 0 && len(res.Done)+len(res.Skipped)+skipped == progress {
			break // every task changed under it: the next batch would read them again
		}
	}
	return res, nil
}
