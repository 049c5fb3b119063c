package iostreams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// WriteJSON prints v as JSON followed by a newline: indented on a terminal,
// one line when piped. HTML characters are not escaped. Under --jq or
// --template the filter's result is printed instead.
func (s *IOStreams) WriteJSON(v any) error {
	if o, ok := s.Out.(*filteredOut); ok {
		return writeFiltered(o, v)
	}
	enc := json.NewEncoder(s.Out)
	enc.SetEscapeHTML(false)
	if s.OutTTY {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// WriteJSONLine prints v as one line of JSON Lines (for streaming
// commands). When w is stdout under --jq or --template, the filter's result
// for v is printed instead.
func WriteJSONLine(w io.Writer, v any) error {
	switch o := w.(type) {
	case *filteredOut:
		return writeFiltered(o, v)
	case unbuffered:
		return writeFiltered(o.filteredOut, v)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func writeFiltered(o *filteredOut, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return o.writeValue(buf.Bytes())
}

// table prints rows: aligned with a header on a terminal, tab-separated with
// no header when piped, so `cut -f` and `awk -F'\t'` work.
type Table struct {
	w      io.Writer
	tw     *tabwriter.Writer
	io     *IOStreams
	header []string
	tty    bool
	rows   int
	empty  string
}

func (s *IOStreams) NewTable(header ...string) *Table {
	t := &Table{w: s.Out, io: s, header: header, tty: s.OutTTY}
	if t.tty {
		t.tw = tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
		t.w = t.tw
	}
	return t
}

// WhenEmpty sets what a table with no rows says on a terminal, on stderr
// ("no queues"), instead of a bare header. Piped, an empty table prints
// nothing either way.
func (t *Table) WhenEmpty(msg string) *Table {
	t.empty = msg
	return t
}

func (t *Table) writeHeader() {
	if t.tty && t.rows == 0 {
		fmt.Fprintln(t.w, strings.Join(t.header, "\t"))
	}
}

// Row adds a row; cells are printed with fmt.Sprint, tabs and newlines in
// them escaped so a row stays one line.
func (t *Table) Row(cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		if t.tty {
			parts[i] = TerminalSafe(fmt.Sprint(c))
		} else {
			parts[i] = CellEscaper.Replace(fmt.Sprint(c))
		}
	}
	t.writeHeader()
	fmt.Fprintln(t.w, strings.Join(parts, "\t"))
	t.rows++
}

var CellEscaper = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

// Flush writes out an aligned table.
func (t *Table) Flush() error {
	if t.tty && t.rows == 0 {
		if t.empty != "" {
			t.io.Infof("%s", t.empty)
			return nil
		}
		t.writeHeader()
	}
	if t.tw != nil {
		return t.tw.Flush()
	}
	return nil
}

// TerminalSafe escapes what a terminal would interpret rather than show:
// control characters (ESC and the rest of C0, DEL, C1) as \xNN or \u00NN,
// and bytes that are not UTF-8 as \xNN, so a message holding an escape
// sequence (OSC, CSI) cannot move the cursor, retitle the window or hide
// text. Backslashes are doubled so the result reads back unambiguously.
// Only output to a terminal goes through it: piped output stays byte-exact.
func TerminalSafe(s string) string { return terminalSafe(s, false) }

// terminalSafeLines is TerminalSafe for text that is meant to span lines
// (--jq's raw strings, --template's output): newlines and tabs act, and
// backslashes stay as they are.
func terminalSafeLines(s string) string { return terminalSafe(s, true) }

func terminalSafe(s string, lines bool) string {
	safe := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if lines && (c == '\n' || c == '\t' || c == '\\') {
			continue
		}
		if c < 0x20 || c == 0x7f || c == '\\' || c >= 0x80 {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case lines && (r == '\n' || r == '\t' || r == '\\'):
			b.WriteRune(r)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
