package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON prints v as JSON followed by a newline: indented on a terminal,
// one line when piped. HTML characters are not escaped.
func (f *Factory) WriteJSON(v any) error {
	enc := json.NewEncoder(f.IO.Out)
	enc.SetEscapeHTML(false)
	if f.IO.OutTTY {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// WriteJSONLine prints v as one line of JSON Lines (for streaming commands).
func WriteJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
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

func (f *Factory) NewTable(header ...string) *Table {
	t := &Table{w: f.IO.Out, io: f.IO, header: header, tty: f.IO.OutTTY}
	if t.tty {
		t.tw = tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
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
		parts[i] = CellEscaper.Replace(fmt.Sprint(c))
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
