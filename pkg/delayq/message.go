package delayq

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/internal/base/names"
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
	// Token, when set, makes the push safe to repeat: a client-chosen
	// random string of 16 to 64 characters of A-Z a-z 0-9 _ - (as
	// crypto/rand.Text returns) recorded with the push's answer, in the
	// queue's slot, for 10 minutes. A Push with a token already
	// recorded returns the first answer and stores nothing, so a caller
	// whose reply was lost sends the same call again with the same token.
	// PushMany reads the first due's, for the whole batch.
	Token string
	// FirstTry, with Token, says that the token was never sent before
	// (it was made for this call; PushMany reads the
	// first due's), so that nothing can be recorded under
	// it: the call then looks nothing up, and is sent once (go-redis does
	// not send it again after a lost reply, whatever its MaxRetries),
	// which saves the server about half of what the token costs
	// (docs/reliability.md). Leave it false on a repeat: a repeat marked
	// FirstTry is applied again.
	FirstTry bool
}

// tokenLifetime is how long the record of a push or a receive with a token
// lasts: long enough to cover a command's --timeout, a server restart and
// the repeats in between, short enough that a busy queue's records stay
// few (a push's about 155 bytes, a receive's its messages plus 200 to 330
// bytes; see docs/reliability.md). A record's hash lives this long from
// its first write (record.lua), so a record at least 10 minutes.
const tokenLifetime = luascript.RecordLifetime

// checkToken checks a token given in options ("" is none).
func checkToken(token string) error {
	if token != "" && !names.IsToken(token) {
		return fmt.Errorf("token %q: want 16 to 64 characters of A-Z a-z 0-9 _ -: %w", token, errInvalidValue)
	}
	return nil
}

// runRecorded runs s, a script that takes a token, with keys followed by
// the keys of the records of a call made now beside the queue's key
// queue (<ns>:<q>, hash-tagged on a Cluster, so in its slot): the HASHes
// <ns>:<q>:T:<minute> of this minute of the client's clock and the 10
// before it, or this minute's alone on a first try
// (luascript.Script.RunRecorded), whose field is the token
// (luascript.RecordField). Built for each script call: a repeat, or the
// next call of a waiting receive, made in a later minute looks back from
// that minute.
func (c *Client) runRecorded(ctx context.Context, s *luascript.Script, keys []string, firstTry bool, args ...any) ([]any, error) {
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	return reply(s.RunRecorded(ctx, c.rdb, keys, keys[0]+":T:", now(), firstTry, args...))
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
	mode, value, err := opt.script()
	if err != nil {
		return nil, err
	}
	// A body that is not UTF-8 could not be shown in JSON or to a Node
	// consumer without changing it; chat send refuses it too.
	if !utf8.ValidString(body) {
		return nil, fmt.Errorf("message is not valid UTF-8 (send binary data encoded, e.g. base64): %w", errInvalidValue)
	}
	n16 := len16(body)
	keys, args := c.keys(q)[:2], []any{randomID(), mode, value, n16, body, c.channel(q)}
	if err := checkToken(opt.Token); err != nil {
		return nil, err
	}
	var a []any
	if opt.Token != "" {
		a, err = c.runRecorded(ctx, pushScript, keys, opt.FirstTry, append(args, tokenLifetime.Milliseconds(), opt.Token)...)
	} else {
		a, err = run(ctx, c.rdb, pushScript, keys, args...)
	}
	if err != nil {
		return nil, err
	}
	switch str(a[0]) {
	case "notfound":
		return nil, notFound(q)
	case "toolong":
		return nil, &QueueError{Queue: q, Err: fmt.Errorf("%d UTF-16 units, maxsize is %s: %w", n16, str(a[1]), ErrMessageTooLong)}
	case "toolate":
		return nil, tooLate(opt.At, str(a[1]))
	}
	return &Pushed{ID: str(a[1]), VisibleAt: msTime(str(a[2])), Sent: msTime(str(a[3])), Notified: len(a) > 4 && num(a[4]) == 1, Channel: c.channel(q)}, nil
}

