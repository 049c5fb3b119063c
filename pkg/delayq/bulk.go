package delayq

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/redis/go-redis/v9"
)

// PushManyOptions are how PushMany runs its batches.
type PushManyOptions struct {
	// Due says when the messages become due: none for the queue's delay,
	// one for all, or one per body. The first one's Token, when set, makes
	// every batch safe to repeat, as PushOptions.Token does a Push: batch
	// k records its answer under the token and k, so a repeat of a batch
	// (by Do), or of the whole PushMany, returns the first answer and
	// stores nothing more.
	Due []PushOptions
	// Do, if set, runs each batch's script call, and may run it again
	// after a lost reply when Due carries a Token; it returns call's last
	// error, or its own. Without it each call runs once.
	Do func(ctx context.Context, call func(context.Context) error) error
	// Progress, if set, is called with each batch's results once the
	// batch is stored.
	Progress func(batch []Pushed)
}

// PushError is returned by a PushMany or an Import that stopped: the
// messages before Stored are done, in order (a PushMany's are in the queue,
// their results returned with the error; an Import's are imported, present
// or conflicts, as the ImportResult returned with it counts), and a
// PushMany or Import of the rest resumes it without duplicates, except
// that the next Uncertain messages may also be stored (their batch was
// sent and its reply lost: the server may have applied it). An Import's
// Total is the messages it read, up to the end of the batch that failed
// (none of Stored+1 to Total is written, the Uncertain ones aside). When
// Position is set, Err is about that message (from 1): over the queue's
// maxsize, a time too far ahead, a body that is not UTF-8, a bad due time
// or id.
type PushError struct {
	Queue     string
	Stored    int // messages stored for certain (whole batches, in order)
	Uncertain int // messages after those that may or may not be stored
	Total     int // messages PushMany was given; messages Import read
	Position  int // the message Err is about, from 1; 0 for none
	Err       error
	op        string // "import into" for an Import; "" for "push to"
}

func (e *PushError) Error() string {
	var msg string
	if e.op == "" {
		msg = fmt.Sprintf("push to queue %s: stored %d of %d messages", e.Queue, e.Stored, e.Total)
	} else {
		msg = fmt.Sprintf("%s queue %s: stopped after %d of %d messages read", e.op, e.Queue, e.Stored, e.Total)
	}
	if e.Uncertain > 0 {
		msg += fmt.Sprintf("; the next %d may also be stored (the reply was lost)", e.Uncertain)
	}
	if e.Position > 0 {
		msg += fmt.Sprintf(": message %d", e.Position)
	}
	return msg + ": " + e.Err.Error()
}

func (e *PushError) Unwrap() error { return e.Err }

// batchBytes ends a PushMany batch early once its bodies reach it (a
// single bigger body goes alone), so that one call moves about 1 MiB.
const batchBytes = 1 << 20

// PushMany pushes messages to queue q, in order, in batches of at most
// 100 messages and 1 MiB of bodies, each batch one atomic script call (all
// of it stored or none). Every body (UTF-8) and due time is checked before
// the first call; a push of more than one batch (or of none) first reads
// the queue's Stats (one more round trip, read only) and checks every body against
// its maxsize and every At against the server's clock, so that a message
// refused stores none of the others. The ids of a batch share the server
// time of its call and sort in the order given, so messages due at the
// same time are received in that order. totalsent grows by the messages
// stored, and one PUBLISH on the realtime channel announces each batch
// (Pushed.Notified). One round trip per batch.
//
// When ctx ends, PushMany stops between batches: a batch sent is waited
// for, so that what was stored is known. A message refused, and any
// failure once the input is checked, is a *PushError saying how many
// messages are stored (their results are returned with it) and which
// message it is about, if one; errors of the input as a whole (the queue's
// name, the number of due times, a token) come before any call.
func (c *Client) PushMany(ctx context.Context, q string, bodies []string, opt PushManyOptions) ([]Pushed, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	due := opt.Due
	if len(due) > 1 && len(due) != len(bodies) {
		return nil, fmt.Errorf("%d due times for %d messages: give none, one, or one per message: %w", len(due), len(bodies), errInvalidValue)
	}
	token, firstTry := "", false
	if len(due) > 0 {
		token, firstTry = due[0].Token, due[0].FirstTry
	}
	if err := checkToken(token); err != nil {
		return nil, err
	}
	b := &bulk{c: c, q: q, bodies: bodies, due: due, token: token, firstTry: firstTry, out: make([]Pushed, 0, len(bodies))}
	if err := b.checkInput(); err != nil {
		return nil, err
	}
	ends := batchEnds(bodies)
	// An empty push still reads Stats: a queue that is not there is an
	// error (a mistyped name), not an empty success.
	if len(ends) != 1 {
		if err := b.check(ctx); err != nil {
			return nil, err
		}
	}
	do := opt.Do
	if do == nil {
		do = func(ctx context.Context, call func(context.Context) error) error { return call(ctx) }
	}
	start := 0
	for k, end := range ends {
		if err := ctx.Err(); err != nil {
			return b.out, b.fail(0, err)
		}
		var ps []Pushed
		// The call does not end with ctx: a batch sent is waited for (up
		// to the client's read timeout), so that what it did is known.
		tries := 0
		err := do(ctx, func(context.Context) (err error) {
			tries++
			ps, err = b.batch(context.WithoutCancel(ctx), k+1, start, end, b.firstTry && tries == 1)
			return err
		})
		if err != nil {
			return b.out, b.failBatch(end-start, err)
		}
		b.out = append(b.out, ps...)
		if opt.Progress != nil {
			opt.Progress(ps)
		}
		start = end
	}
	return b.out, nil
}

