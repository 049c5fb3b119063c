package top

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
)

// model is the live view: the last snapshot, what is selected, the filter
// and whether a queue is open. Refreshes run one at a time as commands;
// the clock is the collector's, so tests drive time.
type model struct {
	ctx      context.Context
	col      *collector
	interval time.Duration
	st       styles

	width, height int

	snap    *Snapshot
	err     error     // the last refresh failed: reconnecting
	errFrom time.Time // since when

	selName  string // the selected queue, kept by name across refreshes
	filter   string
	editing  bool // typing a filter
	input    string
	open     string // the queue whose view is open, "" for the overview
	busy     bool   // a refresh is running
	again    bool   // refresh again as soon as it ends
	tickGen  int
	quitting bool

	// The open queue's actions: retry or delete the selected message,
	// redrive the queue (a dead-letter queue), each asked on screen first.
	acts       *delayq.Client   // the package code the queue commands call (nil: no actions)
	kinds      *queues.Registry // the other kinds' queues, for their actions
	msgSel     string           // the selected message's id
	ask        *action          // asked, waiting for y
	acting     bool             // an action (or the read before asking) runs
	outcome    string           // what the last action did, or why not
	outcomeBad bool
}

// action is a change to the open queue, asked before it is made.
type action struct {
	kind     string // "retry", "delete" or "redrive"
	queue    string
	ref      string // the message's latest receipt, or its id when never received
	question string
}

// askMsg is a message read again before its action is asked; doneMsg
// what an action did (or why it could not).
type askMsg struct{ a *action }

type doneMsg struct {
	text string
	bad  bool
}

type snapMsg struct {
	snap *Snapshot
	err  error
}

type tickMsg struct{ gen int }

func newModel(ctx context.Context, col *collector, interval time.Duration, st styles, first *Snapshot) *model {
	m := &model{ctx: ctx, col: col, interval: interval, st: st, width: 80, height: 24, snap: first}
	if first != nil && len(first.Queues) > 0 {
		m.selName = first.Queues[0].Name
	}
	return m
}

func (m *model) Init() tea.Cmd { return m.schedule() }

// refresh starts a refresh unless one is running (then it runs again when
// that one ends).
func (m *model) refresh() tea.Cmd {
	if m.busy {
		m.again = true
		return nil
	}
	m.busy = true
	m.tickGen++ // a pending tick is void
	col, ctx, filter, open, n := m.col, m.ctx, m.filter, m.open, m.peekRows()
	return func() tea.Msg {
		s, err := col.snapshot(ctx, filter, open, n)
		return snapMsg{s, err}
	}
}

// schedule asks for a refresh one interval from now.
func (m *model) schedule() tea.Cmd {
	m.tickGen++
	gen := m.tickGen
	return tea.Tick(m.interval, func(time.Time) tea.Msg { return tickMsg{gen} })
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		// A frame needs its first and last lines; a terminal narrower
		// than 20 columns just cuts the lines.
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 2)
		return m, nil
	case tickMsg:
		if msg.gen != m.tickGen {
			return m, nil
		}
		return m, m.refresh()
	case snapMsg:
		m.busy = false
		if msg.err != nil {
			if m.err == nil {
				m.errFrom = m.col.clock()
			}
			m.err = msg.err
		} else {
			m.err = nil
			m.snap = msg.snap
			m.keepSelection()
			m.keepMessage()
		}
		if m.again {
			m.again = false
			return m, m.refresh()
		}
		return m, m.schedule()
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case askMsg:
		m.acting, m.ask = false, msg.a
		return m, nil
	case doneMsg:
		m.acting, m.outcome, m.outcomeBad = false, msg.text, msg.bad
		return m, m.refresh()
	}
	return m, nil
}

