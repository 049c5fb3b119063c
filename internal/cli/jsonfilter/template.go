package jsonfilter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// Number is a JSON number that is not a whole number fitting int64, as a
// template sees it: it prints as the shortest decimal that reads back the
// same (1795266822.123, never 1.795266822123e+09) and compares with lt, gt
// and eq like any float. Whole numbers are int64.
type Number float64

func (n Number) String() string { return strconv.FormatFloat(float64(n), 'f', -1, 64) }

// templateFuncs are the functions a --template may call besides
// text/template's, after the GitHub CLI's where cheap: join, pluck,
// tablerow, tablerender, timefmt, timeago, truncate. tablerow and
// tablerender add to and print tb (nil when only the names are wanted).
func templateFuncs(tb *table) map[string]func(args []any) (any, error) {
	return map[string]func(args []any) (any, error){
		"join": func(a []any) (any, error) {
			sep, list, err := stringAndList(a)
			if err != nil {
				return nil, err
			}
			parts := make([]string, len(list))
			for i, x := range list {
				parts[i] = printable(x)
			}
			return strings.Join(parts, sep), nil
		},
		"pluck": func(a []any) (any, error) {
			field, list, err := stringAndList(a)
			if err != nil {
				return nil, err
			}
			var out []any
			for _, x := range list {
				if m, ok := x.(map[string]any); ok {
					out = append(out, m[field])
				}
			}
			return slices.Clip(out), nil
		},
		"timefmt": func(a []any) (any, error) {
			layout, ok := first(a, 2).(string)
			if !ok {
				return nil, errors.New("want a layout string and a time: timefmt \"2006-01-02 15:04\" .sent")
			}
			t, err := toTime(a[1])
			if err != nil {
				return nil, err
			}
			return t.Format(layout), nil
		},
		"timeago": func(a []any) (any, error) {
			if len(a) != 1 {
				return nil, errors.New("want one time: timeago .sent")
			}
			return timeago(a[0], time.Now())
		},
		"truncate": func(a []any) (any, error) {
			n, ok := first(a, 2).(int64)
			if !ok {
				return nil, errors.New("want a length and a text: truncate 20 .message")
			}
			return truncate(int(n), printable(a[1])), nil
		},
		"tablerow": func(a []any) (any, error) {
			tb.row(a)
			return "", nil
		},
		"tablerender": func(a []any) (any, error) {
			tb.render()
			return "", nil
		},
	}
}

// first returns a[0] when a has n values, else nil.
func first(a []any, n int) any {
	if len(a) != n {
		return nil
	}
	return a[0]
}

func stringAndList(a []any) (string, []any, error) {
	if len(a) != 2 {
		return "", nil, errors.New("want a string and an array")
	}
	s, ok := a[0].(string)
	list, ok2 := a[1].([]any)
	if !ok || !ok2 && a[1] != nil {
		return "", nil, errors.New("want a string and an array")
	}
	return s, list, nil
}

// execTemplate runs the template on v (decoded with json.Number), its
// numbers turned into int64 or Number first.
func (f *Filter) execTemplate(w io.Writer, v any, tty bool) error {
	var out bytes.Buffer
	tb := &table{tty: tty, w: &out}
	if err := execute(&out, f.trees, templateFuncs(tb), templateValue(v)); err != nil {
		return &RuntimeError{f.flag, err}
	}
	tb.render()
	_, err := w.Write(out.Bytes())
	return err
}

// templateValue converts json.Number values to int64 (whole numbers) or
// Number (the rest), so that templates print them as written and compare
// them with numbers.
func templateValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		if f, err := v.Float64(); err == nil {
			return Number(f)
		}
		return v.String()
	case []any:
		for i := range v {
			v[i] = templateValue(v[i])
		}
		return slices.Clip(v) // slice's indexes go up to the length
	case map[string]any:
		for k := range v {
			v[k] = templateValue(v[k])
		}
	}
	return v
}

// table collects tablerow rows: aligned on a terminal, tab-separated (tabs
// and newlines in cells escaped) when piped, as chatq's tables are.
type table struct {
	tty  bool
	w    io.Writer
	rows [][]string
	esc  *strings.Replacer // made with the first row: no work at start-up
}

func (t *table) row(cells []any) {
	if t.esc == nil {
		t.esc = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)
	}
	r := make([]string, len(cells))
	for i, c := range cells {
		r[i] = t.esc.Replace(printable(c))
	}
	t.rows = append(t.rows, r)
}

func (t *table) render() {
	if len(t.rows) == 0 {
		return
	}
	out := t.w
	var tw *tabwriter.Writer
	if t.tty {
		tw = tabwriter.NewWriter(t.w, 0, 4, 2, ' ', 0)
		out = tw
	}
	for _, r := range t.rows {
		fmt.Fprintln(out, strings.Join(r, "\t"))
	}
	if tw != nil {
		_ = tw.Flush()
	}
	t.rows = nil
}

// toTime reads a time as chatq's JSON gives it: Unix seconds (RSMQ's
// created and modified, a chat message's ts), Unix milliseconds (sent,
// visible_at, fr: any number above 1e11, which as seconds would be past
// the year 5000), or an RFC 3339 string.
func toTime(v any) (time.Time, error) {
	var f float64
	switch v := v.(type) {
	case int64:
		f = float64(v)
	case Number:
		f = float64(v)
	case float64:
		f = v
	case string:
		return time.Parse(time.RFC3339Nano, v)
	default:
		return time.Time{}, fmt.Errorf("not a time: %v (want Unix seconds or milliseconds, or RFC 3339)", v)
	}
	if math.Abs(f) > 1e11 {
		return time.UnixMilli(int64(f)), nil
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), nil
}

// timeago says how long ago a time was, roughly: "3 minutes ago", or "in 2
// hours" for a time ahead.
func timeago(v any, now time.Time) (string, error) {
	t, err := toTime(v)
	if err != nil {
		return "", err
	}
	d := now.Sub(t)
	suffix := " ago"
	prefix := ""
	if d < 0 {
		d, suffix, prefix = -d, "", "in "
	}
	var n int64
	var unit string
	switch {
	case d < time.Minute:
		return prefix + "less than a minute" + suffix, nil
	case d < time.Hour:
		n, unit = int64(d/time.Minute), "minute"
	case d < 24*time.Hour:
		n, unit = int64(d/time.Hour), "hour"
	case d < 30*24*time.Hour:
		n, unit = int64(d/(24*time.Hour)), "day"
	case d < 365*24*time.Hour:
		n, unit = int64(d/(30*24*time.Hour)), "month"
	default:
		n, unit = int64(d/(365*24*time.Hour)), "year"
	}
	if n != 1 {
		unit += "s"
	}
	return fmt.Sprintf("%s%d %s%s", prefix, n, unit, suffix), nil
}

// truncate shortens s to at most n characters, ending in "..." when cut.
func truncate(n int, s string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 3 {
		return string([]rune(s)[:max(n, 0)])
	}
	return string([]rune(s)[:n-3]) + "..."
}
