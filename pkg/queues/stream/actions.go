package stream

import (
	"context"
	"fmt"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// batch is the most entries one write call takes.
const batch = 100

// scriptStatus maps a write script's refusals to errors.
func (q *Queue) scriptStatus(st string, v []any) error {
	switch st {
	case "ok":
		return nil
	case "readonly":
		return errReadOnly("before 7.0")
	case "nostream", "nogroup":
		return q.errNoQueue()
	case "wrongtype":
		return fmt.Errorf("%w: the dead-letter key holds a %s, not a stream", names.ErrInvalid, str(v[0]))
	}
	return fmt.Errorf("stream script: unexpected status %q", st)
}

// run runs a write script and returns its values after the status.
func (q *Queue) run(ctx context.Context, s interface {
	Run(context.Context, redis.Scripter, []string, ...any) *redis.Cmd
}, keys []string, args ...any) ([]any, error) {
	res, err := s.Run(ctx, q.rdb, keys, args...).Result()
	if err != nil {
		return nil, q.notFound(err)
	}
	st, v, err := status(res)
	if err != nil {
		return nil, err
	}
	return v, q.scriptStatus(st, v)
}

// Recover claims pending entries idle at least opt.IdleFor for the
// consumer opt.Consumer (both required: XAUTOCLAIM and XCLAIM claim for a
// named consumer), in calls of at most 100 (claim.lua): opt.IDs by
// XCLAIM, else the whole PEL by XAUTOCLAIM from its start, until opt.Max.
// The claim is JUSTID: idle times reset, delivery counts stay, and the
// consumer reads its entries from its own history (XREADGROUP … 0).
// An entry deleted from the stream while pending is not claimed: Redis
// 7.0's XAUTOCLAIM and XCLAIM take it out of the PEL, which Skipped says.
func (q *Queue) Recover(ctx context.Context, opt queues.RecoverOptions) (*queues.Result, error) {
	if opt.Consumer == "" {
		return nil, fmt.Errorf("%w: claiming stream entries needs a named consumer to claim them for", names.ErrInvalid)
	}
	if opt.IdleFor <= 0 {
		return nil, fmt.Errorf("%w: claiming stream entries needs an idle time: entries idle less are left with their consumer", names.ErrInvalid)
	}
	if err := checkIDs(opt.IDs); err != nil {
		return nil, err
	}
	opt.IDs = unique(opt.IDs)
	idle := max(opt.IdleFor.Milliseconds(), 1)
	res := &queues.Result{Done: []string{}}
	left := func() int {
		if opt.Max <= 0 {
			return batch
		}
		return min(batch, opt.Max-len(res.Done))
	}
	if len(opt.IDs) > 0 {
		for ids := opt.IDs; len(ids) > 0 && left() > 0; {
			n := min(len(ids), left())
			part := ids[:n]
			ids = ids[n:]
			args := []any{q.group, opt.Consumer, idle, "ids"}
			for _, id := range part {
				args = append(args, id)
			}
			v, err := q.run(ctx, claimScript, []string{q.key}, args...)
			if err != nil {
				return res, err
			}
			claimed := map[string]bool{}
			for _, id := range strs(v[1]) {
				claimed[id] = true
				res.Done = append(res.Done, id)
			}
			why := map[string]string{}
			for _, w := range list(v[2]) {
				l := strs(w)
				why[l[0]] = l[1]
			}
			for _, id := range part {
				if !claimed[id] {
					if why[id] == "" {
						why[id] = "not claimed"
					}
					res.Skip(id, why[id])
				}
			}
		}
		return res, nil
	}
	for cursor := "0-0"; left() > 0; {
		v, err := q.run(ctx, claimScript, []string{q.key}, q.group, opt.Consumer, idle, "auto", cursor, left())
		if err != nil {
			return res, err
		}
		res.Done = append(res.Done, strs(v[1])...)
		for _, id := range strs(v[2]) {
			res.Skip(id, "deleted from the stream while pending: XAUTOCLAIM took it out of the PEL")
		}
		if cursor = str(v[0]); cursor == "0-0" {
			break
		}
	}
	return res, nil
}

// Remove acknowledges and deletes entries by id (remove.lua, 100 per
// call, each re-checked): XACK in the group when pending, then XDEL from
// the stream. XDEL takes an entry from every group of the stream, so an
// entry pending in this group (in flight), or that another group has yet
// to read or holds pending, is left unless force. An id in neither the
// stream nor the PEL is looked for in the default dead-letter stream and
// deleted there (XDEL).
func (q *Queue) Remove(ctx context.Context, ids []string, force bool) (*queues.Result, error) {
	if err := checkIDs(ids); err != nil {
		return nil, err
	}
	ids = unique(ids)
	res := &queues.Result{Done: []string{}}
	forced := "0"
	if force {
		forced = "1"
	}
	for len(ids) > 0 {
		part := ids[:min(len(ids), batch)]
		ids = ids[len(part):]
		args := []any{q.group, forced}
		for _, id := range part {
			args = append(args, id)
		}
		v, err := q.run(ctx, removeScript, []string{q.key}, args...)
		if err != nil {
			return res, err
		}
		var missing []string
		for _, x := range list(v[0]) {
			r := strs(x)
			switch id, st, info := r[0], r[1], r[2]; st {
			case "done":
				res.Done = append(res.Done, id)
			case "inflight":
				res.Skip(id, "in flight: pending to consumer "+info+" (force removes it)")
			case "needed":
				res.Skip(id, "group "+info+" still needs it, and XDEL takes it from every group (force removes it)")
			default:
				missing = append(missing, id)
			}
		}
		if err := q.removeDead(ctx, missing, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// removeDead deletes ids from the default dead-letter stream, one XDEL
// each in one pipeline, and skips those it does not hold.
func (q *Queue) removeDead(ctx context.Context, ids []string, res *queues.Result) error {
	if len(ids) == 0 {
		return nil
	}
	cmds := make([]*redis.IntCmd, len(ids))
	_, _ = q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.XDel(ctx, q.dead, id)
		}
		return nil
	})
	for i, id := range ids {
		n, err := cmds[i].Result()
		switch {
		case err != nil && !isGone(err):
			return err
		case n == 1:
			res.Done = append(res.Done, id)
		default:
			res.Skip(id, "not found")
		}
	}
	return nil
}

// DeadLetter moves entries of the group's PEL delivered at least
// opt.MinAttempts times to a dead-letter stream (opt.To, a key under the
// prefix, or KEY:dead:GROUP), up to opt.Max: XPENDING pages of 100 find
// them, and deadletter.lua moves each page's in one call, re-checking
// each (still pending, delivered often enough): XADD with its origin,
// then XACK in the group; never XDEL, since other groups of the stream
// still read it. On a Cluster both streams must share a slot.
func (q *Queue) DeadLetter(ctx context.Context, opt queues.DeadLetterOptions) (*queues.Result, error) {
	if opt.MinAttempts < 1 {
		return nil, fmt.Errorf("%w: dead-lettering needs a delivery count (1 or more)", names.ErrInvalid)
	}
	dead := q.dead
	if opt.To != "" {
		dead = q.pre + opt.To
	}
	if dead == q.key {
		return nil, fmt.Errorf("%w: the dead-letter stream cannot be the stream itself", names.ErrInvalid)
	}
	if err := q.sameSlot(q.rdb, dead); err != nil {
		return nil, err
	}
	res := &queues.Result{Done: []string{}}
	for start := "-"; opt.Max <= 0 || len(res.Done) < opt.Max; {
		raw, err := q.rdb.Do(ctx, "XPENDING", q.key, q.group, start, "+", batch).Result()
		if err != nil {
			return res, q.notFound(err)
		}
		page := list(raw)
		if len(page) == 0 {
			break
		}
		start = "(" + str(list(page[len(page)-1])[0])
		args := []any{q.group, opt.MinAttempts}
		for _, x := range page {
			p := list(x)
			if num(p[3]) >= opt.MinAttempts && (opt.Max <= 0 || len(res.Done)+len(args)-2 < opt.Max) {
				args = append(args, str(p[0]))
			}
		}
		if len(args) > 2 {
			v, err := q.run(ctx, deadLetterScript, []string{q.key, dead}, args...)
			if err != nil {
				return res, err
			}
			for _, x := range list(v[0]) {
				r := strs(x)
				switch id, st, info := r[0], r[1], r[2]; st {
				case "done":
					res.Done = append(res.Done, id)
				case "notpending":
					res.Skip(id, "no longer pending in the group")
				case "attempts":
					res.Skip(id, "delivered "+info+" times")
				case "deleted":
					res.Skip(id, "deleted from the stream while pending: no fields to dead-letter (rm --force acknowledges it)")
				case "toolarge":
					res.Skip(id, info+" fields: too many for one XADD from a script")
				}
			}
		}
		if len(page) < batch {
			break
		}
	}
	return res, nil
}

// Redrive moves up to max entries (0: all) of the default dead-letter
// stream back to the stream, 100 per call (redrive.lua): each is added
// again with its own fields as a new entry (a new id: a group reads only
// what is after its last-delivered-id, so this is the only way it is
// delivered again), which every other group of the stream reads too,
// then deleted from the dead-letter stream. Entries the markers say came
// from another stream or group are left.
func (q *Queue) Redrive(ctx context.Context, max int) (*queues.Result, error) {
	if err := q.sameSlot(q.rdb, q.dead); err != nil {
		return nil, err
	}
	res := &queues.Result{Done: []string{}}
	for after := ""; max <= 0 || len(res.Done) < max; {
		n := batch
		if max > 0 {
			n = min(batch, max-len(res.Done))
		}
		v, err := q.run(ctx, redriveScript, []string{q.dead, q.key}, q.group, after, n)
		if err != nil {
			return res, err
		}
		if after = str(v[0]); after == "" {
			break
		}
		for _, x := range list(v[1]) {
			r := strs(x)
			switch id, st, info := r[0], r[1], r[2]; st {
			case "done":
				res.Done = append(res.Done, id)
			case "foreign":
				res.Skip(id, "no chatq origin markers: left in the dead-letter stream")
			case "origin":
				res.Skip(id, "came from "+info+", not this stream and group: left")
			}
		}
	}
	return res, nil
}
