package top

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/embedded"
	"github.com/chatq-dev/chatq/internal/testkit/faultproxy"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata")

// fakeClock is the time the collector and the model see: tests move it.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// plainStyles render plain text, for golden frames.
func plainStyles() styles { return styles{} }

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/top -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("frame %s differs (go test ./cmd/top -update rewrites it)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// normalize replaces what differs from one run or server to the next (the
// server's version and memory, times, message ids, the cost of a scan over
// a shared server) with fixed values, so one golden frame fits both
// backends.
func normalize(s *Snapshot) {
	if s == nil {
		return
	}
	s.Server = ServerInfo{Server: "redis", Version: "7.x", Mode: "standalone", Role: "master", UsedMemory: 1 << 20, Clients: 2, RTTMs: 0.1}
	s.Calls = 12
	s.KeysScanned = 42
	for i := range s.Queues {
		q := &s.Queues[i]
		if q.Ready > 0 {
			ms := int64(5000)
			q.OldestReadyMs = &ms
		}
	}
	var now time.Time
	for _, q := range s.Queues {
		if q.Name == s.PeekQueue {
			now = q.ServerNow
		}
	}
	for i := range s.Peek {
		p := &s.Peek[i]
		p.ID = fmt.Sprintf("id%030d", i+1)
		switch p.State {
		case "ready":
			p.VisibleAt = now.Add(-5 * time.Second)
		case "delayed":
			p.VisibleAt = now.Add(time.Minute)
		default:
			p.VisibleAt = now.Add(30 * time.Second)
		}
	}
}

// step runs a command the model returned, as the program would, and feeds
// its message back; a snapshot is normalized first. Ticks are not run:
// tests send refreshes themselves.
func step(t *testing.T, m *model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command to run")
	}
	msg := cmd()
	if sm, ok := msg.(snapMsg); ok {
		if sm.err != nil {
			t.Fatalf("refresh: %v", sm.err)
		}
		normalize(sm.snap)
	}
	m.Update(msg)
}

func key(m *model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		default:
			msg = tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		}
		_, c := m.Update(msg)
		if c != nil {
			cmd = c
		}
	}
	return cmd
}

// fill writes a busy namespace: a queue with a dead-letter queue and
// messages in each state, a sharded list over several shards, two chats.
func fill(t *testing.T, ctx context.Context, c redis.UniversalClient, prefix string) *delayq.Client {
	t.Helper()
	q := delayq.New(c, delayq.Options{Prefix: prefix})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(q.Create(ctx, "jobs-dead", delayq.Attributes{}))
	must(q.Create(ctx, "jobs", delayq.Attributes{MaxReceives: 3, DeadLetter: "jobs-dead"}))
	must(q.Create(ctx, "emails", delayq.Attributes{}))
	for i := range 4 {
		_, err := q.Push(ctx, "jobs", fmt.Sprintf("resize image %d", i), delayq.PushOptions{})
		must(err)
	}
	_, err := q.Push(ctx, "jobs", "send report", delayq.PushOptions{Delay: 2 * time.Hour})
	must(err)
	_, err = q.Receive(ctx, "jobs", delayq.ReceiveOptions{N: 1, VT: time.Hour})
	must(err)
	l := shardlist.New(c, shardlist.Options{Prefix: prefix, ShardSize: 100})
	items := make([]string, 250)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	_, err = l.RPush(ctx, "events", items...)
	must(err)
	cs := chat.New(c, chat.Options{Prefix: prefix})
	hi := "hi"
	_, err = cs.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "ops", Message: &hi})
	must(err)
	_, err = cs.Create(ctx, chat.CreateRequest{From: "ann", To: []string{"bob"}, ID: "lunch", Message: &hi})
	must(err)
	return q
}

func testLimits() Limits {
	lim := DefaultLimits
	// A shared test server may hold many keys: finish the scan in one
	// refresh so the frames do not depend on it.
	lim.ScanCalls = 1 << 20
	return lim
}

