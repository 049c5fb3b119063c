package delayq_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/delayq/delayqtest"
	"github.com/redis/go-redis/v9"
)

// exportAll returns every message Export passes, by id, and the number of
// pages, failing on an id passed twice.
func exportAll(t *testing.T, c *delayq.Client, q string) (map[string]delayq.Message, int) {
	t.Helper()
	got := map[string]delayq.Message{}
	pages := 0
	n, err := c.Export(context.Background(), q, delayq.PeekOptions{}, func(page []delayq.Message) error {
		pages++
		for _, p := range page {
			if _, dup := got[p.ID]; dup {
				return fmt.Errorf("message %s exported twice", p.ID)
			}
			got[p.ID] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(got) {
		t.Fatalf("Export passed %d messages, says %d", len(got), n)
	}
	return got, pages
}

func toImport(ps map[string]delayq.Message) []delayq.Message {
	var out []delayq.Message
	for _, p := range ps {
		out = append(out, delayq.Message{ID: p.ID, Body: p.Body, VisibleAt: p.VisibleAt, RC: p.RC, FR: p.FR,
			DeadLetteredFrom: p.DeadLetteredFrom, DeadLetteredRC: p.DeadLetteredRC, DeadLetteredAt: p.DeadLetteredAt})
	}
	return out
}

func importAll(t *testing.T, c *delayq.Client, q string, msgs []delayq.Message) *delayq.ImportResult {
	t.Helper()
	total := &delayq.ImportResult{}
	for start := 0; start < len(msgs); start += 100 {
		r, err := c.Import(context.Background(), q, msgs[start:min(start+100, len(msgs))])
		if err != nil {
			t.Fatal(err)
		}
		total.Imported += r.Imported
		total.Present = append(total.Present, r.Present...)
		total.Conflicts = append(total.Conflicts, r.Conflicts...)
	}
	return total
}

// queueState is everything of a queue's messages in Redis: per id its
// score, body, rc and fr fields and its index entry.
func queueState(t *testing.T, b redistest.Backend, q string) map[string]string {
	t.Helper()
	ctx := context.Background()
	k := b.Prefix + "rsmq:" + q
	out := map[string]string{}
	zs, err := b.Client.ZRangeWithScores(ctx, k, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range zs {
		id := z.Member.(string)
		f := b.Client.HMGet(ctx, k+":Q", id, id+":rc", id+":fr").Val()
		r, rerr := b.Client.ZScore(ctx, k+":R", id).Result()
		idx := "-"
		if rerr == nil {
			idx = fmt.Sprint(int64(r))
		}
		out[id] = fmt.Sprintf("%d %q %v %v %s", int64(z.Score), f[0], f[1], f[2], idx)
	}
	return out
}

func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "src", delayq.Attributes{VT: time.Hour})
		// All three states, a body with newlines, and one that is not UTF-8
		// (written by another client).
		mustPush(t, c, "src", "ready\nwith two lines", delayq.PushOptions{})
		mustPush(t, c, "src", "delayed", delayq.PushOptions{Delay: time.Hour})
		mustPush(t, c, "src", "taken", delayq.PushOptions{})
		if r, err := c.Receive(ctx, "src", delayq.ReceiveOptions{N: 1}); err != nil || len(r) != 1 {
			t.Fatalf("receive: %v %v", r, err)
		}
		raw := "0000000000rawrawrawrawrawrawrawra"[:32]
		b.Client.ZAdd(ctx, b.Prefix+"rsmq:src", redis.Z{Score: 1, Member: raw})
		b.Client.HSet(ctx, b.Prefix+"rsmq:src:Q", raw, "\xff\xfebin")
		// Many messages of one score (one millisecond), some received.
		if err := delayqtest.Fill(ctx, c, "src", 2500, delayqtest.FillOptions{Ready: 2, InFlight: 1}); err != nil {
			t.Fatal(err)
		}
		got, pages := exportAll(t, c, "src")
		if len(got) != 2504 {
			t.Fatalf("exported %d messages in %d pages, want 2504", len(got), pages)
		}
		if b.Real() && pages < 3 {
			t.Errorf("exported in %d pages: want pages of about 1,000", pages)
		}
		states := map[string]int{}
		for _, p := range got {
			states[p.State]++
		}
		if states["ready"] != 1669 || states["delayed"] != 1 || states["inflight"] != 834 {
			t.Errorf("states %v", states)
		}
		if got[raw].Body != "\xff\xfebin" {
			t.Errorf("raw body %q", got[raw].Body)
		}

		mustCreate(t, c, "dst", delayq.Attributes{})
		r := importAll(t, c, "dst", toImport(got))
		if r.Imported != 2504 || len(r.Present) != 0 || len(r.Conflicts) != 0 {
			t.Fatalf("import: %+v", r)
		}
		want, have := queueState(t, b, "src"), queueState(t, b, "dst")
		if len(want) != len(have) {
			t.Fatalf("%d messages in src, %d in dst", len(want), len(have))
		}
		for id, w := range want {
			if have[id] != w {
				t.Fatalf("message %s: src %s, dst %s", id, w, have[id])
			}
		}
		s, err := c.Stats(ctx, "dst")
		if err != nil {
			t.Fatal(err)
		}
		if s.Messages != 2504 || s.InFlight != 834 || s.Delayed != 1 || s.TotalSent != 2504 || s.TotalRecv != 0 || !s.SplitExact {
			t.Errorf("dst stats %+v", s)
		}

		// Again: everything is there already, nothing changes.
		before := dump(t, b.Client, b.Prefix+"rsmq:dst")
		r = importAll(t, c, "dst", toImport(got))
		if r.Imported != 0 || len(r.Present) != 2504 || len(r.Conflicts) != 0 {
			t.Fatalf("second import: imported %d, present %d, conflicts %d", r.Imported, len(r.Present), len(r.Conflicts))
		}
		if after := dump(t, b.Client, b.Prefix+"rsmq:dst"); after != before {
			t.Errorf("a second import changed the queue")
		}
	})
}

