package delayq

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrStaleReceipt is returned when a receipt names a delivery that is no
// longer the message's latest: the message was received again since (its
// visibility timeout had ended), so the caller no longer holds it. Nothing
// was changed.
var ErrStaleReceipt = errors.New("stale receipt: the message was received again since")

// A receipt names one delivery of a message: its id, its receive count and
// its first-receive time (Unix ms) at that delivery, joined by dots:
//
//	<id>.<rc>.<fr>    e.g. lq5u0vt1w8AbCdEfGhIjKlMnOpQrStUv.2.1795268834364
//
// Every receive (chatq's or rsmq's) increments rc, so a receipt stops
// matching the moment the message is received again; fr tells apart a
// message that came back with a fresh count (redriven from a dead-letter
// queue, say). The format is stable and documented, not a secret: anyone who
// can read the queue can form one.
func receipt(id string, rc int64, fr time.Time) string {
	return id + "." + strconv.FormatInt(rc, 10) + "." + strconv.FormatInt(fr.UnixMilli(), 10)
}

// ref is a message named by a bare id (rc == "") or by a receipt.
type ref struct {
	id, rc, fr string
}

func (r ref) args() []any { return []any{r.id, r.rc, r.fr} }

func parseRef(s string) (ref, error) {
	id, rest, ok := strings.Cut(s, ".")
	if !ok {
		return ref{id: s}, checkID(s)
	}
	rc, fr, ok := strings.Cut(rest, ".")
	bad := func(why string) (ref, error) {
		return ref{}, fmt.Errorf("receipt %q: %s (want ID.RC.FR, as poll prints it): %w", s, why, errInvalidValue)
	}
	if !ok {
		return bad("want three parts")
	}
	if err := checkID(id); err != nil {
		return bad("bad message id")
	}
	if n, err := strconv.ParseInt(rc, 10, 64); err != nil || n < 1 || rc != strconv.FormatInt(n, 10) {
		return bad("bad receive count")
	}
	if n, err := strconv.ParseInt(fr, 10, 64); err != nil || n < 0 || fr != strconv.FormatInt(n, 10) {
		return bad("bad first-receive time")
	}
	return ref{id: id, rc: rc, fr: fr}, nil
}
