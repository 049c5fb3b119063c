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
	At    time.Time     // due at this time (rounded up to the millisecond), at most MaxSeconds after the server's now
	Delay time.Duration // due this long after the server's now
	// HasDelay marks Delay as given, so that 0 overrides the queue's delay.
	HasDelay bool
}

// Pushed is the result of a push.
type Pushed struct {
	ID        string
	VisibleAt time.Time // when it becomes due
	Sent      time.Time // server time of the push
	// Notified is false when this user may not PUBLISH on the realtime
	// channel: the message is stored, but consumers waiting with Wait are
	// not woken (they find it when their wait or next due time ends).
	Notified bool
}

// Push adds a message to queue q and returns its id. The body's length in
// UTF-16 units must not exceed the queue's maxsize (ErrMessageTooLong).
// One round trip; the script also publishes on the realtime channel.
func (c *Client) Push(ctx context.Context, q, body string, opt PushOptions) (*Pushed, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	mode, value := "default", int64(0)
	switch {
	case !opt.At.IsZero() && (opt.HasDelay || opt.Delay != 0):
		return nil, fmt.Errorf("give a time or a delay, not both: %w", ErrInvalidValue)
	case !opt.At.IsZero():
		ms := opt.At.UnixMilli()
		if opt.At.After(time.UnixMilli(ms)) {
			ms++ // never due before the time asked for
		}
		if ms < 0 {
			return nil, fmt.Errorf("time %s: before 1970: %w", opt.At, ErrInvalidValue)
		}
		mode, value = "at", ms
	case opt.HasDelay || opt.Delay != 0:
		if err := CheckDuration("delay", opt.Delay); err != nil {
			return nil, err
		}
		mode, value = "delay", opt.Delay.Milliseconds()
	}
	// A body that is not UTF-8 could not be shown in JSON or to a Node
	// consumer without changing it; chat send refuses it too.
	if !utf8.ValidString(body) {
		return nil, fmt.Errorf("message is not valid UTF-8 (send binary data encoded, e.g. base64): %w", ErrInvalidValue)
	}
	n16 := Len16(body)
	a, err := run(ctx, c.rdb, pushScript, c.keys(q), randomID(), mode, value, n16, body, c.Channel(q))
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
			opt.At.UTC().Format(time.RFC3339), MaxSeconds, msTime(str(a[1])).UTC().Format(time.RFC3339), ErrInvalidValue)
	}
	return &Pushed{ID: str(a[1]), VisibleAt: msTime(str(a[2])), Sent: msTime(str(a[3])), Notified: len(a) > 4 && num(a[4]) == 1}, nil
}

// Message is a received message, with RSMQ's fields.
type Message struct {
	ID        string
	Body      string
	RC        int64     // how many times it has been received, this time included
	FR        time.Time // first receive (ms)
	Sent      time.Time // when it was pushed (from the id)
	VisibleAt time.Time // when it becomes due again unless acked (zero with Pop)
	// Receipt names this delivery (see ErrStaleReceipt): Ack, Retry and
	// Extend given it change the message only while no later receive has
	// taken it. Format: "<id>.<rc>.<fr ms>".
	Receipt string
}

// ReceiveOptions control a receive.
type ReceiveOptions struct {
	N  int           // at most this many messages (default 1)
	VT time.Duration // visibility timeout; 0 means the queue's vt
	// HasVT marks VT as given, so that 0 overrides the queue's vt.
	HasVT bool
	Pop   bool          // delete on receive instead of hiding
	Wait  time.Duration // when none is due, wait up to this long
}