func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		m.quitting = true
		return tea.Quit
	}
	if m.ask != nil {
		a := m.ask
		m.ask = nil
		if k.String() == "y" || k.String() == "Y" {
			m.acting, m.outcome = true, ""
			return m.act(a)
		}
		m.outcome, m.outcomeBad = "cancelled: nothing changed", false
		return nil
	}
	if m.editing {
		switch k.String() {
		case "enter":
			m.editing, m.filter = false, m.input
			return m.refresh()
		case "esc":
			m.editing = false
		case "backspace":
			if r := []rune(m.input); len(r) > 0 {
				m.input = string(r[:len(r)-1])
			}
		default:
			if k.Text != "" {
				m.input += k.Text
			}
		}
		return nil
	}
	switch k.String() {
	case "q":
		m.quitting = true
		return tea.Quit
	case "up", "k":
		m.move(-1)
		m.moveMessage(-1)
	case "down", "j":
		m.move(1)
		m.moveMessage(1)
	case "r", "d":
		if m.open != "" && m.acts != nil && !m.acting && m.msgSel != "" {
			kind := map[string]string{"r": "retry", "d": "delete"}[k.String()]
			m.acting, m.outcome = true, ""
			if isKind(m.open) {
				return m.prepareKind(kind, m.open, m.msgSel)
			}
			return m.prepare(kind, m.open, m.msgSel)
		}
	case "R":
		if m.open != "" && m.acts != nil && !m.acting {
			m.outcome = ""
			m.ask = &action{kind: "redrive", queue: m.open, question: fmt.Sprintf(
				"redrive %s: move its messages back to the queues they were dead-lettered from? y/N", m.open)}
			if isKind(m.open) {
				m.ask.question = fmt.Sprintf("redrive %s: run its dead jobs again? y/N", m.open)
			}
		}
	case "home", "g":
		m.move(-1 << 30)
	case "end", "G":
		m.move(1 << 30)
	case "enter":
		if m.open == "" && m.selName != "" {
			m.open = m.selName
			return m.refresh()
		}
	case "esc", "backspace", "left", "h":
		if m.open != "" {
			m.open, m.msgSel, m.outcome = "", "", ""
		} else if m.filter != "" && k.String() == "esc" {
			m.filter, m.input = "", ""
			return m.refresh()
		}
	case "/":
		m.editing, m.input = true, m.filter
	}
	return nil
}

// move moves the selection by d queues.
func (m *model) move(d int) {
	if m.snap == nil || len(m.snap.Queues) == 0 || m.open != "" {
		return
	}
	i := m.selected() + d
	i = max(0, min(i, len(m.snap.Queues)-1))
	m.selName = m.snap.Queues[i].Name
}

// moveMessage moves the open queue's message selection by d rows.
func (m *model) moveMessage(d int) {
	if m.snap == nil || m.open == "" || m.snap.PeekQueue != m.open || len(m.snap.Peek) == 0 {
		return
	}
	i := m.selectedMessage() + d
	i = max(0, min(i, len(m.snap.Peek)-1))
	m.msgSel = m.snap.Peek[i].ID
}

// keepMessage keeps the selected message of the open queue, or takes the
// first one when it went away (acked, received, moved).
func (m *model) keepMessage() {
	if m.open == "" || m.snap.PeekQueue != m.open || len(m.snap.Peek) == 0 {
		m.msgSel = ""
		return
	}
	m.msgSel = m.snap.Peek[m.selectedMessage()].ID
}

// selectedMessage is the index of the selected message in the open
// queue's rows (the first when it went away).
func (m *model) selectedMessage() int {
	for i, p := range m.snap.Peek {
		if p.ID == m.msgSel {
			return i
		}
	}
	return 0
}

// prepare reads the message again (Get: its state and latest receipt now)
// and then asks: the action acts on that delivery only, so a receive in
// between makes it change nothing (a stale receipt), as for the commands.
func (m *model) prepare(kind, q, id string) tea.Cmd {
	ctx, acts := m.ctx, m.acts
	return func() tea.Msg {
		msg, err := acts.Get(ctx, q, id)
		if err != nil {
			return doneMsg{fmt.Sprintf("%s %s: %s", kind, short(id), failure(err)), true}
		}
		held := ""
		if msg.State == "inflight" {
			held = ", held by a consumer"
		}
		return askMsg{&action{kind: kind, queue: q, ref: cmp.Or(msg.Receipt, msg.ID), question: fmt.Sprintf(
			"%s %s (%s, rc %d%s) %q? y/N", kind, short(id), msg.State, msg.RC, held, cut(oneLine(msg.Body), 24))}}
	}
}

