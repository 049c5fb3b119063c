package snapshot

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/shardlist"
)

// queuesOnly reads queues, no lists or chats.
var queuesOnly = Limits{Queues: 1000, RegistryCalls: 2, ScanCount: 500}

// 200 queues are read in 13 round trips: INFO, PING, one SSCAN of the
// registry and 10 pipelines of 20 stats calls (the first time, the stats
// script is loaded too).
func TestRoundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
		for i := range 200 {
			a := delayq.Attributes{}
			if i%10 == 1 { // q001 dead-letters to q000, among the 200
				a = delayq.Attributes{MaxReceives: 3, DeadLetter: fmt.Sprintf("q%03d", i-1)}
			}
			if err := q.Create(ctx, fmt.Sprintf("q%03d", i), a); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := q.Push(ctx, "q000", "dead", delayq.PushOptions{}); err != nil {
			t.Fatal(err)
		}
		c := New(b.Client, Options{Prefix: b.Prefix, Limits: queuesOnly})
		for i := range 2 {
			s, err := c.Snapshot(ctx, "", "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Queues) != 200 || s.QueuesKnown != 200 || !s.QueuesComplete {
				t.Fatalf("%d queues read of %d known (complete %v)", len(s.Queues), s.QueuesKnown, s.QueuesComplete)
			}
			if d := s.Queues[1].DeadLetterDepth; d == nil || *d != 1 {
				t.Errorf("q001's dead-letter depth = %v, want 1", d)
			}
			// The first snapshot also loads the stats script.
			if i == 0 {
				t.Logf("first snapshot: %d round trips", s.RoundTrips)
			}
			// The embedded server's INFO does not name it: the first
			// snapshot asks HELLO once.
			// Each other queue kind's discovery: one call (a SCAN, or
			// its registry's SSCAN) that finds nothing here.
			kinds := len(c.kinds)
			want := 203 + kinds
			if i == 0 && !b.Real() {
				want++
			}
			if i == 1 && s.RoundTrips != 13+kinds || s.Calls != want {
				t.Errorf("snapshot %d: %d round trips and %d calls, want %d and %d", i, s.RoundTrips, s.Calls, 13+kinds, want)
			}
		}
	})
}