// Received is the result of a receive.
type Received struct {
	Messages []Message
	// Moved counts messages moved to the dead-letter queue by this receive.
	Moved int
	// DeadLetterMissing is true when a message the dead-letter policy would
	// have moved was delivered instead, because the dead-letter queue does
	// not exist (deleted since the policy was set): nothing is lost, the
	// policy is off until that queue is created again.
	DeadLetterMissing bool
	// Now is the server time of the claim; NextVisible the earliest due time
	// of what is left when fewer than N messages were claimed (zero when the
	// queue is empty, and when all N were claimed: then it is not read).
	Now         time.Time
	NextVisible time.Time
	exactNow    time.Time // Now to the microsecond
	sentAt      time.Time // local clock when the claim that took them was sent
}

func (o *ReceiveOptions) check() error {
	if o.N == 0 {
		o.N = 1
	}
	if o.N < 0 {
		return fmt.Errorf("count %d: must be positive: %w", o.N, ErrInvalidValue)
	}
	if o.HasVT || o.VT != 0 {
		if err := CheckDuration("vt", o.VT); err != nil {
			return err
		}
	}
	if o.Wait < 0 {
		return fmt.Errorf("wait %s: must not be negative: %w", o.Wait, ErrInvalidValue)
	}
	return nil
}

// Receive claims up to opt.N due messages of queue q in atomic script calls
// of at most 100 messages (one call for N ≤ 100):
// each is hidden for the visibility timeout with its receive count
// incremented, or deleted with Pop. With Wait and nothing due it sleeps
// until the next message is due or a push arrives, up to Wait. An empty
// result is not an error.
func (c *Client) Receive(ctx context.Context, q string, opt ReceiveOptions) (*Received, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	if err := opt.check(); err != nil {
		return nil, err
	}
	if opt.Wait > 0 {
		return c.receiveWait(ctx, q, opt)
	}
	return c.claimPrompt(ctx, q, opt)
}

// claim runs the receive script once per 100 messages, and once more if a
// dead-letter move needs keys the client did not know.
func (c *Client) claim(ctx context.Context, q string, opt ReceiveOptions) (*Received, error) {
	res := &Received{}
	vt := ""
	if opt.HasVT || opt.VT != 0 {
		vt = fmt.Sprint(opt.VT.Milliseconds())
	}
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
		want := min(opt.N-len(res.Messages), maxBatch)
		before := len(res.Messages)
		a, err := run(ctx, c.rdb, receiveScript, keys, want, vt, pop, dead, c.Channel(dead))
		if err != nil {
			return nil, err
		}
		status := str(a[0])
		if status == "notfound" {
			return nil, notFound(q)
		}
		res.Now = msTime(str(a[1]))
		res.exactNow = res.Now.Add(time.Duration(num(a[6])%1000) * time.Microsecond)
		res.NextVisible = msTime(str(a[2]))
		res.Moved += int(num(a[4]))
		if status == "nodlq" {
			res.DeadLetterMissing = true
		}
		more := str(a[7]) == "1"
		for i := 8; i+3 < len(a); i += 4 {
			m := Message{ID: str(a[i]), Body: str(a[i+1]), RC: num(a[i+2]), FR: msTime(str(a[i+3]))}
			m.Sent = SentAt(m.ID)
			m.Receipt = receipt(m.ID, m.RC, m.FR)
			if res.sentAt.IsZero() {
				res.sentAt = sent
			}
			if !opt.Pop {
				m.VisibleAt = msTime(str(a[5]))
			}
			res.Messages = append(res.Messages, m)
		}
		if status != "dlq" {
			// Fewer than asked: none left due, unless the call stopped at
			// its budget (it dropped or dead-lettered the ids it looked at).
			if len(res.Messages)-before < want && !more || len(res.Messages) >= opt.N {
				return res, nil
			}
			continue
		}
		attempt++
		c.remember(q, str(a[3]))
		if len(res.Messages) >= opt.N {
			return res, nil
		}
	}
	return res, nil
}