// act makes the change a asked for, through the same package calls as
// chatq queue retry, ack and redrive, and says what it did.
func (m *model) act(a *action) tea.Cmd {
	if isKind(a.queue) {
		return m.actKind(a)
	}
	ctx, acts := m.ctx, m.acts
	return func() tea.Msg {
		id, _, _ := strings.Cut(a.ref, ".")
		switch a.kind {
		case "retry", "delete":
			var r *delayq.AckResult
			var err error
			if a.kind == "retry" {
				r, err = acts.Retry(ctx, a.queue, 0, a.ref)
			} else {
				r, err = acts.Ack(ctx, a.queue, a.ref)
			}
			switch {
			case r != nil && r.Retried == 1:
				return doneMsg{"retried " + short(id) + ": due now", false}
			case r != nil && r.Acked == 1:
				return doneMsg{"deleted " + short(id), false}
			case errors.Is(err, delayq.ErrStaleReceipt):
				return doneMsg{fmt.Sprintf("%s %s: nothing changed, it was received again since (stale receipt)", a.kind, short(id)), true}
			case errors.Is(err, delayq.ErrMessageNotFound):
				return doneMsg{fmt.Sprintf("%s %s: nothing changed, it is no longer in the queue", a.kind, short(id)), true}
			}
			return doneMsg{fmt.Sprintf("%s %s: %s", a.kind, short(id), failure(err)), true}
		}
		res, err := acts.Redrive(ctx, a.queue, delayq.RedriveOptions{})
		if err != nil && (res == nil || res.Moved == 0) {
			return doneMsg{"redrive " + a.queue + ": " + failure(err), true}
		}
		text := fmt.Sprintf("redrive %s: moved %d", a.queue, res.Moved)
		for _, q := range slices.Sorted(maps.Keys(res.MovedTo)) {
			text += fmt.Sprintf(" · %d to %s", res.MovedTo[q], q)
		}
		left := map[string]int{"in flight": res.InFlight, "with no destination": res.NoDestination,
			"whose id the destination has": len(res.Exists), "over the destination's maxsize": len(res.TooLong)}
		for _, why := range slices.Sorted(maps.Keys(left)) {
			if left[why] > 0 {
				text += fmt.Sprintf(" · left %d %s", left[why], why)
			}
		}
		if err != nil {
			return doneMsg{text + " · then: " + failure(err), true}
		}
		return doneMsg{text, res.NoDestination+len(res.Exists)+len(res.TooLong) > 0}
	}
}

// failure says why an action failed; a refusal by the server's ACL (a
// read-only user) is named as such: NOPERM, or inside a script Redis 7's
// "The user executing the script can't run this command".
func failure(err error) string {
	if msg := err.Error(); strings.Contains(msg, "NOPERM") || strings.Contains(msg, "user executing the script can't") {
		return "refused: this user may not change the queue (" + oneLine(msg) + ")"
	}
	return oneLine(err.Error())
}

// short is the start of a message id: its time, enough to tell it apart on
// screen.
func short(id string) string { return cut(id, 12) }

// selected is the index of the selected queue in the snapshot.
func (m *model) selected() int {
	if m.snap == nil {
		return 0
	}
	for i, q := range m.snap.Queues {
		if q.Name == m.selName {
			return i
		}
	}
	return 0
}

// keepSelection keeps the selected queue, or takes the first one when it
// went away (deleted, filtered out).
func (m *model) keepSelection() {
	if len(m.snap.Queues) == 0 {
		m.selName = ""
		return
	}
	m.selName = m.snap.Queues[m.selected()].Name
}

// peekRows is how many messages the open queue's view has room for.
func (m *model) peekRows() int {
	if m.open == "" {
		return 0
	}
	return max(1, min(m.height-9, maxPeek))
}

func (m *model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}