// script returns how push.lua and pushmany.lua read the due time: mode
// "at" with Unix ms, "delay" with ms, or "default" (the queue's delay).
func (o PushOptions) script() (mode string, value int64, err error) {
	delay, hasDelay, err := checkOption("delay", o.Delay, time.Millisecond)
	switch {
	case !o.At.IsZero() && hasDelay:
		return "", 0, fmt.Errorf("give a time or a delay, not both: %w", errInvalidValue)
	case err != nil:
		return "", 0, err
	case !o.At.IsZero():
		ms := o.At.UnixMilli()
		if o.At.After(time.UnixMilli(ms)) {
			ms++ // never due before the time asked for
		}
		if ms < 0 {
			return "", 0, fmt.Errorf("time %s: before 1970: %w", o.At, errInvalidValue)
		}
		return "at", ms, nil
	case hasDelay:
		return "delay", delay.Milliseconds(), nil
	}
	return "default", 0, nil
}

// tooLate is the error of a push whose time at is further ahead of the
// server's time now (Unix ms) than RSMQ's largest delay.
func tooLate(at time.Time, now string) error {
	return fmt.Errorf("at %s: more than %ds (RSMQ's largest delay, about 115 days) after the server's time %s: %w",
		at.UTC().Format(time.RFC3339), maxSeconds, msTime(now).UTC().Format(time.RFC3339), errInvalidValue)
}

// position is the 0-based index of the message a script reply names by
// its 1-based position v, kept within n messages.
func position(v any, n int) int {
	i := int(num(v)) - 1
	if i < 0 || i >= n {
		return 0
	}
	return i
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
	// ErrStaleReceipt): Ack, Retry and ChangeVisibility given it change the
	// message only while no later receive has taken it. Format:
	// "<id>.<rc>.<fr ms>". Peek, Get and Export give the receipt of the
	// latest delivery of a message that was received.
	Receipt string
	// State is where a message read by Peek, Get or Export stood at server
	// time Now: "ready" (due), "delayed" (not due, never received) or
	// "inflight" (received, not due again yet). For a received message Now
	// is the server time of the receive.
	State string
	Now   time.Time
	// DeadLetteredFrom is, for a message that a dead-letter move brought
	// into this queue, the queue it came from, with its receive count there
	// (DeadLetteredRC) and the server time of the move (DeadLetteredAt).
	// The move records them in the queue's hash, in a field <id>:dl that
	// rsmq never reads; Redrive goes back by them, Import writes them.
	// Empty for other messages, and for messages dead-lettered before chatq
	// recorded it.
	DeadLetteredFrom string
	DeadLetteredRC   int64
	DeadLetteredAt   time.Time
}

// setDeadLettered reads the record of a dead-letter move, "<queue> <rc>
// <ms>" (receive.lua writes it), into m; a malformed one (another
// writer's) is no record.
func (m *Message) setDeadLettered(rec string) {
	f := strings.Fields(rec)
	if len(f) != 3 || CheckName(f[0]) != nil {
		return
	}
	rc, err1 := strconv.ParseInt(f[1], 10, 64)
	ms, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || rc < 0 || ms < 0 {
		return
	}
	m.DeadLetteredFrom, m.DeadLetteredRC, m.DeadLetteredAt = f[0], rc, time.UnixMilli(ms)
}

// deadLettered is m's record of a dead-letter move as receive.lua writes
// it, "" for none.
func (m *Message) deadLettered() string {
	if m.DeadLetteredFrom == "" {
		return ""
	}
	return m.DeadLetteredFrom + " " + strconv.FormatInt(m.DeadLetteredRC, 10) + " " + strconv.FormatInt(m.DeadLetteredAt.UnixMilli(), 10)
}