// Ack deletes messages of queue q (RSMQ deleteMessage), in one round trip
// per 100.
// Each is named by a bare id or by a receipt (Message.Receipt). It returns
// the ids and receipts that were not acked, with ErrMessageNotFound if any
// was not in the queue (already acked, popped, or never there), else
// ErrStaleReceipt if a receipt named an earlier delivery. AckEach tells
// them apart.
func (c *Client) Ack(ctx context.Context, q string, refs ...string) ([]string, error) {
	r, err := c.AckEach(ctx, q, refs...)
	if err != nil {
		return nil, err
	}
	left := append(r.Missing, r.Stale...)
	switch {
	case len(r.Missing) > 0:
		return left, fmt.Errorf("%d of %d messages: %w", len(left), len(left)+r.Acked, ErrMessageNotFound)
	case len(r.Stale) > 0:
		return left, fmt.Errorf("%d of %d messages: %w", len(left), len(left)+r.Acked, ErrStaleReceipt)
	}
	return nil, nil
}

// AckResult is what became of each id or receipt given to AckEach.
type AckResult struct {
	Acked   int      // deleted
	Missing []string // not in the queue
	Stale   []string // receipts of an earlier delivery: left alone
}

// AckEach is Ack reporting each id or receipt's outcome. Its error is only
// for failures of the whole call (bad input, missing queue, Redis errors).
// An id or receipt given twice counts once.
func (c *Client) AckEach(ctx context.Context, q string, refs ...string) (*AckResult, error) {
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
	if len(given) == 0 {
		return res, nil
	}
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
	return res, nil
}

// Retry makes a message of queue q, named by its id or a receipt, due again
// after delay (0: now), and returns when it becomes due. It is RSMQ's
// changeMessageVisibility; see ChangeVisibility.
func (c *Client) Retry(ctx context.Context, q, idOrReceipt string, delay time.Duration) (time.Time, error) {
	return c.changeVisibility(ctx, q, idOrReceipt, "delay", delay)
}

// ChangeVisibility sets when a message of queue q, named by its id or a
// receipt, becomes visible: vt from the server's now, earlier or later than
// before, as RSMQ's changeMessageVisibility. With a bare id it applies to
// whatever delivery holds the message (RSMQ's semantics); with a receipt only
// while that receipt names the latest delivery, else ErrStaleReceipt and
// nothing changes. A message that is not in the queue is ErrMessageNotFound.
// The receive count is kept. One round trip; waiting receivers are woken
// when the message becomes due sooner than before.
func (c *Client) ChangeVisibility(ctx context.Context, q, idOrReceipt string, vt time.Duration) (time.Time, error) {
	return c.changeVisibility(ctx, q, idOrReceipt, "vt", vt)
}

// Extend renews the lease of the delivery named by receipt: the message
// stays invisible for vt from the server's now. It is ChangeVisibility that
// insists on a receipt, so that a consumer whose lease ran out (the message
// was received again) learns it, with ErrStaleReceipt, instead of taking the
// message back from its new holder. Work calls it for running handlers.
func (c *Client) Extend(ctx context.Context, q, receipt string, vt time.Duration) (time.Time, error) {
	if !IsReceipt(receipt) {
		if err := CheckID(receipt); err != nil {
			return time.Time{}, err
		}
		return time.Time{}, fmt.Errorf("extend %s: want a receipt, not a bare id: %w", receipt, ErrInvalidValue)
	}
	return c.changeVisibility(ctx, q, receipt, "vt", vt)
}

func (c *Client) changeVisibility(ctx context.Context, q, s, what string, d time.Duration) (time.Time, error) {
	if err := CheckName(q); err != nil {
		return time.Time{}, err
	}
	r, err := parseRef(s)
	if err != nil {
		return time.Time{}, err
	}
	if err := CheckDuration(what, d); err != nil {
		return time.Time{}, err
	}
	a, err := run(ctx, c.rdb, retryScript, c.keys(q), r.id, r.rc, r.fr, d.Milliseconds(), c.Channel(q))
	if err != nil {
		return time.Time{}, err
	}
	switch str(a[0]) {
	case "notfound":
		return time.Time{}, notFound(q)
	case "nomessage":
		return time.Time{}, fmt.Errorf("message %s in queue %q: %w", r.id, q, ErrMessageNotFound)
	case "stale":
		return time.Time{}, fmt.Errorf("receipt %s in queue %q: %w", s, q, ErrStaleReceipt)
	}
	return msTime(str(a[1])), nil
}

