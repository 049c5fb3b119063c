package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// jsonlLine is an object line of push --jsonl: the body and an optional
// due time; other fields (peek's and export's id, rc, state…) are ignored.
type jsonlLine struct {
	Message       *string         `json:"message"`
	MessageBase64 *string         `json:"message_base64"`
	Delay         json.RawMessage `json:"delay"`
	At            json.RawMessage `json:"at"`
}

// readJSONL reads --jsonl's messages, one JSON value per line of stdin
// (blank lines skipped), checking each line (JSON, UTF-8, delay and at).
func readJSONL(ctx context.Context, opts *pushOptions) (*bulkInput, error) {
	opts.IO.NoteStdin("messages, one JSON value per line,")
	r := newLineReader(iostreams.Interruptible(ctx, opts.IO.In))
	in := &bulkInput{lines: []int{}}
	for {
		b, ok := r.next()
		if !ok {
			break
		}
		it, err := parseJSONLItem(b, opts.due)
		if err != nil {
			return nil, cmdutil.WithHint(cmdutil.UsageErrorf("line %d: %v: nothing pushed", r.line, err),
				`each line is a JSON string ("a body") or an object {"message":"a body","delay":"90s"} or {"message":…,"at":"2026-05-01T09:00:00Z"}; jq -c turns JSON into such lines`)
		}
		in.bodies, in.due, in.lines = append(in.bodies, it.body), append(in.due, it.po), append(in.lines, r.line)
	}
	if err := r.err(); err != nil {
		return nil, stdinErr(ctx, opts.IO, "messages", err)
	}
	return in, nil
}

// maxSeconds is RSMQ's largest delay, in seconds (docs/queue.md).
const maxSeconds = 9999999

// pushItem is one message of --jsonl: its body and due time.
type pushItem struct {
	body string
	po   delayq.PushOptions
}

// parseJSONLItem reads one line: a JSON string, or an object with message
// and optionally delay or at (which replace the flags' due time).
func parseJSONLItem(b []byte, po delayq.PushOptions) (pushItem, error) {
	it := pushItem{po: po}
	t := bytes.TrimSpace(b)
	switch {
	case len(t) > 0 && t[0] == '"':
		var s string
		if err := decodeLine(b, &s); err != nil {
			return it, err
		}
		if changedBody(b, s) {
			return it, fmt.Errorf("a \\u escape of a lone surrogate, which UTF-8 cannot hold")
		}
		it.body = s
		return it, nil
	case len(t) == 0 || t[0] != '{':
		return it, fmt.Errorf("want a JSON string or an object with \"message\"")
	}
	var l jsonlLine
	if err := decodeLine(b, &l); err != nil {
		return it, err
	}
	switch {
	case l.Message == nil && l.MessageBase64 != nil:
		return it, fmt.Errorf("message_base64 without message: push takes UTF-8 bodies only (chatq queue import restores other bytes)")
	case l.MessageBase64 != nil:
		return it, fmt.Errorf("the body is not UTF-8 (message_base64): push refuses it; chatq queue import restores it byte for byte")
	case l.Message == nil:
		return it, fmt.Errorf("an object without \"message\"")
	case changedBody(b, *l.Message):
		return it, fmt.Errorf("message has a \\u escape of a lone surrogate, which UTF-8 cannot hold")
	}
	it.body = *l.Message
	hasDelay, hasAt := present(l.Delay), present(l.At)
	switch {
	case hasDelay && hasAt:
		return it, fmt.Errorf("give delay or at, not both")
	case hasDelay:
		d, err := jsonDelay(l.Delay)
		if err != nil {
			return it, err
		}
		if err := delayq.CheckDuration("delay", d, time.Millisecond); err != nil {
			return it, err
		}
		it.po = delayq.PushOptions{Delay: orZero(d)}
	case hasAt:
		s := string(l.At)
		if l.At[0] == '"' {
			if err := json.Unmarshal(l.At, &s); err != nil {
				return it, fmt.Errorf("at: %v", err)
			}
		}
		at, err := parseAt(s)
		if err != nil {
			return it, fmt.Errorf("at %s: want RFC 3339 or Unix seconds", l.At)
		}
		it.po = delayq.PushOptions{At: at}
	}
	return it, nil
}

// present reports whether a field was given and is not null.
func present(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }

// jsonDelay reads delay: a Go duration string ("90s", "1m30s") as --delay
// takes it, or a number of seconds (decimals to the millisecond).
func jsonDelay(v json.RawMessage) (time.Duration, error) {
	if v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, fmt.Errorf("delay: %v", err)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("delay %q: want a duration such as \"90s\" or a number of seconds", s)
		}
		return d, nil
	}
	s := string(v)
	if strings.ContainsAny(s, "eE") {
		return 0, fmt.Errorf("delay %s: want a plain number of seconds", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > maxSeconds {
		return 0, fmt.Errorf("delay %s: want seconds from 0 to %d, or a duration such as \"90s\"", s, maxSeconds)
	}
	d := time.Duration(f * float64(time.Second))
	if d%time.Millisecond != 0 {
		// Floating point: 1.001 s is 1.000999999 s; round to the ms asked for.
		d = d.Round(time.Millisecond)
		if whole, frac, _ := strings.Cut(s, "."); len(frac) > 3 || whole == "" {
			return 0, fmt.Errorf("delay %s: at most millisecond precision (3 decimals)", s)
		}
	}
	return d, nil
}
