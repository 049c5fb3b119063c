package delayq_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// waitServer polls the server's clock until d has passed since from (by
// the server's time), failing after a deadline.
func waitServer(t *testing.T, b redistest.Backend, from time.Time, d time.Duration) time.Time {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		tm, err := b.Client.Time(context.Background()).Result()
		if err != nil {
			t.Fatal(err)
		}
		if tm.Sub(from) > d {
			return tm
		}
		if time.Now().After(deadline) {
			t.Fatal("server clock does not advance")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// searchIDs runs Peek and Export with opt and returns the ids each found,
// sorted, and what each reported as examined; it fails when they differ
// (the queue does not change while they run).
func searchIDs(t *testing.T, c *delayq.Client, q string, opt delayq.PeekOptions) ([]string, int) {
	t.Helper()
	ctx := context.Background()
	peekExamined, exportExamined := 0, 0
	popt := opt
	if popt.N == 0 {
		popt.N = 1 << 20
	}
	popt.Progress = func(examined, kept int) { peekExamined = examined }
	ps, err := c.Peek(ctx, q, popt)
	if err != nil {
		t.Fatal(err)
	}
	var peeked, exported []string
	for _, p := range ps {
		peeked = append(peeked, p.ID)
	}
	eopt := opt
	eopt.Progress = func(examined, kept int) { exportExamined = examined }
	n, err := c.Export(ctx, q, eopt, func(page []delayq.Message) error {
		for _, p := range page {
			exported = append(exported, p.ID)
		}
		return nil
	})
	if err != nil || n != len(exported) {
		t.Fatalf("export: %d %v, passed %d", n, err, len(exported))
	}
	slices.Sort(peeked)
	slices.Sort(exported)
	if opt.N == 0 && !slices.Equal(peeked, exported) {
		t.Fatalf("%+v: peek found %v, export %v", opt, peeked, exported)
	}
	if opt.State == "" && opt.InFlightFor == 0 && peekExamined != exportExamined {
		// Without a state both walk every message.
		t.Fatalf("%+v: peek examined %d, export %d", opt, peekExamined, exportExamined)
	}
	return peeked, peekExamined
}

func TestSearch(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		// Bodies with Lua's pattern characters: a plain substring must find
		// them as they are.
		old := mustPush(t, c, "q", `{"order":4711,"note":"50% (a.b)"}`, delayq.PushOptions{})
		waitServer(t, b, sentAt(old), 300*time.Millisecond)
		var filler []string
		for i := range 1500 { // more than one call examines
			filler = append(filler, mustPush(t, c, "q", "filler "+strings.Repeat("x", i%7), delayq.PushOptions{}))
		}
		held := mustPush(t, c, "q", `{"order":4711,"held":true}`, delayq.PushOptions{})
		later := mustPush(t, c, "q", `{"order":47110}`, delayq.PushOptions{Delay: time.Hour})
		// Receive the first 1,503 due messages (old, the filler and held)
		// and give all but held back: held is in flight with rc 1, the
		// others ready, received once.
		for got := 0; got < 1502; {
			r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{N: 100, VT: time.Hour})
			if err != nil || len(r) == 0 {
				t.Fatal(r, err)
			}
			got += len(r)
		}
		if _, err := c.Retry(ctx, "q", 0, append([]string{old}, filler...)...); err != nil {
			t.Fatal(err)
		}
		total := 1503
		sorted := func(s ...string) []string { s = slices.Clone(s); slices.Sort(s); return s }

		for _, tc := range []struct {
			name string
			opt  delayq.PeekOptions
			want []string
		}{
			{"substring", delayq.PeekOptions{Grep: "4711"}, sorted(old, held, later)},
			{"pattern characters as they are", delayq.PeekOptions{Grep: "50% (a.b)"}, sorted(old)},
			{"a Lua pattern is not one", delayq.PeekOptions{Grep: "47%d"}, nil},
			{"part of an id", delayq.PeekOptions{Grep: held[10:20]}, sorted(held)},
			{"with a state", delayq.PeekOptions{Grep: "4711", State: "inflight"}, sorted(held)},
			{"delayed", delayq.PeekOptions{Grep: "4711", State: "delayed"}, sorted(later)},
			{"ready", delayq.PeekOptions{Grep: `"order":4711,`, State: "ready"}, sorted(old)},
			{"a regular expression", delayq.PeekOptions{Regexp: regexp.MustCompile(`"order":4711[,}]`)}, sorted(old, held)},
			{"a regular expression and a substring", delayq.PeekOptions{Grep: "held", Regexp: regexp.MustCompile(`4711`)}, sorted(held)},
			{"nothing", delayq.PeekOptions{Grep: "no such text"}, nil},
		} {
			got, examined := searchIDs(t, c, "q", tc.opt)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: found %v, want %v", tc.name, got, tc.want)
			}
			if tc.opt.State == "" && examined != total {
				t.Errorf("%s: examined %d, want %d", tc.name, examined, total)
			}
		}
		// The age cuts in the middle of the 300 ms after old was sent (the
		// server's time at the call is a few ms after this one's).
		tm, err := b.Client.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		age := tm.Sub(sentAt(old).Add(150 * time.Millisecond))
		if got, _ := searchIDs(t, c, "q", delayq.PeekOptions{Grep: "4711", OlderThan: age}); !slices.Equal(got, []string{old}) {
			t.Errorf("with an age: found %v, want %v", got, old)
		}
		// Only matches are returned, and -n stops early.
		ps, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 1, Grep: "filler"})
		if err != nil || len(ps) != 1 || !strings.HasPrefix(ps[0].Body, "filler") {
			t.Fatalf("peek -n 1 = %v %v", ps, err)
		}
		n, err := c.Export(ctx, "q", delayq.PeekOptions{N: 10, Grep: "filler"}, func([]delayq.Message) error { return nil })
		if err != nil || n != 10 {
			t.Fatalf("export -n 10 passed %d, %v", n, err)
		}
		for _, bad := range []delayq.PeekOptions{
			{N: 1, MinReceives: -1},
			{N: 1, InFlightFor: -time.Second},
			{N: 1, InFlightFor: time.Second, State: "ready"},
			{N: 1, Grep: "\xff"},
		} {
			if _, err := c.Peek(ctx, "q", bad); !errors.Is(err, delayq.ErrInvalid) {
				t.Errorf("peek %+v: %v, want ErrInvalid", bad, err)
			}
			if _, err := c.Export(ctx, "q", bad, func([]delayq.Message) error { return nil }); !errors.Is(err, delayq.ErrInvalid) {
				t.Errorf("export %+v: %v, want ErrInvalid", bad, err)
			}
		}
	})
}