// State is where a message stands.
type State string

const (
	Ready    State = "ready"
	Delayed  State = "delayed"
	InFlight State = "inflight"
)

// Peeked is a message seen without receiving it.
type Peeked struct {
	Message
	State State
}

// Peek returns the first n messages of queue q by visible-at time, without
// receiving them. Read only; one round trip per 50 messages (each page is
// read at its own instant, so a message that moves between pages may be
// seen twice or not at all). It is PeekWith without filters.
func (c *Client) Peek(ctx context.Context, q string, n int) ([]Peeked, error) {
	return c.PeekWith(ctx, q, PeekOptions{N: n})
}

// PeekOptions choose what PeekWith returns.
type PeekOptions struct {
	N int // at most this many messages (required)
	// State, if set, keeps only messages in that state: Ready (due now),
	// Delayed (not due, never received) or InFlight (received, not due;
	// read from chatq's index of received messages, so a message only an
	// rsmq client received is missed until the index is rebuilt).
	State State
	// OlderThan, if positive, keeps only messages sent (the time in the
	// id) more than this long before the server's now.
	OlderThan time.Duration
}

// peekExamine is the most entries one filtered peek call examines.
const peekExamine = 1000

// PeekWith returns up to opt.N messages of queue q by visible-at time,
// without receiving them, filtered by state and age. Read only, in pages:
// each call returns at most 50 messages and examines at most 1,000 entries
// (a filter that matches few messages makes many calls, each bounded).
// Each page is read at its own instant of server time, so a message that
// moves between pages may be missed; none is returned twice.
func (c *Client) PeekWith(ctx context.Context, q string, opt PeekOptions) ([]Peeked, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	if opt.N <= 0 {
		return nil, fmt.Errorf("count %d: must be positive: %w", opt.N, ErrInvalidValue)
	}
	switch opt.State {
	case "", Ready, Delayed, InFlight:
	default:
		return nil, fmt.Errorf("state %q: want ready, delayed or inflight: %w", opt.State, ErrInvalidValue)
	}
	if opt.OlderThan < 0 {
		return nil, fmt.Errorf("age %s: must not be negative: %w", opt.OlderThan, ErrInvalidValue)
	}
	age := ""
	if opt.OlderThan > 0 {
		age = fmt.Sprint(opt.OlderThan.Microseconds())
	}
	filtered := opt.State != "" || age != ""
	var out []Peeked
	seen := map[string]bool{}
	for offset := 0; len(out) < opt.N; {
		want := min(opt.N-len(out), peekPage)
		examine := want
		if filtered {
			examine = peekExamine
		}
		a, err := run(ctx, c.rdb, peekScript, c.keys(q), offset, want, string(opt.State), examine, age)
		if err != nil {
			return nil, err
		}
		if str(a[0]) == "notfound" {
			return nil, notFound(q)
		}
		now := msTime(str(a[1]))
		offset += int(num(a[2]))
		for i := 4; i+4 < len(a); i += 5 {
			p := Peeked{Message: Message{ID: str(a[i]), VisibleAt: msTime(str(a[i+1])), Body: str(a[i+2]), RC: num(a[i+3]), FR: msTime(str(a[i+4]))}}
			if seen[p.ID] {
				continue
			}
			seen[p.ID] = true
			p.Sent = SentAt(p.ID)
			p.State = stateOf(now, p.VisibleAt, p.RC > 0 || !p.FR.IsZero())
			if opt.State == InFlight {
				p.State = InFlight // from the index: received, not due
			}
			out = append(out, p)
		}
		if num(a[3]) == 1 || num(a[2]) == 0 {
			break
		}
	}
	return out, nil
}
