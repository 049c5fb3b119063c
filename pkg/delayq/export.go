package delayq

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"
)

var (
	//go:embed export.lua
	exportLua    string
	exportScript = queueScript(exportLua)
	//go:embed import.lua
	importLua    string
	importScript = queueScript(importLua)
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

// Export walks queue q's messages in pages, passes each page to fn, in no
// particular order, each message with its State at its page's server time
// Now (and VisibleAt, RC, FR), and returns how many messages it passed. It
// is read only and holds at most one page in memory: a page is one script
// call of at most about 250 messages and about 1 MiB of bodies, atomic on
// its own.
//
// It walks the queue's attribute hash with HSCAN, so a message present
// for the whole export is passed at least once, whatever receives, retries
// and acks do to the others meanwhile; it is passed twice only when the
// hash shrank during the walk (Redis shrinks a hash that lost about 90% of
// its fields), and an importer that skips identical ids (Import) absorbs
// that. Messages pushed or deleted during the export may or may not be
// passed.
func (c *Client) Export(ctx context.Context, q string, fn func([]Message) error) (int, error) {
	if err := CheckName(q); err != nil {
		return 0, err
	}
	passed := 0
	cursor, count := "0", exportCount
	for {
		a, err := run(ctx, c.rdb, exportScript, c.keys(q)[:2], cursor, count)
		if err != nil {
			return passed, err
		}
		if str(a[0]) == "notfound" || len(a) < 3 {
			return passed, notFound(q)
		}
		cursor = str(a[1])
		now := msTime(str(a[2]))
		page := make([]Message, 0, (len(a)-3)/5)
		bytes := 0
		for i := 3; i+4 < len(a); i += 5 {
			m := Message{ID: str(a[i]), VisibleAt: scoreTime(str(a[i+1])), Body: str(a[i+2]), RC: num(a[i+3]), FR: msTime(str(a[i+4])), Now: now}
			m.Sent = sentAt(m.ID)
			m.State = stateOf(now, m.VisibleAt, m.RC > 0 || !m.FR.IsZero())
			bytes += len(m.Body)
			page = append(page, m)
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return passed, err
			}
			passed += len(page)
		}
		if cursor == "0" {
			return passed, nil
		}
		// Aim at exportPageBytes per page: fewer messages after big bodies,
		// back up to exportCount after small ones.
		if len(page) > 0 {
			per := max(bytes/len(page), 1)
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

// ImportResult is what became of each message given to Import.
type ImportResult struct {
	Imported  int
	Present   []string // ids that held the same body already: left alone
	Conflicts []string // ids that held another body: left alone
	// Notified is false when this user may not PUBLISH on the realtime
	// channel (the messages are stored all the same).
	Notified bool
}

// CheckImport checks messages for Import without any I/O, as Import does
// first: at most 100, each with an id of RSMQ's format (32 characters from
// [A-Za-z0-9:]; no receipt), a VisibleAt, RC not negative, no id twice.
// Bodies are not checked against maxsize (the queue's maxsize is the
// server's to tell).
func CheckImport(msgs []Message) error {
	if len(msgs) > maxBatch {
		return fmt.Errorf("%d messages: at most %d per import call: %w", len(msgs), maxBatch, errInvalidValue)
	}
	seen := make(map[string]bool, len(msgs))
	for _, m := range msgs {
		if err := checkID(m.ID); err != nil {
			return err
		}
		if seen[m.ID] {
			return fmt.Errorf("message id %s given twice: %w", m.ID, errInvalidValue)
		}
		seen[m.ID] = true
		if m.VisibleAt.UnixMilli() < 0 || m.VisibleAt.IsZero() {
			return fmt.Errorf("message %s: due time %d: must be Unix ms, not negative: %w", m.ID, m.VisibleAt.UnixMilli(), errInvalidValue)
		}
		if m.RC < 0 {
			return fmt.Errorf("message %s: receive count %d: must not be negative: %w", m.ID, m.RC, errInvalidValue)
		}
		if !m.FR.IsZero() && m.FR.UnixMilli() < 0 {
			return fmt.Errorf("message %s: first receive %d: must not be negative: %w", m.ID, m.FR.UnixMilli(), errInvalidValue)
		}
	}
	return nil
}

// Import stores up to 100 messages in queue q under their own ids (ID,
// Body, VisibleAt, RC and FR of each; the other fields are ignored), with
// their due times, receive counts and first receives, in one
// atomic script call (all or nothing). An id that already holds the same
// body is left alone (ImportResult.Present), so importing the same
// messages again changes nothing; an id that holds another body is a
// conflict, left alone too. A body over the queue's maxsize fails the
// whole call with ErrMessageTooLong before anything is written. totalsent
// grows by the messages imported; received messages (RC > 0 or FR set) go
// into chatq's index of received messages as well, so stats counts them
// in flight while they are invisible.
func (c *Client) Import(ctx context.Context, q string, msgs []Message) (*ImportResult, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	if err := CheckImport(msgs); err != nil {
		return nil, err
	}
	res := &ImportResult{Notified: true}
	if len(msgs) == 0 {
		return res, nil
	}
	args := make([]any, 0, 1+6*len(msgs))
	args = append(args, c.channel(q))
	for _, m := range msgs {
		rc, fr := "", ""
		if m.RC > 0 {
			rc = strconv.FormatInt(m.RC, 10)
		}
		if !m.FR.IsZero() {
			fr = strconv.FormatInt(m.FR.UnixMilli(), 10)
		}
		args = append(args, m.ID, m.VisibleAt.UnixMilli(), rc, fr, len16(m.Body), m.Body)
	}
	a, err := run(ctx, c.rdb, importScript, c.keys(q), args...)
	if err != nil {
		return nil, err
	}
	switch str(a[0]) {
	case "notfound":
		return nil, notFound(q)
	case "toolong":
		i := int(num(a[1])) - 1
		if i < 0 || i >= len(msgs) {
			i = 0
		}
		return nil, fmt.Errorf("queue %q: message %s: %d UTF-16 units, maxsize is %s: %w", q, msgs[i].ID, len16(msgs[i].Body), str(a[2]), ErrMessageTooLong)
	}
	res.Notified = num(a[1]) == 1
	for i, v := range a[2:] {
		if i >= len(msgs) {
			break
		}
		switch str(v) {
		case "imported":
			res.Imported++
		case "present":
			res.Present = append(res.Present, msgs[i].ID)
		default:
			res.Conflicts = append(res.Conflicts, msgs[i].ID)
		}
	}
	return res, nil
}