// A search through big bodies reads about a MiB per call, whatever the
// bodies: it takes several calls and finds what is there.
func TestSearchBigBodies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{MaxSize: -1})
		big := strings.Repeat("y", 60000)
		var want []string
		for i := range 60 {
			body := big
			if i%20 == 19 {
				body = big + " needle"
			}
			id := mustPush(t, c, "q", body, delayq.PushOptions{})
			if i%20 == 19 {
				want = append(want, id)
			}
		}
		calls := 0
		ps, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 10, Grep: "needle", Progress: func(int, int) { calls++ }})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.ID)
		}
		if !slices.Equal(got, want) || calls < 3 {
			t.Fatalf("found %v in %d calls, want %v in at least 3 (60 bodies of 60 kB, a MiB per call)", got, calls, want)
		}
	})
}

func TestSelectInFlight(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		// first: received once long ago; twice: received three times, the
		// first long ago; fresh: received once just now; back: received
		// long ago and given back (ready).
		first := mustPush(t, c, "q", "first", delayq.PushOptions{})
		twice := mustPush(t, c, "q", "twice", delayq.PushOptions{})
		back := mustPush(t, c, "q", "back", delayq.PushOptions{})
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{N: 3, VT: time.Hour})
		if err != nil || len(r) != 3 {
			t.Fatal(r, err)
		}
		for range 2 {
			if _, err := c.ChangeVisibility(ctx, "q", twice, 0); err != nil {
				t.Fatal(err)
			}
			if r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: time.Hour}); err != nil || len(r) != 1 || r[0].ID != twice {
				t.Fatal(r, err)
			}
		}
		waitServer(t, b, r[0].FR, 300*time.Millisecond)
		fresh := mustPush(t, c, "q", "fresh", delayq.PushOptions{Delay: -1})
		if r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: time.Hour}); err != nil || len(r) != 1 || r[0].ID != fresh {
			t.Fatal(r, err)
		}
		if _, err := c.ChangeVisibility(ctx, "q", back, 0); err != nil {
			t.Fatal(err)
		}
		sorted := func(s ...string) []string { s = slices.Clone(s); slices.Sort(s); return s }
		for _, tc := range []struct {
			name string
			opt  delayq.PeekOptions
			want []string
		}{
			{"in flight for 150ms", delayq.PeekOptions{InFlightFor: 150 * time.Millisecond}, sorted(first, twice)},
			{"in flight for 150ms, state given", delayq.PeekOptions{State: "inflight", InFlightFor: 150 * time.Millisecond}, sorted(first, twice)},
			{"received at least 3 times", delayq.PeekOptions{MinReceives: 3}, sorted(twice)},
			{"received at least twice, in flight", delayq.PeekOptions{State: "inflight", MinReceives: 2}, sorted(twice)},
			{"received at least once", delayq.PeekOptions{MinReceives: 1}, sorted(first, twice, back, fresh)},
			{"in flight for an hour", delayq.PeekOptions{InFlightFor: time.Hour}, nil},
		} {
			if got, _ := searchIDs(t, c, "q", tc.opt); !slices.Equal(got, tc.want) {
				t.Errorf("%s: found %v, want %v (first %s, twice %s, back %s, fresh %s)", tc.name, got, tc.want, first, twice, back, fresh)
				for _, id := range got {
					m, err := c.Get(ctx, "q", id)
					t.Logf("%s: %+v %v", id, m, err)
				}
			}
		}
	})
}
