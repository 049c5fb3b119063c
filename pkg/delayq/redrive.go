package delayq

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

var (
	//go:embed redrive.lua
	redriveLua    string
	redriveScript = script(redriveLua)
)

// redriveExamine is the most dead-letter queue entries one redrive call
// looks at (each an HMGET or two), so that a queue of in-flight messages
// is walked in bounded steps.
const redriveExamine = 500

// RedriveOptions say where a redrive moves messages and how many.
type RedriveOptions struct {
	// To is the destination queue; "" means the one queue whose dead-letter
	// queue is the one redriven (see DeadLetterSources).
	To string
	// N is the most messages moved; 0 means as many as the dead-letter
	// queue held when the redrive started, so that messages dead-lettered
	// while it runs cannot keep it going for ever.
	N int
	// Progress, if set, is called after each script call with the messages
	// moved so far and the most that will be.
	Progress func(moved, limit int)
}

// Redriven is what a redrive did.
type Redriven struct {
	// To is the destination given (RedriveOptions.To), or else the one
	// queue whose dead-letter queue this is ("" when none or several are):
	// where the messages that record no origin go.
	To string
	// Moved messages are in a destination now, due at once, with their ids
	// and bodies and no receive count; MovedTo counts them per destination.
	Moved   int
	MovedTo map[string]int
	// InFlight counts messages left in the dead-letter queue because a
	// consumer holds them (received, visibility timeout not over): a later
	// redrive takes them.
	InFlight int
	// Exists lists ids left because the destination has a message with the
	// same id; TooLong ids whose body is over the destination's maxsize.
	Exists  []string
	TooLong []string
	// NoDestination counts messages left because no destination is known
	// for them: To was not given, no single queue has the dead-letter queue
	// as its own, and they record no origin (dead-lettered before chatq
	// recorded one, or by another client) or one that no longer exists.
	NoDestination int
	// Limit is the most this redrive would move (N, or the dead-letter
	// queue's size at the start).
	Limit int
	// Sources are, when To was not given and no queue or several have the
	// dead-letter queue as theirs, those queues. When then no message had
	// a destination the error matches ErrInvalid: the caller must name one.
	Sources []string
}

// Redrive moves the messages of dead-letter queue dlq back, oldest (lowest
// visible-at) first, keeping ids and bodies: in the destination each is a
// fresh message, due now, with no receive count; its totalsent counts it,
// and its realtime channel is published on. The destination is opt.To
// for every message when given; otherwise the queue a message was
// dead-lettered from, as the move recorded it (Message.DeadLetteredFrom),
// while that queue exists, and else the one queue whose dead-letter queue
// dlq is (a message dead-lettered before chatq recorded its origin goes
// there, as it always did). It walks dlq once for that queue and once more
// for each other origin found (and once more for messages whose origin is
// gone). Each script call moves at most 100 messages and examines at most
// 500 entries, atomically: a message is in exactly one of the two queues at
// every moment, whatever consumers of either queue do meanwhile. Messages
// in flight in dlq (a consumer holds them), ids the destination already has,
// bodies over its maxsize and messages with no destination stay in dlq and
// are reported. On an error after some calls, the result says what the
// calls before it did. Refused with hash tags (Redis Cluster): the two
// queues are in different slots.
func (c *Client) Redrive(ctx context.Context, dlq string, opt RedriveOptions) (*Redriven, error) {
	if err := CheckName(dlq); err != nil {
		return nil, err
	}
	if c.tag {
		return nil, fmt.Errorf("redrive is not supported with hash tags (Redis Cluster): the two queues are in different slots: %w", errInvalidValue)
	}
	if opt.To != "" {
		if err := CheckName(opt.To); err != nil {
			return nil, err
		}
		if opt.To == dlq {
			return nil, fmt.Errorf("queue %q cannot be redriven into itself: %w", dlq, errInvalidValue)
		}
	}
	if opt.N < 0 {
		return nil, fmt.Errorf("count %d: must not be negative: %w", opt.N, errInvalidValue)
	}
	w := &redriveWalk{c: c, dlq: dlq, opt: opt, res: &Redriven{To: opt.To, Limit: opt.N, MovedTo: map[string]int{}}, gone: map[string]bool{}}
	res := w.res
	if opt.To != "" {
		_, err := w.walk(ctx, opt.To, "to")
		if errors.Is(err, errDestGone) {
			err = fmt.Errorf("destination %w", notFound(opt.To))
		}
		return res, err
	}
	srcs, err := c.DeadLetterSources(ctx, dlq)
	if err != nil {
		return nil, err
	}
	if len(srcs) == 1 {
		res.To = srcs[0]
	} else {
		res.Sources = srcs
	}
	// The one source's walk (with none, a walk that only looks) moves the
	// messages without an origin, and learns the other origins.
	todo, err := w.walk(ctx, res.To, "fallback")
	switch {
	case errors.Is(err, ErrQueueNotFound) && res.To == "":
		return res, noSource(dlq, srcs)
	case errors.Is(err, errDestGone):
		return res, fmt.Errorf("destination %w", notFound(res.To))
	case err != nil:
		return res, err
	}
	done := map[string]bool{res.To: true}
	for len(todo) > 0 {
		origin := todo[0]
		todo = todo[1:]
		if done[origin] {
			continue
		}
		done[origin] = true
		more, err := w.walk(ctx, origin, "origin")
		switch {
		case errors.Is(err, errDestGone):
			w.gone[origin] = true
		case err != nil:
			return res, err
		}
		todo = append(todo, more...)
	}
	if len(w.gone) > 0 {
		// Messages whose origin is gone go where those without one went.
		if _, err := w.walk(ctx, res.To, "gone"); err != nil {
			return res, err
		}
	}
	// Without a source, a dead-letter queue none of whose messages had a
	// destination is refused as it always was: nothing changed.
	if res.To == "" && res.Moved+res.InFlight+len(res.Exists)+len(res.TooLong) == 0 {
		return res, noSource(dlq, srcs)
	}
	return res, nil
}