func TestModel(t *testing.T) { redistest.Run(t, testModel) }

func testModel(t *testing.T, b redistest.Backend) {
	ctx := t.Context()
	q := fill(t, ctx, b.Client, b.Prefix)
	clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	col := newCollector(b.Client, "rsmq", b.Prefix, false, testLimits(), time.Second, clock.now)
	m := newModel(ctx, col, time.Second, plainStyles(), nil)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	step(t, m, m.refresh())

	// A second of traffic: 5 pushes to jobs, 2 receives from emails, 3
	// messages in chat ops.
	for i := range 5 {
		if _, err := q.Push(ctx, "jobs", fmt.Sprintf("more %d", i), delayq.PushOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, err := q.Push(ctx, "emails", "welcome", delayq.PushOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Receive(ctx, "emails", delayq.ReceiveOptions{N: 1, VT: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	cs := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
	for range 3 {
		if _, err := cs.Send(ctx, "ops", "joe", "status?"); err != nil {
			t.Fatal(err)
		}
	}
	clock.advance(time.Second)
	_, cmd := m.Update(tickMsg{m.tickGen})
	step(t, m, cmd)
	golden(t, "overview_80x24.txt", m.render())

	// Select jobs (the second queue by name) and open it.
	key(m, "j")
	if !strings.Contains(m.render(), "> jobs ") {
		t.Fatalf("j did not select jobs:\n%s", m.render())
	}
	step(t, m, key(m, "enter"))
	golden(t, "queue_80x24.txt", m.render())
	key(m, "esc")

	// A wide terminal, then a filter.
	m.Update(tea.WindowSizeMsg{Width: 132, Height: 30})
	golden(t, "overview_132x30.txt", m.render())
	step(t, m, key(m, "/", "d", "e", "a", "d", "enter"))
	v := m.render()
	if !strings.Contains(v, "QUEUES 1") || !strings.Contains(v, "> jobs-dead") || strings.Contains(v, "emails") {
		t.Errorf("filter dead:\n%s", v)
	}
	step(t, m, key(m, "esc"))
	if !strings.Contains(m.render(), "QUEUES 3") {
		t.Errorf("esc did not clear the filter:\n%s", m.render())
	}

	// q leaves.
	if cmd := key(m, "q"); cmd == nil || cmd() != tea.Quit() {
		t.Error("q does not quit")
	}
}

// Every line of every frame fits the terminal, down to 40 columns, and the
// frame has exactly the terminal's height.
func TestFramesFit(t *testing.T) {
	b := redistest.Embedded(t)
	ctx := t.Context()
	fill(t, ctx, b.Client, b.Prefix)
	clock := &fakeClock{t: time.Unix(0, 0)}
	m := newModel(ctx, newCollector(b.Client, "rsmq", b.Prefix, false, testLimits(), time.Second, clock.now), time.Second, plainStyles(), nil)
	step(t, m, m.refresh())
	m.Update(tea.WindowSizeMsg{Width: 0, Height: 0}) // some terminals say so at first
	if lines := strings.Split(m.render(), "\n"); len(lines) != 2 {
		t.Errorf("a 0x0 terminal: %d lines", len(lines))
	}
	for _, size := range [][2]int{{80, 24}, {40, 10}, {200, 60}, {60, 5}, {20, 2}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for _, open := range []bool{false, true} {
			if open {
				step(t, m, key(m, "enter"))
			}
			lines := strings.Split(m.render(), "\n")
			if len(lines) != size[1] {
				t.Errorf("%v open=%v: %d lines", size, open, len(lines))
			}
			for _, l := range lines {
				if w := lipgloss.Width(l); w > size[0] {
					t.Errorf("%v open=%v: line of width %d: %q", size, open, w, l)
				}
			}
			key(m, "esc")
		}
	}
}

// The view says "reconnecting" while the server is away and resumes when
// it is back.
func TestReconnect(t *testing.T) {
	redis.SetLogger(conn.QuietLogger{})
	s, err := embedded.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	ctx := t.Context()
	fill(t, ctx, c, "")
	clock := &fakeClock{t: time.Unix(0, 0)}
	m := newModel(ctx, newCollector(c, "rsmq", "", false, testLimits(), time.Second, clock.now), time.Second, plainStyles(), nil)
	step(t, m, m.refresh())

	s.Miniredis.Close()
	clock.advance(3 * time.Second)
	m.Update(m.refresh()())
	if v := m.render(); !strings.Contains(v, "reconnecting") || !strings.Contains(v, "jobs") {
		t.Errorf("server down: want reconnecting and the last numbers:\n%s", v)
	}
	if err := s.Miniredis.Restart(); err != nil {
		t.Fatal(err)
	}
	// The pool may hold a dead connection: the view keeps retrying until a
	// refresh succeeds (a deadline, not a sleep).
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.busy = false
		msg := m.refresh()().(snapMsg)
		m.Update(msg)
		if msg.err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no refresh after the restart: %v", msg.err)
		}
	}
	if v := m.render(); strings.Contains(v, "reconnecting") || !strings.Contains(v, "QUEUES 3") {
		t.Errorf("after the restart:\n%s", v)
	}
}

// Discovery is bounded: with one SCAN step per refresh over many keys the
// view says it is still scanning, and a refresh makes a bounded number of
// calls whatever the key count; the queues past --max-queues are counted
// but not read.
func TestBounded(t *testing.T) { redistest.Run(t, testBounded) }

func testBounded(t *testing.T, b redistest.Backend) {
	ctx := t.Context()
	fill(t, ctx, b.Client, b.Prefix)
	if _, err := b.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 3000 {
			p.Set(ctx, fmt.Sprintf("%sother:%d", b.Prefix, i), "x", 0)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
	for i := range 40 {
		if err := q.Create(ctx, fmt.Sprintf("q%02d", i), delayq.Attributes{}); err != nil {
			t.Fatal(err)
		}
	}
	lim := DefaultLimits
	lim.Queues, lim.Chats, lim.ScanCalls, lim.ScanCount = 10, 1, 1, 100
	col := newCollector(b.Client, "rsmq", b.Prefix, false, lim, time.Second, time.Now)
	s, err := col.snapshot(ctx, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	// The embedded server answers a whole SCAN at once, whatever COUNT.
	if b.Real() && s.KeysComplete || s.QueuesKnown != 43 || len(s.Queues) != 10 {
		t.Errorf("complete=%v known=%d shown=%d", s.KeysComplete, s.QueuesKnown, len(s.Queues))
	}
	// INFO, PING, SSCAN, a SCAN for lists and one for chats, one SCAN per
	// other queue kind, ≤2 per queue (those shown and as many swept),
	// 1 per list, 1 for the chats.
	if maxCalls := 5 + 3 + 2*2*lim.Queues + lim.Lists + 1; s.Calls > maxCalls {
		t.Errorf("%d calls, want at most %d", s.Calls, maxCalls)
	}
	m := newModel(ctx, col, time.Second, plainStyles(), s)
	if v := m.render(); !strings.Contains(v, "QUEUES 43 · the 10 most urgent shown (--max-queues)") || b.Real() && !strings.Contains(v, "scanning keys") {
		t.Errorf("the view does not say it is capped:\n%s", v)
	}
	// Enough refreshes finish the scan, and find the list and the chats.
	for range 100 {
		if s, err = col.snapshot(ctx, "", "", 0); err != nil {
			t.Fatal(err)
		}
		if s.KeysComplete {
			break
		}
	}
	if !s.KeysComplete || s.ListsKnown != 1 || s.Chats.Count != 2 {
		t.Errorf("after a full scan: complete=%v lists=%d chats=%d", s.KeysComplete, s.ListsKnown, s.Chats.Count)
	}
	// One chat per refresh, in turn: the next refresh reads the other.
	if s, err = col.snapshot(ctx, "", "", 0); err != nil {
		t.Fatal(err)
	}
	if s.Chats.Examined != 2 || s.Chats.Messages != 2 {
		t.Errorf("chats in turn: examined %d, messages %d", s.Chats.Examined, s.Chats.Messages)
	}
	m = newModel(ctx, col, time.Second, plainStyles(), s)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 24})
	if v := m.render(); !strings.Contains(v, "CHATS 2 · 2 messages stored · 1 read per refresh, in turn (--max-chats)") {
		t.Errorf("the view does not say the chats are capped:\n%s", v)
	}
}

func TestSparkline(t *testing.T) {
	for _, tt := range []struct {
		in    []float64
		width int
		want  string
	}{
		{nil, 5, ""},
		{[]float64{0, 0}, 4, "  ▁▁"},
		{[]float64{0, 7}, 2, "▁█"},
		{[]float64{1, 1, 3, 3}, 2, "▃█"},
	} {
		if got := sparkline(tt.in, tt.width); got != tt.want {
			t.Errorf("sparkline(%v, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}

// Text from the server reaches the terminal with its control characters
// escaped: a message body cannot clear the operator's screen.
func TestPrintable(t *testing.T) {
	b := redistest.Embedded(t)
	ctx := t.Context()
	q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
	if err := q.Create(ctx, "evil", delayq.Attributes{}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Push(ctx, "evil", "a\x1b[2Jb\x07c\u009bd", delayq.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	m := newModel(ctx, newCollector(b.Client, "rsmq", b.Prefix, false, testLimits(), time.Second, time.Now), time.Second, plainStyles(), nil)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 20})
	step(t, m, m.refresh())
	step(t, m, key(m, "enter"))
	v := m.render()
	if strings.ContainsAny(v, "\x1b\x07\u009b") || !strings.Contains(v, `a\x1b[2Jb\x07c\x9bd`) {
		t.Errorf("body not escaped:\n%q", v)
	}
}

// Through a network outage (every connection cut, then nothing answering)
// the view says "reconnecting" over the last numbers, on both backends, and
// resumes when the network is back.
func TestReconnectNetwork(t *testing.T) { redistest.Run(t, testReconnectNetwork) }

func testReconnectNetwork(t *testing.T, b redistest.Backend) {
	redis.SetLogger(conn.QuietLogger{})
	ctx := t.Context()
	fill(t, ctx, b.Client, b.Prefix)
	p, err := faultproxy.Start(b.Client.Options().Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	opt := *b.Client.Options()
	opt.Addr, opt.MaxRetries = p.Addr(), -1
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	c := redis.NewClient(&opt)
	defer c.Close()
	clock := &fakeClock{t: time.Unix(0, 0)}
	m := newModel(ctx, newCollector(c, "rsmq", b.Prefix, false, testLimits(), time.Second, clock.now), time.Second, plainStyles(), nil)
	step(t, m, m.refresh())

	p.Blackhole(true)
	p.CutAll()
	clock.advance(2 * time.Second)
	msg := m.refresh()().(snapMsg)
	if msg.err == nil {
		t.Fatal("a refresh through a blackhole succeeded")
	}
	m.Update(msg)
	if v := m.render(); !strings.Contains(v, "reconnecting (for 0s)") || !strings.Contains(v, "QUEUES 3") {
		t.Errorf("network down: want reconnecting and the last numbers:\n%s", v)
	}
	clock.advance(5 * time.Second)
	m.busy = false
	m.Update(m.refresh()())
	if v := m.render(); !strings.Contains(v, "reconnecting (for 5s)") {
		t.Errorf("still down: want how long:\n%s", v)
	}

	p.Blackhole(false)
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.busy = false
		msg := m.refresh()().(snapMsg)
		m.Update(msg)
		if msg.err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no refresh after the network came back: %v", msg.err)
		}
	}
	if v := m.render(); strings.Contains(v, "reconnecting") || !strings.Contains(v, "QUEUES 3") {
		t.Errorf("after the outage:\n%s", v)
	}
}
