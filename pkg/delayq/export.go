package delayq

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed export.lua
	exportLua    string
	exportScript = script(exportLua)
	//go:embed import.lua
	importLua    string
	importScript = script(importLua)
)

// exportCount is the HSCAN COUNT hint of the first export page, and the
// most: about as many hash fields, so at most as many messages (fewer when
// received messages' :rc and :fr fields share the page). A page of 1,000
// took about 9.5 ms of server time at 1,000,000 messages on a loaded
// 2-core machine (HSCAN itself 2.6 ms), too close to 10 ms; 250 takes a
// quarter of that.
const exportCount = 250

// exportPageBytes is the body bytes an export page aims at: the COUNT hint
// shrinks after a page of big bodies, so that one call never carries
// 1,000 bodies of 64 KiB.
const exportPageBytes = 1 << 20

// Export walks queue q's messages in pages, passes each page of those
// that pass opt's filters (see PeekOptions; all messages when none is
// given) to fn, in no particular order, each message with its State at its
// page's server time Now (and VisibleAt, RC, FR), and returns how many
// messages it passed: at most opt.N when it is positive. It is read only
// and holds at most one page in memory: a page is one script call of at
// most about 250 messages and about 1 MiB of bodies, atomic on its own;
// opt.Grep is matched inside that call, opt.Regexp here.
//
// It walks the queue's attribute hash with HSCAN, so a message present
// for the whole export is passed at least once, whatever receives, retries
// and acks do to the others meanwhile (fn may retry or ack the messages it
// is passed); it is passed twice only when the hash shrank during the walk
// (Redis shrinks a hash that lost about 90% of its fields), and an
// importer that skips identical ids (Import) absorbs that. Messages pushed
// or deleted during the export may or may not be passed.
func (c *Client) Export(ctx context.Context, q string, opt PeekOptions, fn func([]Message) error) (int, error) {
	if err := CheckName(q); err != nil {
		return 0, err
	}
	if opt.N < 0 {
		return 0, fmt.Errorf("count %d: must not be negative: %w", opt.N, errInvalidValue)
	}
	filter, err := opt.filter()
	if err != nil {
		return 0, err
	}
	passed, examined := 0, 0
	cursor, count := "0", exportCount
	for {
		args := append([]any{cursor, count}, filter...)
		a, err := run(ctx, c.rdb, exportScript, c.keys(q)[:2], args...)
		if err != nil {
			return passed, err
		}
		if str(a[0]) == "notfound" || len(a) < 5 {
			return passed, notFound(q)
		}
		cursor = str(a[1])
		now := msTime(str(a[2]))
		seen, bytes := int(num(a[3])), int(num(a[4]))
		examined += seen
		page := make([]Message, 0, (len(a)-5)/6)
		for i := 5; i+5 < len(a); i += 6 {
			m := Message{ID: str(a[i]), VisibleAt: scoreTime(str(a[i+1])), Body: str(a[i+2]), RC: num(a[i+3]), FR: msTime(str(a[i+4])), Now: now}
			m.setDeadLettered(str(a[i+5]))
			if !opt.keeps(&m) {
				continue
			}
			m.settle(now)
			page = append(page, m)
		}
		if opt.N > 0 && passed+len(page) > opt.N {
			page = page[:opt.N-passed]
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return passed, err
			}
			passed += len(page)
		}
		if opt.Progress != nil {
			opt.Progress(examined, passed)
		}
		if cursor == "0" || opt.N > 0 && passed >= opt.N {
			return passed, nil
		}
		// Aim at exportPageBytes read per page: fewer messages after big
		// bodies, back up to exportCount after small ones.
		if seen > 0 {
			per := max(bytes/seen, 1)
			count = min(max(exportPageBytes/per, 1), exportCount)
		}
	}
}

// scoreTime reads a ZSET score (ms, which Redis may print as a float).
func scoreTime(s string) time.Time {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(f))
}

// ImportResult is what became of the messages given to Import. It holds
// counts and at most maxConflictIDs ids, so that its memory stays flat
// whatever the input's size.
type ImportResult struct {
	Imported    int      // messages stored
	Present     int      // messages whose id held the same body already: left alone
	Conflicts   int      // messages whose id held another body: left alone
	ConflictIDs []string // the ids of the first 100 conflicts, in the order read
	// Notified is false when this user may not PUBLISH on the realtime
	// channel (the messages are stored all the same).
	Notified bool
}

// maxConflictIDs is how many conflicting ids an ImportResult lists (its
// count is complete).
const maxConflictIDs = 100

