package top

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// styles are the few attributes and colours top uses; with NO_COLOR the
// attributes stay and the colours go. The zero value renders plain text
// (tests and golden frames).
type styles struct {
	title, header, selected, warn, bad, dim lipgloss.Style
}

func newStyles(noColor bool) styles {
	st := styles{
		title:    lipgloss.NewStyle().Bold(true),
		header:   lipgloss.NewStyle().Bold(true),
		selected: lipgloss.NewStyle().Reverse(true),
		warn:     lipgloss.NewStyle().Bold(true),
		bad:      lipgloss.NewStyle(),
		dim:      lipgloss.NewStyle().Faint(true),
	}
	if !noColor {
		st.header = st.header.Foreground(lipgloss.Cyan)
		st.warn = st.warn.Foreground(lipgloss.Yellow)
		st.bad = st.bad.Foreground(lipgloss.Red)
	}
	return st
}

// column is one column of a table: a title, a width and an alignment.
type column struct {
	title string
	width int
	right bool
}

// row renders cells into the columns, each cut or padded to its width.
func row(cols []column, cells []string) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		s := printable(cells[i])
		if ansi.StringWidth(s) > c.width {
			s = ansi.Truncate(s, c.width, "…")
		}
		pad := strings.Repeat(" ", c.width-ansi.StringWidth(s))
		if c.right {
			b.WriteString(pad + s)
		} else {
			b.WriteString(s + pad)
		}
	}
	return strings.TrimRight(b.String(), " ")
}

func titles(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.title
	}
	return out
}

// printable escapes what a terminal would act on (control characters,
// escape sequences) in text from the server: message bodies, keys, errors.
func printable(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError
}

// cut cuts a line to at most width cells.
func cut(s string, width int) string {
	if ansi.StringWidth(s) > width {
		return ansi.Truncate(s, width, "…")
	}
	return s
}

// fit cuts or pads a line to exactly width cells.
func fit(s string, width int) string {
	if ansi.StringWidth(s) > width {
		return ansi.Truncate(s, width, "…")
	}
	return s + strings.Repeat(" ", width-ansi.StringWidth(s))
}

// queueColumns lays out the queue table for a width: the name column takes
// what the longest name needs (8 to 24 cells) and the sparkline the rest,
// left out when fewer than 5 cells remain.
func queueColumns(width int, rows []QueueRow) []column {
	name := 8
	for _, r := range rows {
		name = max(name, min(ansi.StringWidth(r.Name), 24))
	}
	cols := []column{
		{"QUEUE", name, false}, {"READY", 7, true}, {"DELAYED", 7, true}, {"INFLIGHT", 8, true},
		{"DLQ", 10, false}, {"OLDEST", 6, true}, {"PUSH/S", 6, true}, {"RECV/S", 6, true},
	}
	used := 2 // the selection mark
	for _, c := range cols {
		used += c.width + 1
	}
	// Room to spare: show whole dead-letter names (up to 24 cells), still
	// leaving 20 for the sparkline.
	want := 0
	for _, r := range rows {
		want = max(want, min(ansi.StringWidth(dlq(r, 100)), 24))
	}
	if extra := min(want-cols[4].width, width-used-20); extra > 0 {
		cols[4].width += extra
		used += extra
	}
	if spark := width - used; spark >= 5 {
		title := "PUSHES, LAST MINUTE"
		if spark < len(title) {
			title = "1 MIN"
		}
		cols = append(cols, column{title, spark, false})
	} else if width-used < 0 {
		// Narrower still: give the name column what is missing, down to 6.
		cols[0].width = max(6, cols[0].width+width-used+1)
	}
	return cols
}

func queueCells(r QueueRow, cols []column) []string {
	cells := []string{r.Name, count(r.Ready), count(r.Delayed), count(r.InFlight), dlq(r, cols[4].width),
		age(r.OldestMs(), r.Ready > 0), rate(r.PushRate), rate(r.RecvRate)}
	if r.Error != "" {
		cells = []string{r.Name, "", "", "", r.Error, "", "", ""}
	}
	if len(cols) > len(cells) {
		cells = append(cells, sparkline(r.PushHistory, cols[len(cells)].width))
	}
	return cells
}

