package delayq

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
)

var (
	//go:embed redrive.lua
	redriveLua    string
	redriveScript = queueScript(redriveLua)
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
	To string // the destination
	// Moved messages are in the destination now, due at once, with their
	// ids and bodies and no receive count.
	Moved int
	// InFlight counts messages left in the dead-letter queue because a
	// consumer holds them (received, visibility timeout not over): a later
	// redrive takes them.
	InFlight int
	// Exists lists ids left because the destination has a message with the
	// same id; TooLong ids whose body is over the destination's maxsize.
	Exists  []string
	TooLong []string
	// Limit is the most this redrive would move (N, or the dead-letter
	// queue's size at the start).
	Limit int
	// Sources are, when To was not given and no queue or several have
	// the dead-letter queue as theirs (the error then matches ErrInvalid:
	// the caller must name the destination), those queues.
	Sources []string
}

// Redrive moves the messages of dead-letter queue dlq back to a queue
// (opt.To, or the queue whose dead-letter queue it is), oldest (lowest
// visible-at) first, keeping ids and bodies: in the destination each is a
// fresh message, due now, with no receive count; its totalsent counts it,
// and its realtime channel is published on. Each script call moves at most
// 100 messages and examines at most 500 entries, atomically: a message is
// in exactly one of the two queues at every moment, whatever consumers of
// either queue do meanwhile. Messages in flight in dlq (a consumer holds
// them), ids the destination already has and bodies over its maxsize stay
// in dlq and are reported. On an error after some calls, the result says
// what the calls before it did. Refused with hash tags (Redis Cluster): the
// two queues are in different slots.
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
	to := opt.To
	if to == "" {
		srcs, err := c.DeadLetterSources(ctx, dlq)
		if err != nil {
			return nil, err
		}
		switch len(srcs) {
		case 0:
			return &Redriven{}, invalidError(fmt.Sprintf("no queue has %q as its dead-letter queue", dlq))
		case 1:
		default:
			return &Redriven{Sources: srcs}, invalidError(fmt.Sprintf("%d queues have %q as their dead-letter queue: %s", len(srcs), dlq, strings.Join(srcs, ", ")))
		}
		to = srcs[0]
	}
	res := &Redriven{To: to, Limit: opt.N}
	keys := append(c.keys(dlq), c.keys(to)...)
	cscore, cid := "", ""
	for first := true; ; first = false {
		want := maxBatch
		if !first {
			want = min(want, res.Limit-res.Moved)
		} else if opt.N > 0 {
			want = min(want, opt.N)
		}
		if want <= 0 {
			return res, nil
		}
		a, err := run(ctx, c.rdb, redriveScript, keys, want, redriveExamine, cscore, cid, c.channel(to))
		if err != nil {
			return res, err
		}
		if str(a[0]) == "notfound" {
			if str(a[1]) == "dlq" {
				return res, notFound(dlq)
			}
			return res, fmt.Errorf("destination %w", notFound(to))
		}
		res.Moved += int(num(a[1]))
		res.InFlight += int(num(a[2]))
		cscore, cid = str(a[3]), str(a[4])
		if first && opt.N == 0 {
			res.Limit = int(num(a[6]))
		}
		for i := 8; i+1 < len(a); i += 2 {
			switch str(a[i]) {
			case "exists":
				res.Exists = append(res.Exists, str(a[i+1]))
			case "toolong":
				res.TooLong = append(res.TooLong, str(a[i+1]))
			}
		}
		if opt.Progress != nil {
			opt.Progress(res.Moved, res.Limit)
		}
		if num(a[5]) == 1 || res.Moved >= res.Limit {
			return res, nil
		}
	}
}