// settle sets m's Sent (from its id), State at now, and Receipt when it
// was received.
func (m *Message) settle(now time.Time) {
	m.Sent = sentAt(m.ID)
	m.State = stateOf(now, m.VisibleAt, m.RC > 0 || !m.FR.IsZero())
	if m.RC > 0 && !m.FR.IsZero() {
		m.Receipt = receipt(m.ID, m.RC, m.FR)
	}
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
	// Token, when set, makes the receive safe to repeat, which matters
	// with Pop (a popped message whose reply was lost exists nowhere
	// else): a client-chosen random string of 16 to 64 characters of
	// A-Z a-z 0-9 _ - (as crypto/rand.Text returns) under which each
	// script call that claims messages records its answer, in the queue's
	// slot, for 10 minutes. A Receive with the same token returns the
	// same messages and claims no others, so a caller whose reply was
	// lost sends the same call again with the same token. Calls that
	// claimed nothing record nothing: a waiting Receive with a token
	// claims on until something is due.
	Token string
	// FirstTry, with Token, says that the token was never sent before
	// (it was made for this call), so that nothing can be recorded under
	// it: the call then looks nothing up, and is sent once (go-redis does
	// not send it again after a lost reply, whatever its MaxRetries),
	// which saves the server about half of what the token costs
	// (docs/reliability.md). Leave it false on a repeat: a repeat marked
	// FirstTry is applied again.
	FirstTry bool
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
	if err := checkToken(o.Token); err != nil {
		return "", err
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
	for attempt, call := 0, 1; attempt < 3; call++ {
		keys := c.keys(q)
		dead := c.deadLetter(q)
		if dead != "" {
			keys = append(keys, c.keys(dead)[:2]...) // its ZSET and HASH: receive.lua moves messages there
		}
		sent := time.Now()
		want := min(opt.N-len(res.messages), maxBatch)
		before := len(res.messages)
		args := []any{want, vt, pop, dead, c.channel(dead), q}
		var a []any
		var err error
		if opt.Token != "" {
			// One record per script call: a repeat makes the same calls
			// in the same order, each answered by its record.
			args = append(args, tokenLifetime.Milliseconds(), luascript.RecordField(opt.Token, call))
			a, err = c.runRecorded(ctx, receiveScript, keys, opt.FirstTry, args...)
		} else {
			a, err = run(ctx, c.rdb, receiveScript, keys, args...)
		}
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

// AckResult is what became of each id or receipt given to Ack or Retry.
type AckResult struct {
	Acked   int      // deleted (Ack)
	Retried int      // made visible at the time asked for (Retry)
	Missing []string // not in the queue
	Stale   []string // receipts of an earlier delivery: left alone
	// VisibleAt is when the messages Retry retried become visible (the
	// server's now plus the delay, at its last call).
	VisibleAt time.Time
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
	return c.AckWith(ctx, q, AckOptions{}, refs...)
}

// AckOptions control AckWith.
type AckOptions struct {
	// Retry makes AckWith do what Retry does (the messages visible
	// again Delay from the server's now) instead of deleting them.
	Retry bool
	// Delay is Retry's delay; ignored without Retry.
	Delay time.Duration
	// Token, when set, makes the call safe to repeat: a client-chosen
	// random string of 16 to 64 characters of A-Z a-z 0-9 _ - (as
	// crypto/rand.Text returns) under which each script call (of up to
	// 100 messages) records its answer, in the queue's slot, for 10
	// minutes. A call with the same token and the same refs returns the
	// first answer and changes nothing, so a caller whose reply was lost
	// sends the same call again with the same token, and learns what the
	// first acked (or retried) instead of "not in the queue".
	Token string
	// FirstTry, with Token, says that the token was never sent before
	// (it was made for this call), so that nothing can be recorded under
	// it: the call then looks nothing up, and is sent once (go-redis does
	// not send it again after a lost reply, whatever its MaxRetries),
	// which saves the server about half of what the token costs
	// (docs/reliability.md). Leave it false on a repeat: a repeat marked
	// FirstTry is applied again.
	FirstTry bool
}

// AckWith is Ack with options (or Retry, with opt.Retry): with a token, a
// repeat of the same call returns the first call's result (a retry's
// visible-at time included) and changes nothing more.
func (c *Client) AckWith(ctx context.Context, q string, opt AckOptions, refs ...string) (*AckResult, error) {
	if opt.Retry {
		return c.retry(ctx, q, opt.Delay, opt, refs...)
	}
	if err := checkToken(opt.Token); err != nil {
		return nil, err
	}
	res := &AckResult{}
	err := c.batches(ctx, q, refs, func(call int, args []any) ([]any, error) {
		if opt.Token != "" {
			args = append([]any{tokenLifetime.Milliseconds(), luascript.RecordField(opt.Token, call)}, args...)
			return c.runRecorded(ctx, ackScript, c.keys(q), opt.FirstTry, args...)
		}
		return run(ctx, c.rdb, ackScript, c.keys(q), args...)
	}, func(status string) bool {
		if status == "acked" {
			res.Acked++
		}
		return status == "acked"
	}, res)
	if err != nil && !errors.Is(err, ErrMessageNotFound) && !errors.Is(err, ErrStaleReceipt) {
		return nil, err
	}
	return res, err
}

// Retry makes messages of queue q, each named by a bare id or by a receipt
// (Message.Receipt), visible again delay from the server's now (whole
// milliseconds; 0 for now), as ChangeVisibility does for one, in one round
// trip per 100; an id or receipt given twice counts once. A receipt changes
// its message only while it names the latest delivery, so a receipt read
// by Peek (or Receive) and retried after someone received the message
// again changes nothing. The receive count is kept. The result and the
// error say what became of each, as Ack's do, except that an error after
// some calls (a lost connection) comes with what the calls before it did.
func (c *Client) Retry(ctx context.Context, q string, delay time.Duration, refs ...string) (*AckResult, error) {
	return c.retry(ctx, q, delay, AckOptions{}, refs...)
}

// retry is Retry with a token (AckWith with opt.Retry).
func (c *Client) retry(ctx context.Context, q string, delay time.Duration, opt AckOptions, refs ...string) (*AckResult, error) {
	if err := CheckDuration("delay", delay, time.Millisecond); err != nil {
		return nil, err
	}
	if err := checkToken(opt.Token); err != nil {
		return nil, err
	}
	res := &AckResult{}
	err := c.batches(ctx, q, refs, func(call int, args []any) ([]any, error) {
		head := []any{delay.Milliseconds(), c.channel(q)}
		var a []any
		var err error
		if opt.Token != "" {
			head = append(head, tokenLifetime.Milliseconds(), luascript.RecordField(opt.Token, call))
			a, err = c.runRecorded(ctx, retryScript, c.keys(q), opt.FirstTry, append(head, args...)...)
		} else {
			a, err = run(ctx, c.rdb, retryScript, c.keys(q), append(head, args...)...)
		}
		if err != nil || str(a[0]) != "ok" {
			return a, err
		}
		res.VisibleAt = msTime(str(a[1]))
		return append(a[:1:1], a[2:]...), nil // the statuses after "ok"
	}, func(status string) bool {
		if status == "retried" {
			res.Retried++
		}
		return status == "retried"
	}, res)
	if err != nil && res.Retried+len(res.Missing)+len(res.Stale) == 0 {
		return nil, err // nothing was done
	}
	return res, err
}

// batches runs call for refs in batches of maxBatch (each as triples id,
// rc, fr; a ref given twice once), after checking q and every ref; call
// gets the batch's number (1 for the first: a record's field, see
// luascript.RecordField)
// and returns {"ok", status, ...} or {"notfound"}. done counts a status that
// acted and reports whether it did; the others are "missing" or "stale"
// and go into res. When some did not act the error is ErrMessageNotFound
// if any was missing, else ErrStaleReceipt. Any other error is a failure
// of the whole call (bad input, a missing queue, Redis).
func (c *Client) batches(ctx context.Context, q string, refs []string, call func(n int, args []any) ([]any, error), done func(status string) bool, res *AckResult) error {
	if err := CheckName(q); err != nil {
		return err
	}
	var given []string
	var args []any
	seen := make(map[string]bool, len(refs))
	for _, s := range refs {
		r, err := parseRef(s)
		if err != nil {
			return err
		}
		if !seen[s] {
			seen[s] = true
			given = append(given, s)
			args = append(args, r.args()...)
		}
	}
	acted := 0
	// At most maxBatch per script call (3 arguments each), so that acting
	// on many ids never holds the server for long.
	for start, n := 0, 1; start < len(given); start, n = start+maxBatch, n+1 {
		end := min(start+maxBatch, len(given))
		a, err := call(n, slices.Clip(args[3*start:3*end]))
		if err != nil {
			return err
		}
		if str(a[0]) == "notfound" {
			return notFound(q)
		}
		for i, v := range a[1:] {
			switch status := str(v); {
			case done(status):
				acted++
			case status == "stale":
				res.Stale = append(res.Stale, given[start+i])
			default:
				res.Missing = append(res.Missing, given[start+i])
			}
		}
	}
	left := len(res.Missing) + len(res.Stale)
	switch {
	case len(res.Missing) > 0:
		return fmt.Errorf("%d of %d messages: %w", left, left+acted, ErrMessageNotFound)
	case len(res.Stale) > 0:
		return fmt.Errorf("%d of %d messages: %w", left, left+acted, ErrStaleReceipt)
	}
	return nil
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
	a, err := run(ctx, c.rdb, retryScript, c.keys(q), vt.Milliseconds(), c.channel(q), r.id, r.rc, r.fr)
	if err != nil {
		return time.Time{}, err
	}
	switch str(a[0]) {
	case "notfound":
		return time.Time{}, notFound(q)
	}
	switch str(a[2]) {
	case "missing":
		return time.Time{}, fmt.Errorf("message %s in queue %q: %w", r.id, q, ErrMessageNotFound)
	case "stale":
		return time.Time{}, fmt.Errorf("receipt %s in queue %q: %w", idOrReceipt, q, ErrStaleReceipt)
	}
	return msTime(str(a[1])), nil
}

// PeekOptions choose what Peek returns and what Export passes: all the
// filters given must hold.
type PeekOptions struct {
	// N is the most messages returned (required by Peek); for Export the
	// most passed, 0 for all.
	N int
	// State, if set, keeps only messages in that state: "ready" (due now),
	// "delayed" (not due, never received) or "inflight" (received, not
	// due; Peek reads them from chatq's index of received messages, so a
	// message only an rsmq client received is missed until the index is
	// rebuilt).
	State string
	// OlderThan, if positive, keeps only messages sent (the time in the
	// id) more than this long before the server's now.
	OlderThan time.Duration
	// Grep, if set, keeps only messages whose body or id contains it, byte
	// for byte. The server matches it (inside the script, no pattern
	// syntax), so only matches cross the network.
	Grep string
	// Regexp, if set, keeps only messages whose body or id it matches. It
	// is matched here, over pages of the messages that pass the other
	// filters (Redis's Lua has no regular expressions), so those cross the
	// network.
	Regexp *regexp.Regexp
	// MinReceives, if positive, keeps only messages received at least this
	// many times.
	MinReceives int
	// InFlightFor, if positive, keeps only messages in flight (it implies
	// State "inflight") whose first receive was more than this long before
	// the server's now. RSMQ records when a message was first received
	// (FR), not when last: for a message received once this is how long it
	// has been in flight; one received again counts from its first receive.
	InFlightFor time.Duration
	// Progress, if set, is called after each server call with the messages
	// examined so far and how many of them were kept.
	Progress func(examined, kept int)
}

// filter checks o and returns the filter arguments of peek.lua and
// export.lua (queue.lua's filter).
func (o *PeekOptions) filter() ([]any, error) {
	switch o.State {
	case "", ready, delayed, inFlight:
	default:
		return nil, fmt.Errorf("state %q: want ready, delayed or inflight: %w", o.State, errInvalidValue)
	}
	switch {
	case o.OlderThan < 0:
		return nil, fmt.Errorf("age %s: must not be negative: %w", o.OlderThan, errInvalidValue)
	case o.MinReceives < 0:
		return nil, fmt.Errorf("receive count %d: must not be negative: %w", o.MinReceives, errInvalidValue)
	case o.InFlightFor < 0:
		return nil, fmt.Errorf("time in flight %s: must not be negative: %w", o.InFlightFor, errInvalidValue)
	case o.InFlightFor > 0 && o.State != "" && o.State != inFlight:
		return nil, fmt.Errorf("a time in flight selects messages in flight, not %s ones: %w", o.State, errInvalidValue)
	case !utf8.ValidString(o.Grep):
		return nil, fmt.Errorf("search text is not valid UTF-8: %w", errInvalidValue)
	}
	state, age, minrc, held := o.State, "", "", ""
	if o.OlderThan > 0 {
		age = fmt.Sprint(o.OlderThan.Microseconds())
	}
	if o.MinReceives > 0 {
		minrc = fmt.Sprint(o.MinReceives)
	}
	if o.InFlightFor > 0 {
		state, held = inFlight, fmt.Sprint(o.InFlightFor.Milliseconds())
	}
	return []any{state, age, o.Grep, minrc, held}, nil
}

// keeps reports whether m matches o.Regexp (or there is none).
func (o *PeekOptions) keeps(m *Message) bool {
	return o.Regexp == nil || o.Regexp.MatchString(m.Body) || o.Regexp.MatchString(m.ID)
}

// peekExamine is the most entries one filtered peek call examines;
// peekExamineCounted when the filter reads each entry's receive count and
// first receive (a receive count, a time in flight, the delayed or
// in-flight state), which costs the script two more calls per entry: at
// 1e5 messages 1,000 such entries took 24 ms of server time a call
// (e2e/bounded), 250 stay well within its 10 ms.
const (
	peekExamine        = 1000
	peekExamineCounted = 250
)

// pageBytes is the most body bytes one peek or export call aims to read
// (to return, or to search): the call stops after the message that reaches
// it, so that pages of 64 KiB bodies stay small.
const pageBytes = 1 << 20

// Peek returns up to opt.N messages of queue q by visible-at time, without
// receiving them, optionally filtered (see PeekOptions), each with its
// State. Read only, in pages: each call returns at most 50 messages (250
// candidates for Regexp) and about 1 MiB of bodies and, filtered, examines
// at most 1,000 entries (250 when it reads receive counts: MinReceives,
// InFlightFor, the delayed or in-flight state; a filter that matches few
// messages makes many calls, each bounded). Each page is read at its own instant of server
// time (Message.Now), so a message that moves between pages may be
// missed; none is returned twice.
func (c *Client) Peek(ctx context.Context, q string, opt PeekOptions) ([]Message, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	if opt.N <= 0 {
		return nil, fmt.Errorf("count %d: must be positive: %w", opt.N, errInvalidValue)
	}
	filter, err := opt.filter()
	if err != nil {
		return nil, err
	}
	state := str(filter[0])
	filtered := state != "" || opt.OlderThan > 0 || opt.Grep != "" || opt.MinReceives > 0 || opt.Regexp != nil
	var out []Message
	seen := map[string]bool{}
	examined, kept := 0, 0
	for offset := 0; len(out) < opt.N; {
		want := min(opt.N-len(out), peekPage)
		if opt.Regexp != nil {
			want = searchPage // candidates, matched here
		}
		examine := want
		switch {
		case state == inFlight || state == delayed || opt.MinReceives > 0:
			examine = peekExamineCounted
		case filtered:
			examine = peekExamine
		}
		args := append([]any{offset, want, examine, pageBytes}, filter...)
		a, err := run(ctx, c.rdb, peekScript, c.keys(q), args...)
		if err != nil {
			return nil, err
		}
		if str(a[0]) == "notfound" {
			return nil, notFound(q)
		}
		now := msTime(str(a[1]))
		offset += int(num(a[2]))
		examined += int(num(a[2]))
		for i := 4; i+5 < len(a) && len(out) < opt.N; i += 6 {
			m := Message{ID: str(a[i]), VisibleAt: msTime(str(a[i+1])), Body: str(a[i+2]), RC: num(a[i+3]), FR: msTime(str(a[i+4])), Now: now}
			m.setDeadLettered(str(a[i+5]))
			if seen[m.ID] || !opt.keeps(&m) {
				continue
			}
			seen[m.ID] = true
			m.settle(now)
			if state == inFlight {
				m.State = inFlight // from the index: received, not due
			}
			out = append(out, m)
			kept++
		}
		if opt.Progress != nil {
			opt.Progress(examined, kept)
		}
		if num(a[3]) == 1 || num(a[2]) == 0 {
			break
		}
	}
	return out, nil
}