// bulk is one PushMany: its input and what it stored so far.
type bulk struct {
	c      *Client
	q      string
	bodies []string
	due    []PushOptions
	token  string
	// firstTry is Due[0].FirstTry: each batch's first call looks nothing
	// up; Do's repeats of it do.
	firstTry bool
	out      []Pushed
}

// dueOf is the due time of message i.
func (b *bulk) dueOf(i int) PushOptions {
	if len(b.due) == 0 {
		return PushOptions{}
	}
	return b.due[min(i, len(b.due)-1)]
}

// fail is a PushError after what is stored so far; position is the
// message err is about (from 1), or 0.
func (b *bulk) fail(position int, err error) error {
	return &PushError{Queue: b.q, Stored: len(b.out), Total: len(b.bodies), Position: position, Err: err}
}

// failBatch is the PushError of a batch of n messages whose call failed:
// a refusal names its message; any failure but the server's own error
// reply (the scripts check before they write) may have stored the batch.
func (b *bulk) failBatch(n int, err error) error {
	var pe *PushError
	if errors.As(err, &pe) {
		return pe
	}
	e := b.fail(0, err).(*PushError)
	if !errors.As(err, new(redis.Error)) && !errors.Is(err, ErrQueueNotFound) {
		e.Uncertain = n
	}
	return e
}

// checkInput checks every body and due time before the first call.
func (b *bulk) checkInput() error {
	for i, body := range b.bodies {
		if _, _, err := b.dueOf(i).script(); err != nil {
			return b.fail(i+1, err)
		}
		if !utf8.ValidString(body) {
			return b.fail(i+1, fmt.Errorf("not valid UTF-8 (send binary data encoded, e.g. base64): %w", errInvalidValue))
		}
	}
	return nil
}

// check refuses, before the first batch, a body over the queue's maxsize
// and a time further ahead of the server's clock than RSMQ's largest
// delay, which would otherwise stop the push after earlier batches.
func (b *bulk) check(ctx context.Context) error {
	st, err := b.c.Stats(ctx, b.q)
	if err != nil {
		return err
	}
	for i, body := range b.bodies {
		if n := len16(body); st.MaxSize >= 0 && n > st.MaxSize {
			return b.fail(i+1, tooLong(n, int64(st.MaxSize)))
		}
		if at := b.dueOf(i).At; !at.IsZero() && at.After(st.Now.Add(maxSeconds*time.Second)) {
			return b.fail(i+1, tooLate(at, fmt.Sprint(st.Now.UnixMilli())))
		}
	}
	return nil
}

// tooLong is the error of a body of n UTF-16 units over maxsize.
func tooLong(n int, maxsize int64) error {
	return fmt.Errorf("%w (%d > maxsize %d)", ErrMessageTooLong, n, maxsize)
}

// batchEnds returns where each batch of bodies ends: after maxBatch
// messages, or once its bodies reach batchBytes.
func batchEnds(bodies []string) []int {
	var ends []int
	for start := 0; start < len(bodies); {
		end, size := start, 0
		for end < len(bodies) && end-start < maxBatch && (end == start || size+len(bodies[end]) <= batchBytes) {
			size += len(bodies[end])
			end++
		}
		ends = append(ends, end)
		start = end
	}
	return ends
}

// batch pushes messages start to end, the call-th batch, in one
// pushmany.lua call; firstTry when it was never sent before.
func (b *bulk) batch(ctx context.Context, call, start, end int, firstTry bool) ([]Pushed, error) {
	n := end - start
	a := make([]any, 0, 2+5*n)
	a = append(a, b.c.channel(b.q))
	for i := start; i < end; i++ {
		mode, value, _ := b.dueOf(i).script() // checked (checkInput)
		// Two decimal digits of position (maxBatch is 100) sort the ids of
		// one call, which share their time part, in the order given.
		a = append(a, fmt.Sprintf("%02d", i-start)+randomID()[2:], mode, value, len16(b.bodies[i]), b.bodies[i])
	}
	keys := b.c.keys(b.q)[:2]
	var r []any
	var err error
	if b.token != "" {
		a = append(a, luascript.RecordField(b.token, call), tokenLifetime.Milliseconds())
		r, err = b.c.runRecorded(ctx, pushManyScript, keys, firstTry, a...)
	} else {
		r, err = run(ctx, b.c.rdb, pushManyScript, keys, a...)
	}
	if err != nil {
		return nil, err
	}
	switch str(r[0]) {
	case "notfound":
		return nil, notFound(b.q)
	case "toolong":
		i := position(r[1], n)
		return nil, b.fail(start+i+1, tooLong(len16(b.bodies[start+i]), num(r[2])))
	case "toolate":
		i := position(r[1], n)
		return nil, b.fail(start+i+1, tooLate(b.dueOf(start+i).At, str(r[2])))
	}
	if len(r) != 3+2*n {
		return nil, fmt.Errorf("unexpected reply of %d values for %d messages", len(r), n)
	}
	sent, notified := msTime(str(r[1])), num(r[2]) == 1
	out := make([]Pushed, n)
	for i := range out {
		out[i] = Pushed{ID: str(r[3+2*i]), VisibleAt: msTime(str(r[4+2*i])), Sent: sent, Notified: notified, Channel: b.c.channel(b.q)}
	}
	return out, nil
}
