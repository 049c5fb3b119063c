package delayq

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"
)

// PushOptions say when a pushed message becomes due. At and Delay exclude
// each other; with neither, the queue's delay applies.
type PushOptions struct {
	// At: due at this time (rounded up to the millisecond), at most
	// 9999999 seconds after the server's now.
	At time.Time
	// Delay: due this long after the server's now, whole milliseconds up
	// to 9999999 seconds; 0 means the queue's delay, -1 no delay.
	Delay time.Duration
}

// Pushed is the result of a push.
type Pushed struct {
	ID        string
	VisibleAt time.Time // when it becomes due
	Sent      time.Time // server time of the push
	// Notified is false when this user may not PUBLISH on Channel, the
	// queue's realtime channel: the message is stored, but consumers
	// waiting with Wait are not woken (they find it when their wait or
	// next due time ends).
	Notified bool
	Channel  string
}

// Push adds a message to queue q and returns its id. The body's length in
// UTF-16 units must not exceed the queue's maxsize (ErrMessageTooLong).
// One round trip; the script also publishes on the realtime channel.
func (c *Client) Push(ctx context.Context, q, body string, opt PushOptions) (*Pushed, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	mode, value := "default", int64(0)
	delay, hasDelay, err := checkOption("delay", opt.Delay, time.Millisecond)
	switch {
	case !opt.At.IsZero() && hasDelay:
		return nil, fmt.Errorf("give a time or a delay, not both: %w", errInvalidValue)
	case err != nil:
		return nil, err
	case !opt.At.IsZero():
		ms := opt.At.UnixMilli()
		if opt.At.After(time.UnixMilli(ms)) {
			ms++ // never due before the time asked for
		}
		if ms < 0 {
			return nil, fmt.Errorf("time %s: before 1970: %w", opt.At, errInvalidValue)
		}
		mode, value = "at", ms
	case hasDelay:
		mode, value = "delay", delay.Milliseconds()
	}
	// A body that is not UTF-8 could not be shown in JSON or to a Node
	// consumer without changing it; chat send refuses it too.
	if !utf8.ValidString(body) {
		return nil, fmt.Errorf("message is not valid UTF-8 (send binary data encoded, e.g. base64): %w", errInvalidValue)
	}
	n16 := len16(body)
	a, err := run(ctx, c.rdb, pushScript, c.keys(q), randomID(), mode, value, n16, body, c.channel(q))
	if err != nil {
		return nil, err
	}
	switch str(a[0]) {
	case "notfound":
		return nil, notFound(q)
	case "toolong":
		return nil, fmt.Errorf("queue %q: %d UTF-16 units, maxsize is %s: %w", q, n16, str(a[1]), ErrMessageTooLong)
	case "toolate":
		return nil, fmt.Errorf("time %s: more than %ds (RSMQ's largest delay, about 115 days) after the server's time %s: %w",
			opt.At.UTC().Format(time.RFC3339), maxSeconds, msTime(str(a[1])).UTC().Format(time.RFC3339), errInvalidValue)
	}
	return &Pushed{ID: str(a[1]), VisibleAt: msTime(str(a[2])), Sent: msTime(str(a[3])), Notified: len(a) > 4 && num(a[4]) == 1, Channel: c.channel(q)}, nil
}

// Message is a message of a queue, with RSMQ's fields.
type Message struct {
	ID        string
	Body      string
	RC        int64     // how many times it has been received (a receive counts itself)
	FR        time.Time // first receive (ms); zero: never received
	Sent      time.Time // when it was pushed (from the id)
	VisibleAt time.Time // when it is or becomes due (zero when popped)
	// Receipt names this delivery of a received message (see
	// ErrStaleReceipt): Ack and ChangeVisibility given it change the
	// message only while no later receive has taken it. Format:
	// "<id>.<rc>.<fr ms>".
	Receipt string
	// State is where a message read by Peek, Get or Export stood at server
	// time Now: "ready" (due), "delayed" (not due, never received) or
	// "inflight" (received, not due again yet). For a received message Now
	// is the server time of the receive.
	State string
	Now   time.Time
}

// The states of Message.State and PeekOptions.State.
const (
	ready    = "ready"
	delayed  = "delayed"
	inFlight = "inflight"
)