// CheckImport checks messages without any I/O as Import checks each
// message it reads: an id of RSMQ's format (32 characters from
// [A-Za-z0-9:]; no receipt), a VisibleAt, RC not negative, a dead-letter
// record with a queue name (DeadLetteredFrom) or none; with into, the
// attributes of the queue imported into (as Stats read them), a body
// within its maxsize (ErrMessageTooLong), as Import's script checks again.
// It also refuses more than 100 messages and an id twice, which one batch
// of Import never holds.
func CheckImport(msgs []Message, into *Attributes) error {
	if len(msgs) > maxBatch {
		return fmt.Errorf("%d messages: at most %d per import call: %w", len(msgs), maxBatch, errInvalidValue)
	}
	seen := make(map[string]bool, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if err := checkImported(m, into); err != nil {
			return err
		}
		if seen[m.ID] {
			return fmt.Errorf("message id %s given twice: %w", m.ID, errInvalidValue)
		}
		seen[m.ID] = true
	}
	return nil
}

// checkImported checks one message for Import (see CheckImport).
func checkImported(m *Message, into *Attributes) error {
	if err := checkID(m.ID); err != nil {
		return err
	}
	if m.VisibleAt.UnixMilli() < 0 || m.VisibleAt.IsZero() {
		return fmt.Errorf("message %s: due time %d: must be Unix ms, not negative: %w", m.ID, m.VisibleAt.UnixMilli(), errInvalidValue)
	}
	if m.RC < 0 {
		return fmt.Errorf("message %s: receive count %d: must not be negative: %w", m.ID, m.RC, errInvalidValue)
	}
	if !m.FR.IsZero() && m.FR.UnixMilli() < 0 {
		return fmt.Errorf("message %s: first receive %d: must not be negative: %w", m.ID, m.FR.UnixMilli(), errInvalidValue)
	}
	if err := checkDeadLettered(m); err != nil {
		return err
	}
	if into != nil && into.MaxSize >= 0 {
		if n := len16(m.Body); n > into.MaxSize {
			return fmt.Errorf("message %s: %d UTF-16 units, over %s's maxsize %d: %w", m.ID, n, into.Name, into.MaxSize, ErrMessageTooLong)
		}
	}
	return nil
}

// checkDeadLettered checks m's record of a dead-letter move for Import:
// none, or a queue name, a receive count and a time not negative.
func checkDeadLettered(m *Message) error {
	if m.DeadLetteredFrom == "" {
		if m.DeadLetteredRC != 0 || !m.DeadLetteredAt.IsZero() {
			return fmt.Errorf("message %s: a dead-letter receive count or time without the queue it came from: %w", m.ID, errInvalidValue)
		}
		return nil
	}
	if err := CheckName(m.DeadLetteredFrom); err != nil {
		return fmt.Errorf("message %s: dead-lettered from: %w", m.ID, err)
	}
	if m.DeadLetteredRC < 0 || m.DeadLetteredAt.UnixMilli() < 0 {
		return fmt.Errorf("message %s: dead-letter receive count %d or time %d: must not be negative: %w", m.ID, m.DeadLetteredRC, m.DeadLetteredAt.UnixMilli(), errInvalidValue)
	}
	return nil
}

// Import stores the messages msgs yields in queue q under their own ids
// (ID, Body, VisibleAt, RC, FR and the DeadLettered fields of each; the
// other fields are ignored), with their due times, receive counts, first
// receives and records of a dead-letter move, in batches of at most 100
// messages and about 1 MiB of bodies, each batch one atomic script call
// (all of it or none). It holds one batch in memory, so an input of any
// size streams. When the first message comes it reads the queue's Stats
// (one more round trip, read only; no message, no call), and it checks
// each message as it reads it (CheckImport's checks, and the body against
// the queue's maxsize): a message refused stops the import before its
// batch is written. An id that already holds the same body is left alone
// (ImportResult.Present), so importing the same messages again changes
// nothing; an id that holds another body is a conflict, left alone too.
// An id that comes again within a batch ends the batch, so that its second
// copy (an export may repeat a message) finds the first one present.
// totalsent grows by the messages imported; received messages (RC > 0 or
// FR set) go into chatq's index of received messages as well, so stats
// counts them in flight while they are invisible.
//
// When ctx ends, Import stops between batches: a batch sent is waited for,
// so that what it did is known. A message refused, an error msgs yields,
// ctx's end and any failure of a batch's call is a *PushError, returned
// with the result so far: the first Stored messages read are done
// (imported, present or conflicts, as the result counts them), the ones
// from Stored+1 to Total are not written, except that the Uncertain ones
// may be (their batch's reply was lost), and Position is the message Err
// is about (0 for an error of msgs or of a call as a whole). Importing the
// messages from Stored+1 on, or all of them again, resumes it: ids present
// are skipped. A failure of the Stats read, before anything is written,
// is returned as it is.
func (c *Client) Import(ctx context.Context, q string, msgs iter.Seq2[Message, error]) (*ImportResult, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	im := &importer{c: c, q: q, res: &ImportResult{Notified: true}, inBatch: map[string]bool{}}
	if msgs == nil {
		return im.res, nil
	}
	for m, err := range msgs {
		if err != nil {
			return im.res, im.fail(0, err)
		}
		if err := im.add(ctx, m); err != nil {
			return im.res, err
		}
	}
	return im.res, im.flush(ctx)
}