// render is the frame for the terminal's size.
func (m *model) render() string {
	if m.quitting {
		return ""
	}
	var lines []string
	if m.open != "" {
		lines = m.queueView()
	} else {
		lines = m.overview()
	}
	for i, l := range lines {
		lines[i] = cut(l, m.width)
	}
	// A fixed height: the footer stays at the bottom, nothing scrolls.
	for len(lines) < m.height {
		lines = append(lines[:len(lines)-1], "", lines[len(lines)-1])
	}
	if len(lines) > m.height {
		lines = append(lines[:m.height-1], lines[len(lines)-1])
	}
	return strings.Join(lines, "\n")
}

// status is the title line, or what went wrong while reconnecting.
func (m *model) status() string {
	if m.err != nil {
		since := m.col.clock().Sub(m.errFrom).Round(time.Second)
		msg := fmt.Sprintf("reconnecting (for %s): %s", since, oneLine(m.err.Error()))
		return m.st.warn.Render(cut(msg, m.width))
	}
	if m.snap == nil {
		return "chatq top · connecting"
	}
	return m.st.title.Render(cut(serverLine(m.snap, m.interval, m.width), m.width))
}

// oneLine puts text from the server on one line, whitespace runs as one
// space and control characters escaped.
func oneLine(s string) string { return printable(strings.Join(strings.Fields(s), " ")) }

func (m *model) footer(keys string) string {
	if m.editing {
		return "filter: " + m.input + "▏ (enter apply · esc cancel)"
	}
	parts := []string{keys}
	if m.filter != "" {
		parts = append(parts, fmt.Sprintf("filter %q (esc clears)", m.filter))
	}
	if m.snap != nil {
		parts = append(parts, costLine(m.snap))
	}
	return m.st.dim.Render(cut(strings.Join(parts, " · "), m.width))
}

func (m *model) overview() []string {
	lines := []string{m.status()}
	s := m.snap
	foot := m.footer("↑↓/jk select · enter open · / filter · q quit")
	if s == nil {
		return append(lines, foot)
	}
	cols := queueColumns(m.width-2, s.Queues)
	qHead := fmt.Sprintf("QUEUES %d", s.QueuesKnown)
	if len(s.Queues) < s.QueuesKnown {
		qHead += fmt.Sprintf(" · the %d most urgent shown (--max-queues)", len(s.Queues))
	}
	if !s.QueuesComplete {
		qHead += " · reading the registry"
	}
	lHead := fmt.Sprintf("SHARDED LISTS %d", s.ListsKnown)
	if !s.KeysComplete {
		lHead = fmt.Sprintf("SHARDED LISTS %d+ · scanning keys (%d so far)", s.ListsKnown, s.KeysScanned)
	}
	if len(s.Lists) < s.ListsKnown {
		lHead += fmt.Sprintf(" · the first %d examined (--max-lists)", len(s.Lists))
	}
	chats := chatLines(s.Chats, s.KeysComplete, s.Limits.Chats)
	if s.ListsRefused != "" {
		lHead = "SHARDED LISTS not listed: this user may not SCAN"
	}
	if s.ChatsRefused != "" {
		chats = []string{"CHATS not listed: this user may not SCAN"}
	}

	// Room: the title, two section titles, two headers, the chats and the
	// footer are fixed; the lists get up to a third of the rest, the
	// queues the others.
	room := m.height - 6 - len(chats)
	listRows := min(len(s.Lists), max(1, room/3))
	if len(s.Lists) == 0 {
		listRows = 0
	}
	queueRows := max(1, room-listRows)

	lines = append(lines, m.st.title.Render(qHead))
	if len(s.Queues) == 0 {
		lines = append(lines, "  none")
	} else {
		lines = append(lines, m.st.header.Render("  "+row(cols, titles(cols))))
		sel := m.selected()
		first := 0
		if sel >= queueRows {
			first = sel - queueRows + 1
		}
		for i := first; i < len(s.Queues) && i < first+queueRows; i++ {
			r := s.Queues[i]
			text := row(cols, queueCells(r, cols))
			switch {
			case i == sel:
				lines = append(lines, m.st.selected.Render(fit("> "+text, m.width)))
			case r.Error != "" || r.DeadLetterDepth != nil && *r.DeadLetterDepth > 0 || r.Dead != nil && *r.Dead > 0:
				lines = append(lines, "  "+m.st.bad.Render(text))
			default:
				lines = append(lines, "  "+text)
			}
		}
	}
	lines = append(lines, m.st.title.Render(lHead))
	if len(s.Lists) > 0 {
		lcols := listColumns(s.Lists)
		lines = append(lines, m.st.header.Render("  "+row(lcols, titles(lcols))))
		for _, r := range s.Lists[:listRows] {
			cells := []string{r.Key, count(r.Length), count(r.Shards)}
			if r.Error != "" {
				cells = []string{r.Key, r.Error, ""}
			}
			lines = append(lines, "  "+row(lcols, cells))
		}
	}
	lines = append(lines, chats...)
	return append(lines, foot)
}