// ReceiveOptions control a receive.
type ReceiveOptions struct {
	N int // at most this many messages (default 1)
	// VT is the visibility timeout, whole milliseconds up to 9999999
	// seconds; 0 means the queue's vt, -1 a vt of 0 (visible again at
	// once).
	VT   time.Duration
	Pop  bool          // delete on receive instead of hiding
	Wait time.Duration // when none is due, wait up to this long
	// Moved, if set, is called when a receive moved messages to the
	// dead-letter queue deadLetter (received too often), with how many.
	Moved func(n int, deadLetter string)
	// DeadLetterMissing, if set, is called when a receive delivered a
	// message that the dead-letter policy would have moved, because the
	// dead-letter queue deadLetter does not exist (deleted since the
	// policy was set): nothing is lost, the policy is off until that queue
	// is created again.
	DeadLetterMissing func(deadLetter string)
}

// received is what one receive did.
type received struct {
	messages []Message
	// moved counts messages moved to the dead-letter queue; deadLetterMissing
	// is the ReceiveOptions.DeadLetterMissing case.
	moved             int
	deadLetterMissing bool
	// now is the server time of the claim; nextVisible the earliest due
	// time of what is left when fewer than N messages were claimed (zero
	// when the queue is empty, and when all N were claimed: then it is not
	// read).
	now         time.Time
	nextVisible time.Time
	exactNow    time.Time // now to the microsecond
	sentAt      time.Time // local clock when the claim that took them was sent
}

// check checks o and returns the vt argument of receive.lua ("" for the
// queue's).
func (o *ReceiveOptions) check() (string, error) {
	if o.N == 0 {
		o.N = 1
	}
	if o.N < 0 {
		return "", fmt.Errorf("count %d: must be positive: %w", o.N, errInvalidValue)
	}
	vt, given, err := checkOption("vt", o.VT, time.Millisecond)
	if err != nil {
		return "", err
	}
	if o.Wait < 0 {
		return "", fmt.Errorf("wait %s: must not be negative: %w", o.Wait, errInvalidValue)
	}
	if !given {
		return "", nil
	}
	return fmt.Sprint(vt.Milliseconds()), nil
}

// Receive claims up to opt.N due messages of queue q in atomic script calls
// of at most 100 messages (one call for N ≤ 100): each is hidden for the
// visibility timeout with its receive count incremented, or deleted with
// Pop. With Wait and nothing due it sleeps until the next message is due
// or a push arrives, up to Wait. No message due is an empty result, not an
// error.
func (c *Client) Receive(ctx context.Context, q string, opt ReceiveOptions) ([]Message, error) {
	r, err := c.receive(ctx, q, opt)
	if err != nil {
		return nil, err
	}
	return r.messages, nil
}

// receive is Receive returning what the receive did, and calling opt's
// callbacks.
func (c *Client) receive(ctx context.Context, q string, opt ReceiveOptions) (*received, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	vt, err := opt.check()
	if err != nil {
		return nil, err
	}
	var r *received
	if opt.Wait > 0 {
		r, err = c.receiveWait(ctx, q, opt, vt)
	} else {
		r, err = c.claimPrompt(ctx, q, opt, vt)
	}
	if err != nil {
		return nil, err
	}
	if r.moved > 0 && opt.Moved != nil {
		opt.Moved(r.moved, c.deadLetter(q))
	}
	if r.deadLetterMissing && opt.DeadLetterMissing != nil {
		opt.DeadLetterMissing(c.deadLetter(q))
	}
	return r, nil
}