// importer is one Import: the queue's attributes, what is done, and the
// batch read but not yet written.
type importer struct {
	c       *Client
	q       string
	into    *Attributes // the queue's, read when the first message comes
	res     *ImportResult
	done    int // messages done: imported, present or conflicts
	batch   []Message
	bytes   int
	inBatch map[string]bool
}

// add checks message m and adds it to the batch, writing the batch first
// when m does not belong in it.
func (im *importer) add(ctx context.Context, m Message) error {
	if im.into == nil {
		st, err := im.c.Stats(ctx, im.q)
		if err != nil {
			return err
		}
		im.into = &st.Attributes
	}
	if err := checkImported(&m, im.into); err != nil {
		// Nothing of the batch is written: m is counted with it.
		im.batch = append(im.batch, m)
		return im.fail(im.done+len(im.batch), err)
	}
	if im.inBatch[m.ID] || len(im.batch) == maxBatch || len(im.batch) > 0 && im.bytes+len(m.Body) > batchBytes {
		if err := im.flush(ctx); err != nil {
			return err
		}
	}
	im.batch = append(im.batch, m)
	im.inBatch[m.ID] = true
	im.bytes += len(m.Body)
	return nil
}

// fail is the PushError of an import stopped before the batch is written;
// position is the message err is about (from 1), or 0.
func (im *importer) fail(position int, err error) error {
	return &PushError{Queue: im.q, Stored: im.done, Total: im.done + len(im.batch), Position: position, Err: err, op: "import into"}
}

// flush writes the batch in one import.lua call.
func (im *importer) flush(ctx context.Context) error {
	if len(im.batch) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return im.fail(0, err)
	}
	// The call does not end with ctx: a batch sent is waited for (up to
	// the client's read timeout), so that what it did is known.
	r, refused, err := im.c.importBatch(context.WithoutCancel(ctx), im.q, im.batch)
	if err != nil {
		e := im.fail(0, err).(*PushError)
		switch {
		case refused >= 0:
			e.Position = im.done + refused + 1
		case !errors.As(err, new(redis.Error)) && !errors.Is(err, ErrQueueNotFound):
			// Any failure but the server's own error reply (the script
			// checks before it writes) may have stored the batch.
			e.Uncertain = len(im.batch)
		}
		return e
	}
	im.res.Imported += r.Imported
	im.res.Present += r.Present
	im.res.Conflicts += r.Conflicts
	for _, id := range r.ConflictIDs {
		if len(im.res.ConflictIDs) < maxConflictIDs {
			im.res.ConflictIDs = append(im.res.ConflictIDs, id)
		}
	}
	if r.Imported > 0 {
		// A batch that stored nothing published nothing.
		im.res.Notified = im.res.Notified && r.Notified
	}
	im.done += len(im.batch)
	im.batch, im.bytes = im.batch[:0], 0
	clear(im.inBatch)
	return nil
}

// importBatch stores msgs (at most 100, checked) in one atomic import.lua
// call; refused is the index of the message the script refused as over
// maxsize (nothing written), else -1.
func (c *Client) importBatch(ctx context.Context, q string, msgs []Message) (res *ImportResult, refused int, err error) {
	args := make([]any, 0, 1+7*len(msgs))
	args = append(args, c.channel(q))
	for _, m := range msgs {
		rc, fr := "", ""
		if m.RC > 0 {
			rc = strconv.FormatInt(m.RC, 10)
		}
		if !m.FR.IsZero() {
			fr = strconv.FormatInt(m.FR.UnixMilli(), 10)
		}
		args = append(args, m.ID, m.VisibleAt.UnixMilli(), rc, fr, len16(m.Body), m.Body, m.deadLettered())
	}
	a, err := run(ctx, c.rdb, importScript, c.keys(q), args...)
	if err != nil {
		return nil, -1, err
	}
	switch str(a[0]) {
	case "notfound":
		return nil, -1, notFound(q)
	case "toolong":
		i := position(a[1], len(msgs))
		return nil, i, &QueueError{Queue: q, Err: fmt.Errorf("message %s: %d UTF-16 units, maxsize is %s: %w", msgs[i].ID, len16(msgs[i].Body), str(a[2]), ErrMessageTooLong)}
	}
	if len(a) != 2+len(msgs) {
		return nil, -1, fmt.Errorf("unexpected reply of %d values for %d messages", len(a), len(msgs))
	}
	res = &ImportResult{Notified: num(a[1]) == 1}
	for i, v := range a[2:] {
		switch str(v) {
		case "imported":
			res.Imported++
		case "present":
			res.Present++
		default:
			res.Conflicts++
			res.ConflictIDs = append(res.ConflictIDs, msgs[i].ID)
		}
	}
	return res, -1, nil
}