func TestImportRefuses(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{MaxSize: 1024})
		id := mustPush(t, c, "q", "original", delayq.PushOptions{})
		now := time.Now()
		fresh := "0000000001" + "abcdefghijABCDEFGHIJ01"
		before := dump(t, b.Client, b.Prefix)

		// A conflict is left alone and reported; the rest of the batch is imported.
		r, err := c.Import(ctx, "q", []delayq.Message{{ID: id, Body: "changed", VisibleAt: now}, {ID: fresh, Body: "new", VisibleAt: now}})
		if err != nil || r.Imported != 1 || len(r.Conflicts) != 1 || r.Conflicts[0] != id {
			t.Fatalf("conflict: %+v %v", r, err)
		}
		if body := b.Client.HGet(ctx, b.Prefix+"rsmq:q:Q", id).Val(); body != "original" {
			t.Fatalf("conflict overwrote the body: %q", body)
		}
		before = dump(t, b.Client, b.Prefix)
		for name, msgs := range map[string][]delayq.Message{
			"too long":    {{ID: "0000000002" + "abcdefghijABCDEFGHIJ01", Body: "ok", VisibleAt: now}, {ID: "0000000003" + "abcdefghijABCDEFGHIJ01", Body: string(make([]byte, 1025)), VisibleAt: now}},
			"bad id":      {{ID: "short", Body: "x", VisibleAt: now}},
			"twice":       {{ID: fresh, Body: "x", VisibleAt: now}, {ID: fresh, Body: "x", VisibleAt: now}},
			"no due":      {{ID: "0000000004" + "abcdefghijABCDEFGHIJ01", Body: "x"}},
			"negative rc": {{ID: "0000000005" + "abcdefghijABCDEFGHIJ01", Body: "x", VisibleAt: now, RC: -1}},
		} {
			if _, err := c.Import(ctx, "q", msgs); !errors.Is(err, delayq.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if _, err := c.Import(ctx, "nosuch", []delayq.Message{{ID: fresh, Body: "x", VisibleAt: now}}); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Errorf("missing queue: %v", err)
		}
		if after := dump(t, b.Client, b.Prefix); after != before {
			t.Errorf("a refused import wrote:\n%s\nwant\n%s", after, before)
		}
	})
}

// TestExportLive: consumers receive and ack while an export runs; every
// message present for the whole export is exported, and ids exported
// twice (possible only when the hash shrinks) are counted.
func TestExportLive(t *testing.T) {
	b := redistest.Real(t)
	ctx := context.Background()
	c := newClient(t, b)
	mustCreate(t, c, "live", delayq.Attributes{VT: time.Hour})
	const n = 5000
	if err := delayqtest.Fill(ctx, c, "live", n, delayqtest.FillOptions{Ready: 1}); err != nil {
		t.Fatal(err)
	}
	// The first 200 by due time are consumed during the export (received,
	// half of them acked); the others stay for the whole export.
	first, err := c.Peek(ctx, "live", delayq.PeekOptions{N: 200})
	if err != nil {
		t.Fatal(err)
	}
	consumed := map[string]bool{}
	for _, p := range first {
		consumed[p.ID] = true
	}
	seen := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Go(func() {
		<-start
		for i := 0; i < 20; i++ {
			r, err := c.Receive(ctx, "live", delayq.ReceiveOptions{N: 10})
			if err != nil {
				t.Error(err)
				return
			}
			for j, m := range r {
				if j%2 == 0 {
					c.Ack(ctx, "live", m.Receipt)
				}
			}
		}
	})
	pages := 0
	_, err = c.Export(ctx, "live", delayq.PeekOptions{}, func(page []delayq.Message) error {
		if pages++; pages == 1 {
			close(start)
		}
		for _, p := range page {
			seen[p.ID]++
		}
		return nil
	})
	if pages == 0 {
		close(start)
	}
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	missing, twice := 0, 0
	all := b.Client.ZRange(ctx, b.Prefix+"rsmq:live", 0, -1).Val()
	for _, id := range all {
		if !consumed[id] && seen[id] == 0 {
			missing++
		}
	}
	for _, k := range seen {
		if k > 1 {
			twice++
		}
	}
	t.Logf("live export of %d messages in %d pages: %d exported, %d twice", n, pages, len(seen), twice)
	if missing > 0 {
		t.Errorf("%d messages present for the whole export were not exported", missing)
	}
}