// claim runs the receive script once per 100 messages, and once more if a
// dead-letter move needs keys the client did not know; vt is the script's
// vt argument.
func (c *Client) claim(ctx context.Context, q string, opt ReceiveOptions, vt string) (*received, error) {
	res := &received{}
	pop := "0"
	if opt.Pop {
		pop = "1"
	}
	// At most maxBatch messages per script call, so that a big -n never
	// holds the server for long: the calls follow each other until N are
	// claimed or fewer than asked were due. Each call is atomic; a message
	// is claimed by one call only.
	for attempt := 0; attempt < 3; {
		keys := c.keys(q)
		dead := c.deadLetter(q)
		if dead != "" {
			keys = append(keys, c.keys(dead)...)
		}
		sent := time.Now()
		want := min(opt.N-len(res.messages), maxBatch)
		before := len(res.messages)
		a, err := run(ctx, c.rdb, receiveScript, keys, want, vt, pop, dead, c.channel(dead))
		if err != nil {
			return nil, err
		}
		status := str(a[0])
		if status == "notfound" {
			return nil, notFound(q)
		}
		res.now = msTime(str(a[1]))
		res.exactNow = res.now.Add(time.Duration(num(a[6])%1000) * time.Microsecond)
		res.nextVisible = msTime(str(a[2]))
		res.moved += int(num(a[4]))
		if status == "nodlq" {
			res.deadLetterMissing = true
		}
		more := str(a[7]) == "1"
		for i := 8; i+3 < len(a); i += 4 {
			m := Message{ID: str(a[i]), Body: str(a[i+1]), RC: num(a[i+2]), FR: msTime(str(a[i+3])), Now: res.now}
			m.Sent = sentAt(m.ID)
			m.Receipt = receipt(m.ID, m.RC, m.FR)
			if res.sentAt.IsZero() {
				res.sentAt = sent
			}
			if !opt.Pop {
				m.VisibleAt = msTime(str(a[5]))
			}
			res.messages = append(res.messages, m)
		}
		if status != "dlq" {
			// Fewer than asked: none left due, unless the call stopped at
			// its budget (it dropped or dead-lettered the ids it looked at).
			if len(res.messages)-before < want && !more || len(res.messages) >= opt.N {
				return res, nil
			}
			continue
		}
		attempt++
		c.remember(q, str(a[3]))
		if len(res.messages) >= opt.N {
			return res, nil
		}
	}
	return res, nil
}

// AckResult is what became of each id or receipt given to Ack.
type AckResult struct {
	Acked   int      // deleted
	Missing []string // not in the queue
	Stale   []string // receipts of an earlier delivery: left alone
}

// Ack deletes messages of queue q (RSMQ deleteMessage), in one round trip
// per 100, each named by a bare id or by a receipt (Message.Receipt); an
// id or receipt given twice counts once. The result says what became of
// each. When some were not acked the error is ErrMessageNotFound if any
// was not in the queue (already acked, popped, or never there), else
// ErrStaleReceipt (a receipt named an earlier delivery); the others are
// acked all the same. Any other error is a failure of the whole call (bad
// input, a missing queue, Redis) with a nil result.
func (c *Client) Ack(ctx context.Context, q string, refs ...string) (*AckResult, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	var given []string
	var args []any
	seen := make(map[string]bool, len(refs))
	for _, s := range refs {
		r, err := parseRef(s)
		if err != nil {
			return nil, err
		}
		if !seen[s] {
			seen[s] = true
			given = append(given, s)
			args = append(args, r.args()...)
		}
	}
	res := &AckResult{}
	// At most maxBatch per script call (3 arguments each), so that acking
	// many ids never holds the server for long.
	for start := 0; start < len(given); start += maxBatch {
		end := min(start+maxBatch, len(given))
		a, err := run(ctx, c.rdb, ackScript, c.keys(q), args[3*start:3*end]...)
		if err != nil {
			return nil, err
		}
		if str(a[0]) == "notfound" {
			return nil, notFound(q)
		}
		for i, v := range a[1:] {
			switch str(v) {
			case "acked":
				res.Acked++
			case "stale":
				res.Stale = append(res.Stale, given[start+i])
			default:
				res.Missing = append(res.Missing, given[start+i])
			}
		}
	}
	left := len(res.Missing) + len(res.Stale)
	switch {
	case len(res.Missing) > 0:
		return res, fmt.Errorf("%d of %d messages: %w", left, left+res.Acked, ErrMessageNotFound)
	case len(res.Stale) > 0:
		return res, fmt.Errorf("%d of %d messages: %w", left, left+res.Acked, ErrStaleReceipt)
	}
	return res, nil
}