// A dead-letter queue that is not among the queues read is read for its
// depth with Options.DeadLetters, and only then.
func TestDeadLetters(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
		for _, name := range []string{"jobs-dead", "gone"} {
			if err := q.Create(ctx, name, delayq.Attributes{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct{ q, dlq string }{{"jobs", "jobs-dead"}, {"mail", "gone"}} {
			if err := q.Create(ctx, c.q, delayq.Attributes{MaxReceives: 1, DeadLetter: c.dlq}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := q.Delete(ctx, "gone", -1); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := q.Push(ctx, "jobs-dead", "x", delayq.PushOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		f, err := NewFilter([]string{"jobs", "mail"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, read := range []bool{false, true} {
			c := New(b.Client, Options{Prefix: b.Prefix, Limits: queuesOnly, Filter: f, DeadLetters: read})
			s, err := c.Snapshot(ctx, "", "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Queues) != 2 || s.Queues[0].Name != "jobs" || s.Queues[1].Name != "mail" {
				t.Fatalf("queues %+v", s.Queues)
			}
			jobs, mail := s.Queues[0], s.Queues[1]
			if mail.DeadLetterDepth != nil {
				t.Errorf("a missing dead-letter queue has depth %d", *mail.DeadLetterDepth)
			}
			switch {
			case read && (jobs.DeadLetterDepth == nil || *jobs.DeadLetterDepth != 2):
				t.Errorf("DeadLetters: jobs-dead's depth %v, want 2", jobs.DeadLetterDepth)
			case !read && jobs.DeadLetterDepth != nil:
				t.Errorf("jobs-dead read without DeadLetters")
			}
		}
	})
}

// Limits of 0 lists and chats leave their discovery out; a filter keeps
// what it matches among queues, lists and chats alike.
func TestLimitsAndFilter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
		for _, name := range []string{"app-a", "app-b", "other"} {
			if err := q.Create(ctx, name, delayq.Attributes{}); err != nil {
				t.Fatal(err)
			}
		}
		l := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix})
		for _, k := range []string{"app-events", "misc"} {
			if _, err := l.RPush(ctx, k, "x"); err != nil {
				t.Fatal(err)
			}
		}
		hi := "hi"
		if _, err := chat.New(b.Client, chat.Options{Prefix: b.Prefix}).Create(ctx, chat.CreateRequest{From: "a", To: []string{"b"}, ID: "app-ops", Message: &hi}); err != nil {
			t.Fatal(err)
		}
		c := New(b.Client, Options{Prefix: b.Prefix, Limits: queuesOnly})
		s, err := c.Snapshot(ctx, "", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		// INFO, PING, SSCAN and the stats of 3 queues, one discovery call
		// per other queue kind, no SCAN for lists or chats (and HELLO once
		// on the embedded server, whose INFO does not name it).
		want := 6 + len(c.kinds)
		if !b.Real() {
			want++
		}
		if s.Calls != want || len(s.Lists) != 0 || s.Chats.Count != 0 || !s.KeysComplete || s.ListsComplete || s.ChatsComplete {
			t.Errorf("queues only: %d calls, lists %v, chats %+v, complete %v/%v/%v", s.Calls, s.Lists, s.Chats, s.KeysComplete, s.ListsComplete, s.ChatsComplete)
		}
		f, err := NewFilter([]string{"app-*"}, []string{"*-b"})
		if err != nil {
			t.Fatal(err)
		}
		lim := queuesOnly
		lim.Lists, lim.Chats, lim.ScanCalls = 10, 10, 1<<20 // a shared server may hold many keys
		c = New(b.Client, Options{Prefix: b.Prefix, Limits: lim, Filter: f, Interval: time.Second})
		if s, err = c.Snapshot(ctx, "", "", 0); err != nil {
			t.Fatal(err)
		}
		if len(s.Queues) != 1 || s.Queues[0].Name != "app-a" || len(s.Lists) != 1 || s.Lists[0].Key != "app-events" || s.Chats.Count != 1 {
			t.Errorf("filtered: queues %+v, lists %+v, chats %+v", s.Queues, s.Lists, s.Chats)
		}
	})
}

func TestFilter(t *testing.T) {
	for _, tt := range []struct {
		include, exclude []string
		name             string
		want             bool
	}{
		{nil, nil, "anything", true},
		{[]string{"jobs"}, nil, "jobs", true},
		{[]string{"jobs"}, nil, "jobs2", false},
		{[]string{"app-*"}, nil, "app-", true},
		{[]string{"app-*"}, nil, "xapp-1", false},
		{[]string{"a?c"}, nil, "abc", true},
		{[]string{"a?c"}, nil, "ac", false},
		{[]string{"q[0-9]"}, nil, "q7", true},
		{[]string{"q[0-9]"}, nil, "qa", false},
		{[]string{"q[^0-9]"}, nil, "qa", true},
		{[]string{"q[!0-9]"}, nil, "q1", false},
		{[]string{"q[ab-]"}, nil, "q-", true},
		{[]string{`a\*`}, nil, "a*", true},
		{[]string{`a\*`}, nil, "ab", false},
		{[]string{"*/*"}, nil, "a/b/c", true}, // * crosses /, as in Redis
		{[]string{"a.b"}, nil, "axb", false},  // . is a character
		{[]string{"x", "y*"}, nil, "yes", true},
		{nil, []string{"*-dead"}, "jobs-dead", false},
		{nil, []string{"*-dead"}, "jobs", true},
		{[]string{"app-*"}, []string{"app-test*"}, "app-test1", false},
		{[]string{"é*"}, nil, "été", true},
	} {
		f, err := NewFilter(tt.include, tt.exclude)
		if err != nil {
			t.Fatalf("%v %v: %v", tt.include, tt.exclude, err)
		}
		if got := f.Match(tt.name); got != tt.want {
			t.Errorf("include %q exclude %q: Match(%q) = %v, want %v", tt.include, tt.exclude, tt.name, got, tt.want)
		}
	}
	if !(*Filter)(nil).Match("x") {
		t.Error("the nil Filter refused a name")
	}
	for _, bad := range []string{"a[b", `a\`, "a[]"} {
		if _, err := NewFilter([]string{bad}, nil); err == nil {
			t.Errorf("glob %q accepted", bad)
		}
	}
}

// NoRates keeps no counters or history for the queues' rates (chatq
// metrics, refreshed by each scrape, whose history would grow with the
// scrape rate); without it the second snapshot has a rate.
func TestNoRates(t *testing.T) {
	b := redistest.Embedded(t)
	ctx := context.Background()
	q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
	if err := q.Create(ctx, "jobs", delayq.Attributes{}); err != nil {
		t.Fatal(err)
	}
	for _, noRates := range []bool{false, true} {
		now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
		c := New(b.Client, Options{Prefix: b.Prefix, Limits: queuesOnly, NoRates: noRates, Clock: func() time.Time { return now }})
		var s *Snapshot
		for range 3 {
			if _, err := q.Push(ctx, "jobs", "x", delayq.PushOptions{}); err != nil {
				t.Fatal(err)
			}
			var err error
			if s, err = c.Snapshot(ctx, "", "", 0); err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Second)
		}
		r := s.Queues[0]
		if got := r.PushRate != nil || len(r.PushHistory) > 0 || len(c.rates) > 0 || len(c.prev) > 0; got == noRates {
			t.Errorf("NoRates %v: push rate %v, history %v, %d histories and %d counters kept", noRates, r.PushRate, r.PushHistory, len(c.rates), len(c.prev))
		}
	}
}
