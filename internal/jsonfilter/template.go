package jsonfilter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"text/template"
	"time"
	"unicode/utf8"
)

// Number is a JSON number that is not a whole number fitting int64, as a
// template sees it: it prints as the shortest decimal that reads back the
// same (1795266822.123, never 1.795266822123e+09) and compares with lt, gt
// and eq like any float. Whole numbers are int64.
type Number float64

func (n Number) String() string { return strconv.FormatFloat(float64(n), 'f', -1, 64) }

// templateFuncs are the functions a --template may call, after the GitHub
// CLI's where cheap: join, pluck, tablerow, tablerender, timefmt, timeago,
// truncate. tablerow and tablerender are bound to a table per value in
// execTemplate; these are the stand-ins the parser needs.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"join":        join,
		"pluck":       pluck,
		"timefmt":     timefmt,
		"timeago":     func(v any) (string, error) { return timeago(v, time.Now()) },
		"truncate":    truncate,
		"tablerow":    func(cells ...any) string { return "" },
		"tablerender": func() string { return "" },
	}
}

// execTemplate runs the template on v (decoded with json.Number), its
// numbers turned into int64 or Number first.
func (f *Filter) execTemplate(w io.Writer, v any, tty bool) error {
	var out bytes.Buffer
	tb := &table{tty: tty}
	t, err := f.tmpl.Clone()
	if err != nil {
		return &RuntimeError{f.flag, err}
	}
	t.Funcs(template.FuncMap{
		"tablerow":    func(cells ...any) string { tb.row(cells); return "" },
		"tablerender": func() string { tb.render(&out); return "" },
	})
	if err := t.Execute(&out, templateValue(v)); err != nil {
		msg := strings.TrimPrefix(err.Error(), "template: ")
		return &RuntimeError{f.flag, fmt.Errorf("%s", msg)}
	}
	tb.render(&out)
	_, err = w.Write(out.Bytes())
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
	rows [][]string
}

var cellEscaper = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

func (t *table) row(cells []any) {
	r := make([]string, len(cells))
	for i, c := range cells {
		r[i] = cellEscaper.Replace(fmt.Sprint(c))
	}
	t.rows = append(t.rows, r)
}

func (t *table) render(w io.Writer) {
	if len(t.rows) == 0 {
		return
	}
	out := w
	var tw *tabwriter.Writer
	if t.tty {
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
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

// join joins a list's elements with sep: {{join ", " .members}}.
func join(sep string, list []any) string {
	parts := make([]string, len(list))
	for i, x := range list {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, sep)
}

// pluck takes one field of each object in a list: {{pluck "id" .}}.
func pluck(field string, list []any) []any {
	var out []any
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m[field])
		}
	}
	return out
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

// timefmt formats a time with a Go layout: {{timefmt "2006-01-02 15:04" .sent}}.
func timefmt(layout string, v any) (string, error) {
	t, err := toTime(v)
	if err != nil {
		return "", err
	}
	return t.Format(layout), nil
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
func truncate(n int, v any) string {
	s := fmt.Sprint(v)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 3 {
		return string([]rune(s)[:max(n, 0)])
	}
	return string([]rune(s)[:n-3]) + "..."
}
