package sidekiq

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/pkg/queues"
)

// payload is the part of a job's JSON that chatq reads. Times stay raw:
// Sidekiq 6 and 7 write float seconds, 8 integer milliseconds.
type payload struct {
	Class          string          `json:"class"`
	Wrapped        json.RawMessage `json:"wrapped"`
	Queue          string          `json:"queue"`
	JID            string          `json:"jid"`
	Retry          json.RawMessage `json:"retry"`
	RetryCount     *int64          `json:"retry_count"`
	ErrorClass     string          `json:"error_class"`
	ErrorMessage   string          `json:"error_message"`
	ErrorBacktrace json.RawMessage `json:"error_backtrace"`
	CreatedAt      json.RawMessage `json:"created_at"`
	EnqueuedAt     json.RawMessage `json:"enqueued_at"`
	FailedAt       json.RawMessage `json:"failed_at"`
	RetriedAt      json.RawMessage `json:"retried_at"`
	Tags           json.RawMessage `json:"tags"`
}

// parse decodes a job's JSON; ok is false for an entry that is not a
// Sidekiq job (no jid).
func parse(raw string) (payload, bool) {
	var p payload
	if json.Unmarshal([]byte(raw), &p) != nil || p.JID == "" {
		return payload{}, false
	}
	return p, true
}

// stamp reads a Sidekiq timestamp: a JSON float is seconds (6.x, 7.x), an
// integer milliseconds (8.x; Sidekiq 8's own reader tells them apart the
// same way), or seconds when too small to be milliseconds (run_at).
func stamp(raw json.RawMessage) (t time.Time, millis bool) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return time.Time{}, false
	}
	if !strings.ContainsAny(s, ".eE") {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, false
		}
		if n > 1e11 {
			return time.UnixMilli(n), true
		}
		return time.Unix(n, 0), false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}, false
	}
	return secondsTime(f), false
}

func secondsTime(f float64) time.Time {
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3)
}

// millisLayout reports whether p is in Sidekiq 8's format: its created_at
// (or enqueued_at) an integer of milliseconds.
func (p payload) millisLayout() bool {
	raw := p.CreatedAt
	if len(raw) == 0 {
		raw = p.EnqueuedAt
	}
	_, ms := stamp(raw)
	return ms
}

// toJob is the job that raw (a payload p) shows, in state.
func toJob(raw string, p payload, state, kindState string) queues.Job {
	j := queues.Job{ID: p.JID, State: state, KindState: kindState, Name: p.Class, Data: raw,
		Extra: map[string]any{"queue": p.Queue}}
	j.Created, _ = stamp(p.CreatedAt)
	if p.RetryCount != nil {
		// retry_count is 0 after the first failure: attempts so far.
		j.Attempts = *p.RetryCount + 1
		j.Extra["retry_count"] = *p.RetryCount
	}
	if p.ErrorClass != "" || p.ErrorMessage != "" {
		j.Error = strings.TrimPrefix(p.ErrorClass+": "+p.ErrorMessage, ": ")
		j.Extra["error_class"] = p.ErrorClass
		j.Extra["error_message"] = p.ErrorMessage
	}
	j.Stack = firstFrame(p.ErrorBacktrace)
	for name, raw := range map[string]json.RawMessage{"enqueued_at": p.EnqueuedAt, "failed_at": p.FailedAt, "retried_at": p.RetriedAt} {
		if t, _ := stamp(raw); !t.IsZero() {
			j.Extra[name] = t.UTC()
		}
	}
	for name, raw := range map[string]json.RawMessage{"wrapped": p.Wrapped, "retry": p.Retry, "tags": p.Tags} {
		var v any
		if len(raw) > 0 && json.Unmarshal(raw, &v) == nil && v != nil {
			j.Extra[name] = v
		}
	}
	return j
}

// firstFrame is the first line of a backtrace Sidekiq kept (the job's
// backtrace option): base64 of zlib of a JSON array, or an array (old).
func firstFrame(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var lines []string
	if json.Unmarshal(raw, &lines) != nil {
		var b64 string
		if json.Unmarshal(raw, &b64) != nil {
			return ""
		}
		z, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(b64, "\n", ""))
		if err != nil {
			return ""
		}
		r, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			return ""
		}
		text, err := io.ReadAll(io.LimitReader(r, 1<<20))
		if err != nil || json.Unmarshal(text, &lines) != nil {
			return ""
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

// member is one top-level member of a JSON object, its key and value as
// the bytes they were written with.
type member struct{ key, value string }

// members splits a JSON object into its members, keeping their bytes.
func members(raw string) ([]member, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []member
	for dec.More() {
		start := dec.InputOffset()
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		key := strings.TrimLeft(raw[start:dec.InputOffset()], " \t\r\n,")
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, string(v)})
	}
	return out, nil
}

// requeued is the JSON Sidekiq's own SortedEntry#retry (retried true) or
// #add_to_queue pushes for the job raw: Client.push's normalize_item and
// atomic_push give it the default options it lacks ("retry" first, as
// Ruby's merge orders them), a created_at if it has none and enqueued_at
// now; #retry takes one off retry_count so that a manual retry does not
// count against the job's retries. Every other byte is kept.
func requeued(raw string, retried bool, now time.Time) (string, error) {
	ms, err := members(raw)
	if err != nil {
		return "", err
	}
	at := strconv.FormatFloat(float64(now.Unix())+float64(now.Nanosecond())/1e9, 'f', -1, 64)
	if !strings.Contains(at, ".") {
		at += ".0" // Ruby's Float#to_s always has a point
	}
	find := func(key string) int {
		for i, m := range ms {
			var k string
			if json.Unmarshal([]byte(m.key), &k) == nil && k == key {
				return i
			}
		}
		return -1
	}
	if find("retry") < 0 {
		ms = append([]member{{`"retry"`, "true"}}, ms...)
	}
	if find("created_at") < 0 {
		ms = append(ms, member{`"created_at"`, at})
	}
	if i := find("retry_count"); retried && i >= 0 {
		n, err := strconv.ParseInt(ms[i].value, 10, 64)
		if err != nil {
			return "", fmt.Errorf("retry_count %s: %w", ms[i].value, err)
		}
		ms[i].value = strconv.FormatInt(n-1, 10)
	}
	if i := find("enqueued_at"); i >= 0 {
		ms[i].value = at
	} else {
		ms = append(ms, member{`"enqueued_at"`, at})
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.key)
		b.WriteByte(':')
		b.WriteString(m.value)
	}
	b.WriteByte('}')
	return b.String(), nil
}
