//go:build !race

package top

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/chatq-dev/chatq/internal/testkit/memtest"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// A long-running top keeps no memory per refresh: 1e4 refreshes (a fake
// clock a second apart) of a server whose queues come and go (one lives for
// ten refreshes) while messages are pushed, received and sent, and the heap
// after them is within a bound of the heap after 1e3 (see memtest.Flat).
// Not under the race detector, whose bookkeeping is not top's.
func TestRefreshMemoryIsFlat(t *testing.T) {
	s := redistest.StartServer(t, "--appendonly", "no")
	rdb := s.Client()
	ctx := t.Context()
	q := fill(t, ctx, rdb, "m:")
	cs := chat.New(rdb, chat.Options{Prefix: "m:"})
	clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	col := newCollector(rdb, "rsmq", "m:", false, DefaultLimits, time.Second, clock.now)
	m := newModel(ctx, col, time.Second, plainStyles(), nil)
	m.Update(tea.WindowSizeMsg{Width: 132, Height: 40})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	refresh := func(i int) {
		if i%10 == 0 {
			must(q.Create(ctx, fmt.Sprintf("tmp-%d", i), delayq.Attributes{}))
			if i >= 10 {
				_, err := q.Delete(ctx, fmt.Sprintf("tmp-%d", i-10), -1)
				must(err)
			}
		}
		_, err := q.Push(ctx, "emails", "welcome", delayq.PushOptions{})
		must(err)
		_, err = q.Receive(ctx, "emails", delayq.ReceiveOptions{N: 1})
		must(err)
		_, err = cs.Send(ctx, "ops", "joe", "status?")
		must(err)
		clock.advance(time.Second)
		_, cmd := m.Update(tickMsg{m.tickGen})
		step(t, m, cmd)
		_ = m.render()
	}
	const n = 10_000
	for i := range n / 10 {
		refresh(i)
	}
	early := memtest.Take()
	for i := n / 10; i < n; i++ {
		refresh(i)
	}
	late := memtest.Take()
	memtest.Flat(t, "top, refreshes", n, early, late)
}
