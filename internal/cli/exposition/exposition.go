// Package exposition writes metrics in the two text formats Prometheus
// scrapes: its own text exposition format (version 0.0.4) and OpenMetrics
// text (1.0.0). It covers what chatq exports, gauges and counters without
// timestamps, exemplars or created times, byte for byte as
// github.com/prometheus/common/expfmt writes them (the tests compare): that
// module and client_golang cost every chatq command start-up time
// (docs/metrics.md has the measure), this package costs none.
package exposition

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"mime"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Type is a metric family's type.
type Type string

const (
	Gauge   Type = "gauge"
	Counter Type = "counter" // its name ends in _total
)

// Label is one label of a sample.
type Label struct{ Name, Value string }

// Sample is one time series' value now.
type Sample struct {
	Labels []Label
	Value  float64
}

// Family is a metric: its name, type, help and samples, each with its own
// label values.
type Family struct {
	Name    string
	Type    Type
	Help    string
	Samples []Sample
}

// Format is a text format.
type Format int

const (
	Text        Format = iota // Prometheus text, version 0.0.4
	OpenMetrics               // OpenMetrics text, version 1.0.0
)

// ContentType is the media type of an HTTP response in format f.
func (f Format) ContentType() string {
	if f == OpenMetrics {
		return "application/openmetrics-text; version=1.0.0; charset=utf-8"
	}
	return "text/plain; version=0.0.4; charset=utf-8"
}

// Negotiate picks the format for an HTTP request's Accept header:
// OpenMetrics when it is asked for in version 1.0.0 (or with no version)
// and preferred to the text format, as Prometheus asks, else text.
func Negotiate(accept string) Format {
	om, text := -1.0, -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		switch mt {
		case "application/openmetrics-text":
			if v := params["version"]; v == "" || v == "1.0.0" {
				om = max(om, q)
			}
		case "text/plain", "text/*", "*/*":
			text = max(text, q)
		}
	}
	if om > 0 && om >= text {
		return OpenMetrics
	}
	return Text
}

// Write writes fams to w in format f: families in order, each sample on a
// line, and OpenMetrics's closing "# EOF". A family without samples is
// left out (expfmt refuses one). A name that is not a valid metric or
// label name, or a counter whose name does not end in _total, is an error
// before anything is written.
func Write(w io.Writer, fams []Family, f Format) error {
	for _, fam := range fams {
		if err := check(fam); err != nil {
			return err
		}
	}
	bw := bufio.NewWriter(w)
	for _, fam := range fams {
		if len(fam.Samples) == 0 {
			continue
		}
		writeFamily(bw, fam, f)
	}
	if f == OpenMetrics {
		bw.WriteString("# EOF\n")
	}
	return bw.Flush()
}

func check(fam Family) error {
	if !validName(fam.Name, true) {
		return fmt.Errorf("exposition: invalid metric name %q", fam.Name)
	}
	switch fam.Type {
	case Gauge:
	case Counter:
		if !strings.HasSuffix(fam.Name, "_total") {
			return fmt.Errorf("exposition: counter %s: the name must end in _total", fam.Name)
		}
	default:
		return fmt.Errorf("exposition: %s: unknown type %q", fam.Name, fam.Type)
	}
	for _, s := range fam.Samples {
		for _, l := range s.Labels {
			if !validName(l.Name, false) || strings.HasPrefix(l.Name, "__") {
				return fmt.Errorf("exposition: %s: invalid label name %q", fam.Name, l.Name)
			}
		}
	}
	return nil
}

// validName reports whether s is a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)
// or, without colons, a label name.
func validName(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || colon && c == ':' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// escape writes s with \ and newline escaped, and " too when quotes:
// what label values (and OpenMetrics's HELP) need; the text format's HELP
// leaves quotes alone.
func escape(w *bufio.Writer, s string, quotes bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			w.WriteString(`\\`)
		case c == '\n':
			w.WriteString(`\n`)
		case c == '"' && quotes:
			w.WriteString(`\"`)
		default:
			w.WriteByte(c)
		}
	}
}

func writeFamily(w *bufio.Writer, fam Family, f Format) {
	name := fam.Name
	if f == OpenMetrics {
		// OpenMetrics names a counter family without its _total, which
		// its samples keep; its HELP escapes quotes too.
		name = strings.TrimSuffix(fam.Name, "_total")
	}
	if fam.Help != "" {
		w.WriteString("# HELP " + name + " ")
		escape(w, validUTF8(fam.Help), f == OpenMetrics)
		w.WriteByte('\n')
	}
	w.WriteString("# TYPE " + name + " " + string(fam.Type) + "\n")
	for _, s := range fam.Samples {
		w.WriteString(fam.Name)
		for i, l := range s.Labels {
			if i == 0 {
				w.WriteByte('{')
			} else {
				w.WriteByte(',')
			}
			w.WriteString(l.Name + `="`)
			escape(w, validUTF8(l.Value), true)
			w.WriteByte('"')
		}
		if len(s.Labels) > 0 {
			w.WriteByte('}')
		}
		w.WriteByte(' ')
		w.WriteString(formatValue(s.Value, f))
		w.WriteByte('\n')
	}
}

// formatValue writes v as expfmt does: the shortest decimal that reads
// back as v, NaN and ±Inf spelled out; OpenMetrics adds ".0" to a whole
// number.
func formatValue(v float64, f Format) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0:
		v = 0 // not -0
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if f == OpenMetrics && !strings.ContainsAny(s, "e.") {
		s += ".0"
	}
	return s
}

// validUTF8 replaces bytes that are not UTF-8, which a Prometheus parser
// refuses, by U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
