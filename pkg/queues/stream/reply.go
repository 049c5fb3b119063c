package stream

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// entry is a stream entry: its id and its fields, name and value
// alternating, in the order the entry holds them.
type entry struct {
	ID     string
	Fields []string
}

// Replies of scripts and of XRANGE are read from go-redis's generic
// values (RESP2 and RESP3 alike: arrays of strings and integers).

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case []byte:
		return string(x)
	}
	return ""
}

func num(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func list(v any) []any {
	x, _ := v.([]any)
	return x
}

func strs(v any) []string {
	l := list(v)
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = str(x)
	}
	return out
}

// entries reads an XRANGE reply.
func entries(v any) []entry {
	var out []entry
	for _, e := range list(v) {
		l := list(e)
		if len(l) < 2 {
			continue
		}
		out = append(out, entry{ID: str(l[0]), Fields: strs(l[1])})
	}
	return out
}

// status is a script reply's first element, the rest its values.
func status(v any) (string, []any, error) {
	l := list(v)
	if len(l) == 0 {
		return "", nil, fmt.Errorf("stream script: unexpected reply %v", v)
	}
	return str(l[0]), l[1:], nil
}

// dataJSON is fields as a JSON object, in their order, every value a
// string. A repeated name stays repeated, as the entry holds it.
func dataJSON(fields []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(fields); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(fields[i])
		v, _ := json.Marshal(fields[i+1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// binary reports whether a field is not UTF-8: its JSON shows U+FFFD in
// place of the bytes that are not.
func binary(fields []string) bool {
	for _, f := range fields {
		if !utf8.ValidString(f) {
			return true
		}
	}
	return false
}

// matches reports whether grep is in the id or in one of the fields'
// names or values, byte for byte ("" matches everything).
func matches(grep, id string, fields []string) bool {
	if grep == "" || strings.Contains(id, grep) {
		return true
	}
	for _, f := range fields {
		if strings.Contains(f, grep) {
			return true
		}
	}
	return false
}

// idTime is the time in an entry id's milliseconds part.
func idTime(id string) time.Time {
	ms, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// serverTime is TIME's reply, seconds and microseconds.
func serverTime(sec, usec any) time.Time {
	return time.Unix(num(sec), num(usec)*1000)
}