func count(n int64) string { return fmt.Sprint(n) }

// dlq renders a dead-letter queue and its depth in width cells, cutting
// the name rather than the depth.
func dlq(r QueueRow, width int) string {
	if r.DeadLetter == "" {
		// Another kind's dead jobs are in the queue itself.
		if r.Dead != nil {
			return fmt.Sprintf("%d dead", *r.Dead)
		}
		return "-"
	}
	depth := "?"
	if r.DeadLetterDepth != nil {
		depth = fmt.Sprint(*r.DeadLetterDepth)
	}
	name := r.DeadLetter
	if room := width - len(depth) - 1; ansi.StringWidth(name) > room {
		name = ansi.Truncate(name, max(room, 1), "…")
	}
	return name + " " + depth
}

func rate(r *float64) string {
	if r == nil {
		return "-"
	}
	switch v := *r; {
	case v >= 10000:
		return fmt.Sprintf("%.0fk", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

// age renders a duration in ms the way an operator reads it at a glance.
func age(ms int64, some bool) string {
	if !some {
		return "-"
	}
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

func bytesHuman(n int64) string {
	if n <= 0 {
		return "?"
	}
	v, unit := float64(n), "B"
	for _, u := range []string{"K", "M", "G", "T"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	if unit == "B" {
		return fmt.Sprintf("%dB", n)
	}
	return fmt.Sprintf("%.1f%s", v, unit)
}

var sparks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws the samples (oldest first, one per refresh, at most a
// minute of them) in width cells: with fewer samples than cells it is
// right-aligned, with more each cell is the mean of its share.
func sparkline(samples []float64, width int) string {
	if width <= 0 || len(samples) == 0 {
		return ""
	}
	var cells []float64
	if len(samples) <= width {
		cells = samples
	} else {
		for i := 0; i < width; i++ {
			lo, hi := i*len(samples)/width, (i+1)*len(samples)/width
			sum := 0.0
			for _, v := range samples[lo:hi] {
				sum += v
			}
			cells = append(cells, sum/float64(hi-lo))
		}
	}
	top := 0.0
	for _, v := range cells {
		top = math.Max(top, v)
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", width-len(cells)))
	for _, v := range cells {
		i := 0
		if top > 0 {
			i = int(math.Round(v / top * float64(len(sparks)-1)))
		}
		b.WriteRune(sparks[i])
	}
	return b.String()
}

// serverLine is the title line: what chatq watches and how it answers.
func serverLine(s *Snapshot, interval time.Duration, width int) string {
	sv := s.Server
	role := ""
	if sv.Role != "" {
		role = " " + sv.Role
	}
	name := sv.Server
	if name == "" {
		name = "server"
	}
	mem, clients := bytesHuman(sv.UsedMemory), strconv.FormatInt(sv.Clients, 10)
	if sv.NoInfo {
		mem, clients = "?", "?"
	}
	line := fmt.Sprintf("%s %s %s%s · mem %s · %s clients · rtt %.2fms · every %s",
		name, sv.Version, sv.Mode, role, mem, clients, sv.RTTMs, interval)
	line = printable(line) // the server's own words
	if long := "chatq top · " + line; len(long) <= width {
		return long
	}
	return line
}

// chatLines sum up the chats in one or two lines.
func chatLines(c ChatsInfo, complete bool, limit int) []string {
	if c.Count == 0 {
		if complete {
			return []string{"CHATS none"}
		}
		return []string{"CHATS none seen yet"}
	}
	more := ""
	if !complete {
		more = "+"
	}
	head := fmt.Sprintf("CHATS %d%s · %d messages stored", c.Count, more, c.Messages)
	if c.Examined < c.Count {
		head += fmt.Sprintf(" (in the %d examined so far)", c.Examined)
	}
	if c.Count > limit {
		head += fmt.Sprintf(" · %d read per refresh, in turn (--max-chats)", limit)
	}
	var busy []string
	for _, r := range c.Busiest {
		s := fmt.Sprintf("%s: %d stored", r.ID, r.Messages)
		if r.Rate != nil && *r.Rate > 0 {
			s += ", " + rate(r.Rate) + "/s"
		}
		busy = append(busy, s)
	}
	return []string{head, "  busiest " + strings.Join(busy, " · ")}
}

// costLine says what a refresh cost and how far discovery has got.
func costLine(s *Snapshot) string {
	return fmt.Sprintf("%d calls this refresh", s.Calls)
}

// stamp renders a time relative to now, as "in 5s" or "12s ago".
func relative(t, now time.Time) string {
	d := t.Sub(now)
	if d > 0 {
		return "in " + age(d.Milliseconds(), true)
	}
	return age(-d.Milliseconds(), true) + " ago"
}

// writeTables prints the --once text: one table per part (the empty ones
// left out), each row starting with what it is, so `grep ^queue` and
// `cut -f` work on piped output. On a terminal the tables have headers and
// a blank line between them.
type tableWriter interface {
	Row(cells ...any)
	Flush() error
}

// serverRow is the server's table row; memory and clients are "-" when
// INFO was refused.
func serverRow(sv ServerInfo) []any {
	var mem, clients any = sv.UsedMemory, sv.Clients
	if sv.NoInfo {
		mem, clients = "-", "-"
	}
	return []any{"server", cmp.Or(sv.Server, "-"), sv.Version, sv.Mode, mem, clients, fmt.Sprintf("%.3f", sv.RTTMs)}
}

func writeTables(newTable func(header ...string) tableWriter, tty bool, out io.Writer, s *Snapshot) error {
	var parts [][][]any
	parts = append(parts, [][]any{
		{"KIND", "NAME", "VERSION", "MODE", "MEMORY", "CLIENTS", "RTT_MS"},
		serverRow(s.Server),
	})
	queues := [][]any{{"KIND", "NAME", "READY", "DELAYED", "INFLIGHT", "DEAD", "DLQ", "DLQ_DEPTH", "OLDEST_READY_MS", "PUSH_PER_S", "RECV_PER_S"}}
	for _, r := range s.Queues {
		if r.Error != "" {
			queues = append(queues, []any{"queue", r.Name, "-", "-", "-", "-", "-", "-", "-", "-", r.Error})
			continue
		}
		oldest, dead := "-", "-"
		if r.OldestReadyMs != nil {
			oldest = fmt.Sprint(*r.OldestReadyMs)
		}
		if r.Dead != nil {
			dead = fmt.Sprint(*r.Dead)
		}
		dl, depth := "-", "-"
		if r.DeadLetter != "" {
			dl, depth = r.DeadLetter, "?"
			if r.DeadLetterDepth != nil {
				depth = fmt.Sprint(*r.DeadLetterDepth)
			}
		}
		queues = append(queues, []any{"queue", r.Name, r.Ready, r.Delayed, r.InFlight, dead, dl, depth, oldest, rateCell(r.PushRate), rateCell(r.RecvRate)})
	}
	lists := [][]any{{"KIND", "NAME", "LENGTH", "SHARDS"}}
	for _, r := range s.Lists {
		if r.Error != "" {
			lists = append(lists, []any{"list", r.Key, "-", r.Error})
			continue
		}
		lists = append(lists, []any{"list", r.Key, r.Length, r.Shards})
	}
	chats := [][]any{{"KIND", "NAME", "MESSAGES", "LAST_ID", "SEND_PER_S"}}
	for _, r := range s.Chats.Busiest {
		chats = append(chats, []any{"chat", r.ID, r.Messages, r.LastID, rateCell(r.Rate)})
	}
	parts = append(parts, queues, lists, chats)
	for i, p := range parts {
		if len(p) == 1 {
			continue
		}
		if i > 0 && tty {
			fmt.Fprintln(out)
		}
		header := make([]string, len(p[0]))
		for j, h := range p[0] {
			header[j] = h.(string)
		}
		t := newTable(header...)
		for _, row := range p[1:] {
			t.Row(row...)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func rateCell(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", *r)
}