func listColumns(rows []ListRow) []column {
	name := 8
	for _, r := range rows {
		name = max(name, min(len(r.Key), 40))
	}
	return []column{{"LIST", name, false}, {"LENGTH", 10, true}, {"SHARDS", 7, true}}
}

// queueView is the open queue: its numbers, its rates over the last
// minute, and its first messages by due time with their states (peek).
func (m *model) queueView() []string {
	lines := []string{m.status()}
	foot := m.footer("↑↓ · r retry · d delete · R redrive · esc back · q quit")
	s := m.snap
	if s == nil {
		return append(lines, foot)
	}
	var q *QueueRow
	for i := range s.Queues {
		if s.Queues[i].Name == m.open {
			q = &s.Queues[i]
		}
	}
	if q == nil {
		return append(lines, m.st.bad.Render(fmt.Sprintf("queue %s: not among the queues examined (deleted, or filtered out)", m.open)), foot)
	}
	lines = append(lines, m.st.title.Render("QUEUE "+q.Name))
	if q.Error != "" {
		return append(lines, m.st.bad.Render(q.Error), foot)
	}
	summary := fmt.Sprintf("ready %d · delayed %d · inflight %d · oldest ready %s", q.Ready, q.Delayed, q.InFlight, age(q.OldestMs(), q.Ready > 0))
	if q.DeadLetter != "" {
		summary += " · dead letters to " + dlq(*q, 200)
	}
	lines = append(lines, summary)
	w := max(m.width-20, 5)
	lines = append(lines,
		fmt.Sprintf("push/s %7s  %s", rate(q.PushRate), sparkline(q.PushHistory, w)),
		fmt.Sprintf("recv/s %7s  %s", rate(q.RecvRate), sparkline(q.RecvHistory, w)))
	cols := []column{{"ID", 32, false}, {"STATE", 8, false}, {"DUE", 10, true}, {"RC", 4, true}, {"MESSAGE", 0, false}}
	if m.width < 100 {
		cols[0].width = 12 // the start of an id is its time: enough to tell them apart at a glance
	}
	used := 2
	for _, c := range cols[:4] {
		used += c.width + 1
	}
	cols[4].width = max(m.width-used, 4)
	lines = append(lines, m.st.header.Render("  "+row(cols, titles(cols))))
	if s.PeekQueue != q.Name || len(s.Peek) == 0 {
		lines = append(lines, "  no messages")
	}
	if s.PeekQueue == q.Name {
		sel := -1
		if len(s.Peek) > 0 {
			sel = m.selectedMessage()
		}
		for i, p := range s.Peek {
			due := "-" // another kind's job that records no due time
			if !p.VisibleAt.IsZero() {
				due = relative(p.VisibleAt, q.ServerNow)
			}
			text := row(cols, []string{p.ID, p.State, due, count(p.RC), oneLine(p.Body)})
			if i == sel {
				lines = append(lines, m.st.selected.Render(fit("> "+text, m.width)))
			} else {
				lines = append(lines, "  "+text)
			}
		}
	}
	switch {
	case m.ask != nil:
		lines = append(lines, m.st.warn.Render(cut(m.ask.question, m.width)))
	case m.acting:
		lines = append(lines, m.st.dim.Render("working…"))
	case m.outcome != "" && m.outcomeBad:
		lines = append(lines, m.st.bad.Render(cut(m.outcome, m.width)))
	case m.outcome != "":
		lines = append(lines, cut(m.outcome, m.width))
	}
	return append(lines, foot)
}