// noSource is the error of a redrive that found no destination: no queue
// or several have dlq as their dead-letter queue (srcs).
func noSource(dlq string, srcs []string) error {
	if len(srcs) == 0 {
		return invalidError(fmt.Sprintf("no queue has %q as its dead-letter queue", dlq))
	}
	return invalidError(fmt.Sprintf("%d queues have %q as their dead-letter queue: %s", len(srcs), dlq, strings.Join(srcs, ", ")))
}

// errDestGone is a redrive walk's destination that does not exist.
var errDestGone = errors.New("destination gone")

// redriveWalk is one redrive: its walks of the dead-letter queue share the
// result, the limit and the origins found gone.
type redriveWalk struct {
	c          *Client
	dlq        string
	opt        RedriveOptions
	res        *Redriven
	gone       map[string]bool // origins that no longer exist
	limitKnown bool
}

// walk walks the dead-letter queue from its start with redrive.lua,
// moving to dest ("" for none: it only looks) the messages mode chooses
// (see redrive.lua), until the walk ends or the limit is reached. It
// returns the other origins it saw, and errDestGone when dest does not
// exist.
func (w *redriveWalk) walk(ctx context.Context, dest, mode string) ([]string, error) {
	c, res := w.c, w.res
	keys := c.keys(w.dlq)
	channel := ""
	if dest != "" {
		keys = append(keys, c.keys(dest)...)
		channel = c.channel(dest)
	}
	gone := slices.Sorted(maps.Keys(w.gone))
	var others []string
	cscore, cid := "", ""
	for {
		want := maxBatch
		if w.limitKnown || w.opt.N > 0 {
			want = min(want, res.Limit-res.Moved)
		}
		if want <= 0 {
			return others, nil
		}
		a, err := run(ctx, c.rdb, redriveScript, keys, want, redriveExamine, cscore, cid, channel, dest, mode, strings.Join(gone, " "), w.dlq)
		if err != nil {
			return others, err
		}
		if str(a[0]) == "notfound" {
			if str(a[1]) == "dlq" {
				return others, notFound(w.dlq)
			}
			return others, errDestGone
		}
		moved := int(num(a[1]))
		res.Moved += moved
		if moved > 0 {
			res.MovedTo[dest] += moved
		}
		res.InFlight += int(num(a[2]))
		cscore, cid = str(a[3]), str(a[4])
		if !w.limitKnown && w.opt.N == 0 {
			res.Limit = int(num(a[6]))
		}
		w.limitKnown = true
		res.NoDestination += int(num(a[8]) + num(a[9]))
		i := 11
		for k := int(num(a[10])); k > 0 && i < len(a); k-- {
			others = append(others, str(a[i]))
			i++
		}
		for ; i+1 < len(a); i += 2 {
			switch str(a[i]) {
			case "exists":
				res.Exists = append(res.Exists, str(a[i+1]))
			case "toolong":
				res.TooLong = append(res.TooLong, str(a[i+1]))
			}
		}
		if w.opt.Progress != nil {
			w.opt.Progress(res.Moved, res.Limit)
		}
		if num(a[5]) == 1 || res.Moved >= res.Limit {
			return others, nil
		}
	}
}