// ChangeVisibility sets when a message of queue q, named by its id or a
// receipt, becomes visible: vt from the server's now (whole milliseconds,
// 0 for now), earlier or later than before, as RSMQ's
// changeMessageVisibility, and returns that time. It makes a message due
// again (a retry) as well as it renews a consumer's lease. With a bare id
// it applies to whatever delivery holds the message (RSMQ's semantics);
// with a receipt only while that receipt names the latest delivery, else
// ErrStaleReceipt and nothing changes, so that a consumer whose lease ran
// out learns it instead of taking the message back from its new holder. A
// message that is not in the queue is ErrMessageNotFound. The receive
// count is kept. One round trip; waiting receivers are woken when the
// message becomes due sooner than before.
func (c *Client) ChangeVisibility(ctx context.Context, q, idOrReceipt string, vt time.Duration) (time.Time, error) {
	if err := CheckName(q); err != nil {
		return time.Time{}, err
	}
	r, err := parseRef(idOrReceipt)
	if err != nil {
		return time.Time{}, err
	}
	if err := CheckDuration("vt", vt, time.Millisecond); err != nil {
		return time.Time{}, err
	}
	a, err := run(ctx, c.rdb, retryScript, c.keys(q), r.id, r.rc, r.fr, vt.Milliseconds(), c.channel(q))
	if err != nil {
		return time.Time{}, err
	}
	switch str(a[0]) {
	case "notfound":
		return time.Time{}, notFound(q)
	case "nomessage":
		return time.Time{}, fmt.Errorf("message %s in queue %q: %w", r.id, q, ErrMessageNotFound)
	case "stale":
		return time.Time{}, fmt.Errorf("receipt %s in queue %q: %w", idOrReceipt, q, ErrStaleReceipt)
	}
	return msTime(str(a[1])), nil
}

// PeekOptions choose what Peek returns.
type PeekOptions struct {
	N int // at most this many messages (required)
	// State, if set, keeps only messages in that state: "ready" (due now),
	// "delayed" (not due, never received) or "inflight" (received, not
	// due; read from chatq's index of received messages, so a message only
	// an rsmq client received is missed until the index is rebuilt).
	State string
	// OlderThan, if positive, keeps only messages sent (the time in the
	// id) more than this long before the server's now.
	OlderThan time.Duration
}

// peekExamine is the most entries one filtered peek call examines.
const peekExamine = 1000

// Peek returns up to opt.N messages of queue q by visible-at time, without
// receiving them, optionally filtered by state and age, each with its
// State. Read only, in pages: each call returns at most 50 messages and,
// filtered, examines at most 1,000 entries (a filter that matches few
// messages makes many calls, each bounded). Each page is read at its own
// instant of server time (Message.Now), so a message that moves between
// pages may be missed; none is returned twice.
func (c *Client) Peek(ctx context.Context, q string, opt PeekOptions) ([]Message, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	if opt.N <= 0 {
		return nil, fmt.Errorf("count %d: must be positive: %w", opt.N, errInvalidValue)
	}
	switch opt.State {
	case "", ready, delayed, inFlight:
	default:
		return nil, fmt.Errorf("state %q: want ready, delayed or inflight: %w", opt.State, errInvalidValue)
	}
	if opt.OlderThan < 0 {
		return nil, fmt.Errorf("age %s: must not be negative: %w", opt.OlderThan, errInvalidValue)
	}
	age := ""
	if opt.OlderThan > 0 {
		age = fmt.Sprint(opt.OlderThan.Microseconds())
	}
	filtered := opt.State != "" || age != ""
	var out []Message
	seen := map[string]bool{}
	for offset := 0; len(out) < opt.N; {
		want := min(opt.N-len(out), peekPage)
		examine := want
		if filtered {
			examine = peekExamine
		}
		a, err := run(ctx, c.rdb, peekScript, c.keys(q), offset, want, opt.State, examine, age)
		if err != nil {
			return nil, err
		}
		if str(a[0]) == "notfound" {
			return nil, notFound(q)
		}
		now := msTime(str(a[1]))
		offset += int(num(a[2]))
		for i := 4; i+4 < len(a); i += 5 {
			m := Message{ID: str(a[i]), VisibleAt: msTime(str(a[i+1])), Body: str(a[i+2]), RC: num(a[i+3]), FR: msTime(str(a[i+4])), Now: now}
			if seen[m.ID] {
				continue
			}
			seen[m.ID] = true
			m.Sent = sentAt(m.ID)
			m.State = stateOf(now, m.VisibleAt, m.RC > 0 || !m.FR.IsZero())
			if opt.State == inFlight {
				m.State = inFlight // from the index: received, not due
			}
			out = append(out, m)
		}
		if num(a[3]) == 1 || num(a[2]) == 0 {
			break
		}
	}
	return out, nil
}
